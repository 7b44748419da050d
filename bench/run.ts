// npm run bench: every benchmark, each table with its baseline measured in the same run.
// `npm run bench -- NAME` runs one. With no name each benchmark runs in a process of its
// own, so one leaves nothing behind for the next (the session benchmark leaves a large heap
// of garbage from thirty sessions that would tax the tunnel benchmark's collector).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { printTable, progress } from './harness.ts'

/** Each benchmark: its tables, printed as it runs (imported only when chosen). */
const RUNS = {
  sessions: async () => {
    const r = await (await import('./sessions.ts')).benchSessions()
    printTable('session_start → live (warm pool) vs raw playwright-core launch + newPage', r.start)
    printTable('navigate + perceive via MCP vs raw Playwright, same page', r.drive)
  },
  cdp: async () => printTable('a session driven over CDP, start to release (warm pool), vs a raw local launch, same page, alternating runs',
    await (await import('./cdp.ts')).benchCdp()),
  tunnel: async () => printTable('local reach tunnel vs direct loopback', await (await import('./tunnel.ts')).benchTunnel()),
  cloak: async () => printTable('bot-detection signals passed: cloak pod vs stock headless, same page', await (await import('./cloak.ts')).benchCloak()),
  operator: async () => {
    const r = await (await import('./operator.ts')).benchOperator()
    printTable(`operator on a real kube-apiserver: N BrowserSessions created at once, test node with fake browsers (${r.config}); target: 1,000 all Live within 30 s, none lost`, r.rows)
    printTable('CPU seconds per process from the first create until all sessions settled (2 cores: capacity = 2 × wall; "machine busy" includes anything else running on it)', r.cpu)
    printTable('api-server requests by kind in the largest round (apiserver_request_total has no client label in 1.20: attributed by kind)', r.requests)
  },
  burst: async () => printTable('bursts of 20 session starts at once: default capacity settings, adaptive warm pool (minimum 2)', await (await import('./burst.ts')).benchBurst()),
  live: async () => printTable('live view at 1280×720: frames per second while the page animates, and page change → frame at the viewer', await (await import('./live.ts')).benchLive()),
  recording: async () => printTable('drive rounds on a recorded session vs an unrecorded one, same run, alternating blocks', await (await import('./recording.ts')).benchRecording()),
  perception: async () => {
    const r = await (await import('./perception.ts')).benchPerception()
    printTable('perceive (default: viewport, outline, top; 12,000 chars) vs Playwright MCP browser_snapshot, same Chromium, same run: characters, p50 latency, refs', r.pages)
    printTable('scripted tasks from the loaded page: done / tool calls / characters returned (text content the model reads)', r.tasks)
    printTable('targets (issue 27)', r.summary)
    printTable('first answer per page, same Chromium, same run: characters of Nightjar’s navigate answer vs Playwright MCP’s navigate + browser_snapshot (its navigate answers with a link to a snapshot file) and agent-browser’s snapshot / snapshot -i', r.firstAnswer)
    printTable(`navigate + perceive latency per page, p50 of 3 alternating runs: Nightjar’s navigate (its answer is the page’s first part) vs Playwright MCP’s navigate + browser_snapshot; agent-browser’s open + snapshot -i`, r.latency)
    printTable('find-and-act tasks from a freshly loaded page, each judged by a check in the page: done / tool calls / characters returned to the model', r.findAndAct)
    printTable('targets (issue 47)', r.targets)
  },
  sandbox: async () => {
    const r = await (await import('./sandbox.ts')).benchSandbox()
    printTable('embedded: Chromium\'s sandbox vs none, same run, alternating (target: ≤ 10% on each figure)', r.embedded)
    printTable('real node (npm run cluster): none, Chromium\'s sandbox (runc) and Chromium\'s sandbox under gVisor, same run (targets: sandbox ≤ 10%; gVisor navigate + perceive ≤ 2× runc)', r.node)
  },
  scale: async () => {
    const r = await (await import('./scale.ts')).benchScale()
    printTable(`sessions live at once on a simulated fleet (hollow browser pods), started over REST through the chart (2 api-server replicas, operator leader + follower); ${r.stopped}`, r.steps)
    printTable('CPU seconds per 1,000 sessions started in the step, and peak memory, per component (the machine\'s processes, found by command line)', r.components)
    printTable('kube-apiserver requests per session in the step, by component (its service account in the audit log) and kind', r.requests)
    printTable('faults at the largest step reached', r.faults)
  },
  node: async () => {
    const r = await (await import('./node.ts')).benchNode()
    printTable('browser pod start on the real node (npm run cluster -- up) vs the same program as a host process, alternating, same run', r.start)
    printTable('one live session in its container, from the container\'s cgroup', r.memory)
    printTable('idle sessions live at once on this node, by the requests each browser pod makes', r.capacity)
    const { clusterUp } = await import('../test/node/real-cluster.ts')
    const lifecycle = await (await import('./node-sessions.ts')).benchNodeSessions(clusterUp())
    printTable('whole sessions: the chart on the real node (README install, warm pool 2) vs npm start\'s embedded runtime (warm pool 2), alternating, same run', lifecycle)
  },
} satisfies Record<string, () => Promise<void>>
type Name = keyof typeof RUNS
const BENCHMARKS = Object.keys(RUNS) as Name[]
const only = process.argv[2]

if (only === undefined) {
  let failed = false
  for (const name of BENCHMARKS) {
    progress(`${name}…`)
    const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), name], { stdio: 'inherit' })
    if (r.status !== 0) failed = true
  }
  process.exit(failed ? 1 : 0)
}
if (!(BENCHMARKS as readonly string[]).includes(only)) {
  console.error(`unknown benchmark ${only}; one of: ${BENCHMARKS.join(', ')}`)
  process.exit(2)
}
await RUNS[only as Name]()
process.exit(0)
