#!/usr/bin/env node
// Builds the Kubernetes 1.20.2 binaries the cluster tests (and, with --node, the real node)
// run on, from Debian bookworm's own source package, since no Kubernetes binary can be
// downloaded here: sources pinned by sha256, two vendored libraries swapped for Debian's
// (the vendored ones crash on Go ≥ 1.18), cached by the source's hash.
// Cache: $NIGHTJAR_KUBE_CACHE; prints the bin directory. Recipe: docs/cluster.md#how-the-binaries-are-built
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export const KUBE_SOURCE = {
  name: 'kubernetes',
  version: '1.20.5+really1.20.2-1.1+deb12u1',
  gitVersion: 'v1.20.2',
  files: {
    'kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc': '19fa1da5aefcef673894ac9511986bd98a14410cf8eea0b626613c30df435257',
    'kubernetes_1.20.5+really1.20.2.orig.tar.gz': 'b83c0780efb182d928dc63d46488a847f161f04e40a94b96bf5247dd671ecdfc',
    'kubernetes_1.20.5+really1.20.2-1.1+deb12u1.debian.tar.xz': '9b6e5fd41769d2b5badf2e73b274e3bcd90f85e13d06a1a4a845ccce018127d8',
  },
}
export const CONTROL_PLANE_BINARIES = ['kube-apiserver', 'kube-controller-manager']
// a real node: the kubelet, kube-proxy, and the scheduler that binds Pods to it (the test node binds its own)
export const NODE_BINARIES = ['kubelet', 'kube-proxy', 'kube-scheduler']
/** build/pause's version in this tree (its Makefile's TAG) */
export const PAUSE_VERSION = 'v3.4'
const APT_PACKAGES = ['golang-go', 'rsync', 'dpkg-dev', 'golang-github-modern-go-reflect2-dev', 'golang-github-json-iterator-go-dev', 'etcd-server', 'openssl']
const REPLACED = ['github.com/modern-go/reflect2', 'github.com/json-iterator/go']
const SOURCES = [
  'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main',
  'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main',
]

const say = (msg) => process.stderr.write(`fetch-kube: ${msg}\n`)
const fail = (why) => {
  say(`cannot build the Kubernetes control plane: ${why}`)
  process.exit(1)
}
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts })
const have = (cmd) => run('sh', ['-c', `command -v ${cmd}`]).status === 0
const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

/** the cache key: every pinned source file's digest, so a new pin builds anew */
const sourceKey = createHash('sha256').update(Object.values(KUBE_SOURCE.files).join('\n')).digest('hex').slice(0, 16)
export const cacheRoot = process.env.NIGHTJAR_KUBE_CACHE || join(homedir(), '.cache', 'nightjar', 'kube')
export const binDir = join(cacheRoot, `${KUBE_SOURCE.gitVersion}-${sourceKey}`, 'bin')

const missingFrom = (wanted) => wanted.filter((b) => !existsSync(join(binDir, b)))

