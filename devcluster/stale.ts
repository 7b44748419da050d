// What a cluster run that died leaves in the runs root: directories named <prefix>-<pid>-…,
// each with a `pids` file. Runs whose process is gone have those pids killed (as process
// groups where the pids lead groups) and their directory removed, so the next run starts
// clean without a `down` of the one that crashed.
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive } from '../contracts/process.ts'

/** where control planes (cp-<pid>-…) and test nodes (node-<pid>-…) keep their files */
export const RUNS_ROOT = join(tmpdir(), 'nightjar-cluster')

export function sweepDeadRuns(root: string, prefix: string, opts: { groups?: boolean } = {}): void {
  if (!existsSync(root)) return
  for (const d of readdirSync(root)) {
    const m = new RegExp(`^${prefix}-(\\d+)-`).exec(d)
    if (!m || alive(Number(m[1]))) continue
    const pidFile = join(root, d, 'pids')
    if (existsSync(pidFile)) {
      for (const pid of readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number)) {
        try { process.kill(opts.groups ? -pid : pid, 'SIGKILL') } catch { /* already gone */ }
      }
    }
    rmSync(join(root, d), { recursive: true, force: true })
  }
}
