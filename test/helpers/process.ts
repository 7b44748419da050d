// Process facts tests check: is a pid alive, what runs below a set of pids, and what a
// command a test runs printed.
import { execFileSync, spawn, type SpawnOptions } from 'node:child_process'

export { alive } from '../../contracts/process.ts'

/** every process below the given roots (a pod's Chromium and its helpers), roots included */
export function descendants(roots: number[]): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' }).trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number))
  const out = new Set<number>(roots)
  let grew = true
  while (grew) {
    grew = false
    for (const [pid, ppid] of rows) if (out.has(ppid) && !out.has(pid)) { out.add(pid); grew = true }
  }
  return [...out]
}

export interface Ran { code: number | null; stdout: string; stderr: string }

/** Runs a command to its end, collecting what it printed; `input` is written to its stdin. */
export function run(command: string, args: string[], options: Omit<SpawnOptions, 'stdio'> & { input?: string } = {}): Promise<Ran> {
  const { input, ...spawnOptions } = options
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...spawnOptions, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d) => { stdout += d })
    child.stderr!.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    if (input !== undefined) child.stdin!.end(input)
  })
}
