// Folders of the pod's own under the temp dir (session files, videos): made 0700 by
// mkdtemp, and removed when the pod process exits, since what they hold goes with the pod.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dirs = new Set<string>()
let exitHook = false

/** a new folder named `nightjar-<purpose>-…`, removed on exit */
export function podDir(purpose: string): string {
  const dir = mkdtempSync(join(tmpdir(), `nightjar-${purpose}-`))
  dirs.add(dir)
  if (!exitHook) {
    exitHook = true
    // process.exit runs 'exit' listeners synchronously: the folders go with the pod
    process.on('exit', () => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    })
  }
  return dir
}
