// Chromium's own calls home (accounts.google.com, update.googleapis.com) never leave
// through the session's egress. Two real Chromium processes, each with its own recording
// proxy standing in for the egress gateway: the control, launched with Playwright's
// defaults and our flags minus the two that silence the calls, shows the calls happen
// (so the check can fail); the pod's launch (launchChromium), running at least twice as
// long as the control needed, makes no request at all.
import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import { chromiumArgs, DEFAULT_CHROMIUM_PATH, launchChromium } from '../../browser-pod/chromium.ts'
import { waitFor } from '../helpers/wait.ts'

/** A proxy that records every request's target and serves none of them. */
async function recordingProxy(t: { teardown(fn: () => unknown): void }) {
  const seen: string[] = []
  const server = http.createServer((q, r) => {
    seen.push(new URL(q.url ?? '', 'http://x').host)
    r.writeHead(502).end()
  })
  server.on('connect', (q, socket) => {
    seen.push(q.url ?? '')
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }))
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

t.test('Chromium makes no request of its own through the egress', async (t) => {
  const silencing = (a: string) => a.startsWith('--gaia-url=') || a.startsWith('--component-updater=')
  t.equal(chromiumArgs().filter(silencing).length, 2, 'the pod launches with both overrides')

  const controlProxy = await recordingProxy(t)
  const podProxy = await recordingProxy(t)
  const started = Date.now()
  const [control, pod] = await Promise.all([
    chromium.launch({
      executablePath: process.env.NIGHTJAR_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH,
      args: chromiumArgs().filter((a) => !silencing(a)),
      proxy: { server: controlProxy.url, bypass: '<-loopback>' },
    }),
    // in this test's own process, which may be root, where Chromium's sandbox refuses to run;
    // the flags under test are the same with it (chromiumArgs adds only --no-sandbox)
    launchChromium({ proxyServer: podProxy.url, sandbox: process.getuid?.() === 0 ? 'none' : 'chromium' }),
  ])
  t.teardown(() => Promise.all([control.close(), pod.close()]))
  for (const b of [control, pod]) await (await b.newPage()).goto('data:text/html,<p>idle</p>')

  const home = (seen: string[]) => seen.filter((h) => /(^|\.)(google\.com|googleapis\.com)(:\d+)?$/.test(h))
  await waitFor(() => home(controlProxy.seen).some((h) => h.startsWith('accounts.google.com')) && home(controlProxy.seen).some((h) => h.startsWith('update.googleapis.com')), {
    timeoutMs: 60_000,
    what: 'the control browser to call accounts.google.com and update.googleapis.com',
  })
  const needed = Date.now() - started
  t.pass(`the control called home within ${needed} ms (the check can fail)`)
  // the pod's browser gets twice that long: it has started the same services by then
  await waitFor(() => Date.now() - started >= 2 * needed || podProxy.seen.length > 0, { timeoutMs: 4 * needed + 10_000, intervalMs: 100, what: 'the watch window' })
  t.same(podProxy.seen, [], 'the pod’s browser sent nothing through its egress')
})
