// The container's own memory cgroup, read to tell an out-of-memory kill from any other
// renderer crash.
//
// Why: under a memory limit the kernel's OOM killer picks the biggest process of the
// container, which is the page's renderer, not this program (PID 1's child tree keeps
// running, Chromium shows a crashed tab). The session is then useless, yet nothing would
// tell the operator: the container would stay Running. So when a page crashes and the
// cgroup counts an OOM kill, the pod exits; the runtime has seen the cgroup's OOM event
// and reports the container terminated with reason OOMKilled, which the operator turns
// into the session's failure reason (operator/kube/pod-state.ts reads it).
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
