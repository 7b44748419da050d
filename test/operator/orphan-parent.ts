// Helper process for pod-runtime.test.ts (not a test file): starts an embedded pod
// runtime with fake pods, prints their pids as one JSON line, then idles until killed.
// The test SIGKILLs this process and checks that its pods follow it (stdin EOF).
import { EmbeddedPodRuntime } from '../../operator/embedded/pod-runtime.ts'
import { fakePodCommand } from './helpers.ts'

const runtime = new EmbeddedPodRuntime({ command: fakePodCommand(), poolSize: 2 })
runtime.start()
const timer = setInterval(() => {
  const up = runtime.processes().filter((p) => p.state === 'running')
  if (up.length === 2) {
    clearInterval(timer)
    process.stdout.write(JSON.stringify({ pids: up.map((p) => p.pid) }) + '\n')
    setInterval(() => {}, 60_000) // stay alive until the test kills us
  }
}, 20)
