// Starts the cluster the cluster tests share (test/cluster/main.ts) in a process of its
// own, and stops it. Used by scripts/test.mjs (the cluster phase of `npm test`) and by
// `npm run bench -- operator`. The control plane is built first if this machine has
// not built it yet (scripts/fetch-kube.mjs: about 8 minutes, once).
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureKube } from './fetch-kube.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * @param {{ log?: (m: string) => void, fakeBrowsers?: boolean, timeoutMs?: number }} opts
 * @returns {Promise<{ infoFile: string, info: any, stop(): Promise<void> }>}
 */
export async function startClusterProcess(opts = {}) {
  const log = opts.log ?? (() => {})
  const binDir = ensureKube()
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-cluster-run-'))
  const infoFile = join(dir, 'cluster.json')
  const logFile = join(dir, 'cluster.log')
  const args = ['--import', 'tsx', join(root, 'test/cluster/main.ts'), '--info', infoFile, '--bin', binDir, '--log', logFile]
  if (opts.fakeBrowsers) args.push('--fake-browsers')
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => {
    output += d
    for (const line of String(d).split('\n').filter(Boolean)) log(line)
  })
  child.stderr.on('data', (d) => (output += d))
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000)
  while (!existsSync(infoFile)) {
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 100))])
    if (done !== undefined) throw new Error(`the cluster process exited (${done}):\n${output.trim().split('\n').slice(-20).join('\n')}`)
    if (Date.now() > deadline) {
      child.kill('SIGTERM')
      throw new Error(`the cluster did not come up within ${Math.round((opts.timeoutMs ?? 180_000) / 1000)} s:\n${output.trim().split('\n').slice(-20).join('\n')}`)
    }
  }
  const info = JSON.parse(readFileSync(infoFile, 'utf8'))
  return {
    infoFile,
    info,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
        await exited
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
