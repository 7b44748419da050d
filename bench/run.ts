// npm run bench: every benchmark, each table with its baseline measured in the same run.
import { printTable } from './harness.ts'
import { benchSessions } from './sessions.ts'

const only = process.argv[2]
const want = (name: string) => !only || only === name

if (want('sessions')) {
  const r = await benchSessions()
  printTable('session_start → live (warm pool) vs raw playwright-core launch + newPage', r.start)
  printTable('navigate + perceive via MCP vs raw Playwright, same page', r.drive)
}
if (want('tunnel')) {
  const { benchTunnel } = await import('./tunnel.ts')
  printTable('local reach tunnel vs direct loopback', await benchTunnel())
}
if (want('cloak')) {
  const { benchCloak } = await import('./cloak.ts')
  printTable('bot-detection signals passed: cloak pod vs stock headless, same page', await benchCloak())
}
process.exit(0)