function aptInstall(pkgs) {
  if (process.getuid?.() !== 0 || !have('apt-get')) fail(`missing ${pkgs.join(', ')}; install them with: sudo apt-get install -y ${pkgs.join(' ')}`)
  say(`installing ${pkgs.join(', ')} with apt-get…`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  run('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  const r = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) fail(`apt-get install ${pkgs.join(' ')} failed`)
}

function ensureTools() {
  const missing = APT_PACKAGES.filter((p) => {
    if (p === 'golang-go') return !have('go')
    if (p === 'etcd-server') return !have('etcd')
    if (p === 'dpkg-dev') return !have('dpkg-source')
    if (p === 'rsync' || p === 'openssl') return !have(p)
    return !existsSync(`/usr/share/gocode/src/${p.includes('reflect2') ? REPLACED[0] : REPLACED[1]}`)
  })
  if (missing.length) aptInstall(missing)
  // Debian's etcd-server starts a system etcd on install; the tests run their own on
  // other ports, and a stray one only costs memory. Stop it where an init system runs it.
  if (have('systemctl')) run('systemctl', ['disable', '--now', 'etcd'], { stdio: 'ignore' })
}

function fetchSource(work) {
  const apt = join(work, 'apt')
  mkdirSync(join(apt, 'lists', 'partial'), { recursive: true })
  writeFileSync(join(apt, 'sources.list'), SOURCES.join('\n') + '\n')
  const opts = [
    '-o', `Dir::Etc::SourceList=${join(apt, 'sources.list')}`,
    '-o', 'Dir::Etc::SourceParts=/dev/null',
    '-o', `Dir::State::Lists=${join(apt, 'lists')}`,
  ]
  say('reading the bookworm source index (private apt configuration)…')
  const upd = run('apt-get', [...opts, 'update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] })
  if (upd.status !== 0) fail('apt-get update of the deb-src index failed')
  const src = join(work, 'src')
  mkdirSync(src, { recursive: true })
  say(`downloading source package ${KUBE_SOURCE.name}=${KUBE_SOURCE.version} (34 MB)…`)
  const get = run('apt-get', [...opts, 'source', '--download-only', '-qq', `${KUBE_SOURCE.name}=${KUBE_SOURCE.version}`], { cwd: src, stdio: ['ignore', 'ignore', 'inherit'] })
  if (get.status !== 0) fail('apt-get source failed')
  for (const [file, want] of Object.entries(KUBE_SOURCE.files)) {
    const path = join(src, file)
    if (!existsSync(path)) fail(`the source package has no ${file}`)
    const got = sha256(path)
    if (got !== want) fail(`sha256 mismatch for ${file}: got ${got}, pinned ${want}`)
  }
  say('sha256 of every source file matches the pins; unpacking…')
  const dsc = Object.keys(KUBE_SOURCE.files).find((f) => f.endsWith('.dsc'))
  const x = run('dpkg-source', ['-x', '--no-check', dsc, 'tree'], { cwd: src, stdio: ['ignore', 'ignore', 'inherit'] })
  if (x.status !== 0) fail('dpkg-source -x failed')
  return join(src, 'tree')
}

function replaceVendored(tree) {
  for (const mod of REPLACED) {
    const dest = join(tree, 'vendor', mod)
    rmSync(dest, { recursive: true, force: true })
    const cp = run('cp', ['-r', `/usr/share/gocode/src/${mod}`, dest])
    if (cp.status !== 0) fail(`could not copy Debian's ${mod}`)
    // their tests import testify, which vendor/ lacks; nested go.mod files do not belong in vendor/
    for (const f of readdirSync(dest)) if (f.endsWith('_test.go') || f === 'go.mod' || f === 'go.sum') rmSync(join(dest, f))
  }
  say(`replaced vendored ${REPLACED.join(' and ')} with Debian's (the vendored ones crash on Go >= 1.18)`)
}

function build(tree, binaries) {
  say(`building ${binaries.join(' and ')} with ${run('go', ['version']).stdout.trim()} — about 8 minutes on two cores, once`)
  const started = Date.now()
  const tick = setInterval(() => say(`  still building (${Math.round((Date.now() - started) / 1000)} s)…`), 60_000)
  const r = spawnSync('make', [`WHAT=${binaries.map((b) => `cmd/${b}`).join(' ')}`], {
    cwd: tree,
    // stdout carries our result (the bin directory); make's chatter goes to stderr
    stdio: ['ignore', 2, 2],
    env: { ...process.env, KUBE_GIT_VERSION: KUBE_SOURCE.gitVersion, KUBE_GIT_TREE_STATE: 'clean' },
  })
  clearInterval(tick)
  if (r.status !== 0) fail(`make exited ${r.status}`)
  say(`built in ${Math.round((Date.now() - started) / 1000)} s`)
}

/**
 * Builds what is missing and returns the bin directory: the control plane, and with
 * `node: true` kubelet and kube-proxy too.
 */
export function ensureKube({ node = false } = {}) {
  const wanted = node ? [...CONTROL_PLANE_BINARIES, ...NODE_BINARIES] : CONTROL_PLANE_BINARIES
  if (!missingFrom(wanted).length && have('etcd')) return binDir
  if (process.platform !== 'linux') fail(`the control plane builds on Linux only (this is ${process.platform})`)
  ensureTools()
  if (!missingFrom(wanted).length) return binDir
  lockBuild()
  try {
    const missing = missingFrom(wanted) // again: a build we waited for may have made them
    if (!missing.length) return binDir
    // The unpacked tree and Go's build cache in it (_output/local/go/cache) are kept, at a
    // fixed path: kube's -trimpath flags name the tree's path, so only a build in the same
    // place reuses what an earlier one compiled (the node's binaries after the control
    // plane's: minutes instead of eight). About 3 GB.
    const tree = join(workRoot, 'src', 'tree')
    if (!existsSync(join(workRoot, '.ready'))) {
      rmSync(workRoot, { recursive: true, force: true })
      mkdirSync(workRoot, { recursive: true })
      fetchSource(workRoot)
      replaceVendored(tree)
      writeFileSync(join(workRoot, '.ready'), '')
    } else say(`building in the tree kept at ${tree}`)
    build(tree, missing)
    const staged = `${binDir}.${process.pid}.tmp`
    mkdirSync(staged, { recursive: true })
    // what an earlier run built stays: the new directory replaces the old one whole
    if (existsSync(binDir)) {
      for (const b of readdirSync(binDir)) {
        if (missing.includes(b)) continue
        copyFileSync(join(binDir, b), join(staged, b))
        chmodSync(join(staged, b), 0o755)
      }
    }
    if (missing.includes('kubelet')) {
      // the sandbox ("pause") container's program, from the same tree: containerd needs a
      // sandbox image and no registry can serve one here (scripts/cluster.mjs makes it)
      const pause = join(tree, 'build', 'pause', 'linux')
      const cc = run('gcc', ['-Os', '-Wall', '-Werror', '-static', `-DVERSION=${PAUSE_VERSION}`, '-o', join(staged, 'pause'), 'pause.c'], { cwd: pause, stdio: ['ignore', 2, 2] })
      if (cc.status !== 0) fail('compiling build/pause/linux/pause.c failed (gcc and libc6-dev are needed)')
    }
    for (const b of missing) {
      const out = join(tree, '_output', 'local', 'bin', 'linux', 'amd64', b)
      if (!existsSync(out)) fail(`the build produced no ${b}`)
      copyFileSync(out, join(staged, b))
      chmodSync(join(staged, b), 0o755)
    }
    rmSync(binDir, { recursive: true, force: true })
    renameSync(staged, binDir) // atomic: a concurrent run never sees half a cache
    say(`kept ${readdirSync(binDir).join(', ')} in ${binDir}`)
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
  return binDir
}

const workRoot = join(cacheRoot, `src-${sourceKey}`)
const lockDir = join(cacheRoot, 'build.lock')
const pidAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
/** one build at a time per cache (they share the tree); a lock whose holder died is taken over */
function lockBuild() {
  mkdirSync(cacheRoot, { recursive: true })
  for (let waited = false; ; ) {
    try {
      mkdirSync(lockDir)
      writeFileSync(join(lockDir, 'pid'), String(process.pid))
      return
    } catch {
      let holder = 0
      try { holder = Number(readFileSync(join(lockDir, 'pid'), 'utf8')) } catch { /* being written */ }
      if (holder && !pidAlive(holder)) {
        rmSync(lockDir, { recursive: true, force: true })
        continue
      }
      if (!waited) say(`waiting for the build of process ${holder || '?'} (the same cache)…`)
      waited = true
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000)
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = ensureKube({ node: process.argv.includes('--node') })
  process.stdout.write(dir + '\n')
}
