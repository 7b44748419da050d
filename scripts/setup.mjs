#!/usr/bin/env node
// Zero-dependency setup run by `npm start` and `npm test`: installs what a fresh machine
// lacks (Node 24, npm dependencies, Debian chromium, chromium-headless-shell and xvfb, iproute2, python3, and search
// permission above the checkout for embedded Postgres's user) and is a fast no-op when
// everything is there.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureNode24, node24Env } from './node24.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const say = (msg) => process.stderr.write(`setup: ${msg}\n`)
const isRoot = process.getuid?.() === 0

/**
 * What node_modules was installed from: the lock file and package.json's dependency fields.
 * Only those: an edit to package.json's scripts or engines must not reinstall everything.
 */
function depsStamp() {
  const h = createHash('sha256')
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  h.update(JSON.stringify(['dependencies', 'devDependencies', 'optionalDependencies', 'overrides', 'allowScripts'].map((k) => pkg[k] ?? null)))
  if (existsSync(join(root, 'package-lock.json'))) h.update(readFileSync(join(root, 'package-lock.json')))
  return h.digest('hex')
}

function ensureNodeModules() {
  const stampFile = join(root, 'node_modules', '.nightjar-deps')
  const want = depsStamp()
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === want) return
  say('installing npm dependencies (node_modules is missing or stale)…')
  const cmd = existsSync(join(root, 'package-lock.json')) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']
  const r = spawnSync('npm', cmd, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: node24Env() })
  if (r.status !== 0) {
    say(`npm ${cmd[0]} failed (exit ${r.status}); fix the error above and run again`)
    process.exit(1)
  }
  writeFileSync(stampFile, want)
}

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0
}

let aptUpdated = false
function aptInstall(pkgs, why) {
  if (!isRoot || !have('apt-get')) {
    say(`missing ${pkgs.join(', ')} (${why}). Install with: sudo apt-get install -y ${pkgs.join(' ')}`)
    return false
  }
  say(`installing ${pkgs.join(', ')} with apt-get (${why})…`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  if (!aptUpdated) {
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env })
    aptUpdated = true
  }
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { stdio: ['ignore', 'ignore', 'inherit'], env })
  return true
}

function ensureSystemPackages() {
  const chromium = process.env.NIGHTJAR_CHROMIUM_PATH || '/usr/bin/chromium'
  const missing = []
  if (!existsSync(chromium)) missing.push('chromium')
  // what the browser-pod image runs for headless sessions: the test node runs that image's program
  if (!existsSync('/usr/lib/chromium/chromium-headless-shell')) missing.push('chromium-headless-shell')
  if (!have('Xvfb')) missing.push('xvfb')
  if (!have('ip')) missing.push('iproute2')
  // session videos are encoded by Debian's ffmpeg (browser-pod/video.ts); it does not pull in nodejs
  if (!have('ffmpeg')) missing.push('ffmpeg')
  if (missing.length) aptInstall(missing, 'browser pods, cloak sessions, session videos and network tests need them')
  // python3, not python3-minimal: the SDK needs json and urllib, which are not in the minimal set
  if (!have('python3')) aptInstall(['python3'], "the Python SDK's tests run it")
}

/**
 * As root, two kinds of process run as users of their own: embedded Postgres (it refuses
 * root) and the browser pods (Chromium's sandbox refuses root; operator/embedded/pod-users.ts).
 * Each must pass through every folder above what it runs: the checkout (sources,
 * node_modules, Postgres's data dir) and, for the pods, the Node binary. A checkout inside
 * `mktemp -d` (mode 0700), or Node under /root, is not passable: add the search bit for
 * others there — never read or write — and say so.
 */
function ensureUnprivilegedCanReach(path, who) {
  if (!isRoot) return
  for (let dir = path; ; dir = dirname(dir)) {
    const mode = statSync(dir).mode & 0o7777
    if (!(mode & 0o001)) {
      chmodSync(dir, mode | 0o001)
      say(`made ${dir} passable for ${who} (search permission for others, mode ${(mode | 0o001).toString(8)})`)
    }
    if (dirname(dir) === dir) break
  }
}

const node24 = ensureNode24()
ensureNodeModules()
ensureSystemPackages()
ensureUnprivilegedCanReach(root, 'the embedded Postgres user and the browser pods')
ensureUnprivilegedCanReach(dirname(node24), 'the browser pods')
