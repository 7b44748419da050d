// npm run bench: every benchmark, each table with its baseline measured in the same run.
// `npm run bench -- NAME` runs one. With no name each benchmark runs in a process of its
// own, so one leaves nothing behind for the next (the session benchmark leaves a large heap
// of garbage from thirty sessions that would tax the tunnel benchmark's collector).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { printTable, progress } from './harness.ts'

const BENCHMARKS = ['sessions', 'cdp', 'tunnel', 'cloak', 'operator', 'burst', 'live', 'recording', 'perception'] as const
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

if (only === 'sessions') {
  const { benchSessions } = await import('./sessions.ts')
  const r = await benchSessions()
  printTable('session_start → live (warm pool) vs raw playwright-core launch + newPage', r.start)
  printTable('navigate + perceive via MCP vs raw Playwright, same page', r.drive)
}
if (only === 'cdp') {
  const { benchCdp } = await import('./cdp.ts')
  printTable('a session driven over CDP, start to release (warm pool), vs a raw local launch, same page, alternating runs', await benchCdp())
}
if (only === 'perception') {
  const { benchPerception } = await import('./perception.ts')
  const r = await benchPerception()
  printTable('perceive (default: viewport, outline, top; 12,000 chars) vs Playwright MCP browser_snapshot, same Chromium, same run: characters, p50 latency, refs', r.pages)
  printTable('scripted tasks from the loaded page: done / tool calls / characters returned (text content the model reads)', r.tasks)
  printTable('targets (issue 27)', r.summary)
}
if (only === 'recording') {
  const { benchRecording } = await import('./recording.ts')
  printTable('drive rounds on a recorded session vs an unrecorded one, same run, alternating blocks', await benchRecording())
}
if (only === 'live') {
  const { benchLive } = await import('./live.ts')
  printTable('live view at 1280×720: frames per second while the page animates, and page change → frame at the viewer', await benchLive())
}
if (only === 'burst') {
  const { benchBurst } = await import('./burst.ts')
  printTable('bursts of 20 session starts at once: default capacity settings, adaptive warm pool (minimum 2)', await benchBurst())
}
if (only === 'tunnel') {
  const { benchTunnel } = await import('./tunnel.ts')
  printTable('local reach tunnel vs direct loopback', await benchTunnel())
}
if (only === 'cloak') {
  const { benchCloak } = await import('./cloak.ts')
  printTable('bot-detection signals passed: cloak pod vs stock headless, same page', await benchCloak())
}
if (only === 'operator') {
  const { benchOperator } = await import('./operator.ts')
  const r = await benchOperator()
  printTable(`operator on a real kube-apiserver: N BrowserSessions created at once, test node with fake browsers (${r.config}); target: 1,000 all Live within 30 s, none lost`, r.rows)
  printTable('CPU seconds per process from the first create until all sessions settled (2 cores: capacity = 2 × wall; "machine busy" includes anything else running on it)', r.cpu)
  printTable('api-server requests by kind in the largest round (apiserver_request_total has no client label in 1.20: attributed by kind)', r.requests)
}
process.exit(0)
