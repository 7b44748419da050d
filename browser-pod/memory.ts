// The container's memory cgroup, read to tell an OOM kill from another renderer crash:
// the kernel kills the renderer (the biggest process), not this program, so the container
// would stay Running with a useless session. When a page crashes and the cgroup counts an
// OOM kill, the pod exits, and the runtime reports OOMKilled, which the operator turns into
// the session's failure reason (operator/kube/pod-state.ts).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

/** cgroup v2 (memory.events) and v1 (memory.oom_control, kernel ≥ 4.13) places of the count */
const COUNTERS = ['/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control']

/** OOM kills inside this container's memory cgroup so far; undefined where no cgroup says (a host process) */
export function oomKills(files: readonly string[] = COUNTERS): number | undefined {
  for (const file of files) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue // not this cgroup version, or no cgroup mounted
    }
    const m = /^oom_kill (\d+)$/m.exec(text)
    if (m) return Number(m[1])
  }
  return undefined
}

/** The message a Pod's terminated state carries: the kubelet mounts this file into every container. */
export function writeTerminationMessage(message: string, path = '/dev/termination-log'): void {
  if (!existsSync(path)) return // not in a container
  try {
    writeFileSync(path, message)
  } catch {
    /* read-only here: the runtime's reason (OOMKilled) still travels */
  }
}
