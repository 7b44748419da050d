// Process facts tests check: is a pid alive, and what runs below a set of pids.
import { execFileSync } from 'node:child_process'

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
