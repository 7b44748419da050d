// tab_open answers within its own deadline while other calls run on the session: four
// tab_opens and a fifth, each to a page whose server never answers, on a recorded session
// (opening a tab then means a renderer and the recorder's attach, five at once). Each
// answers 504 navigation_timeout by the deadline, counted from the call, not after the
// tab opened; the session stays usable. Real Chromium, the real API server and MCP SDK
// client. Latency-bound: this file runs alone (scripts/test.mjs).
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { createNamespace, waitForLine } from '../../helpers/netns.ts'
import { TAB_OPEN_DEADLINE_MS } from '../../../browser-pod/actions/tabs.ts'

// /hang is held open and never answered; any other path answers at once
const SITE = String.raw`
const http = require('node:http')
http.createServer((req, res) => {
  if (req.url.startsWith('/hang')) return
  res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' })
  res.end('<title>Fast</title><p>fast page</p>')
}).listen(80, process.env.LISTEN_IP, () => process.stdout.write('ready\n'))
`

/** the answer's way back through the api-server and the client, on two loaded cores */
const RELAY_SLACK_MS = 2000

t.test('tab_open answers within its deadline while four other calls run on the session', async (t) => {
  t.equal(TAB_OPEN_DEADLINE_MS, 30_000, 'the documented deadline (docs/sessions.md, Tabs)')
  const site = await createNamespace(t)
  await waitForLine(site.spawn(process.execPath, ['-e', SITE], { LISTEN_IP: site.ip }), 'ready', 15_000)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': site.ip }) } })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const started = await rest('POST', '/v1/sessions', { record: true })
  t.equal(started.status, 201)
  const id = started.body.id as string
  const base = `/v1/sessions/${id}`
  t.equal((await rest('POST', `${base}/navigate`, { url: 'http://example.com/start' })).status, 200)
  const mcp = await mcpClient(t, s.url, acme.apiKey)

  const timed = async <T>(call: () => Promise<T>) => {
    const began = performance.now()
    const out = await call()
    return { out, ms: performance.now() - began }
  }
  const others = [1, 2, 3, 4].map((i) => timed(() => rest('POST', `${base}/tabs/open`, { url: `http://example.com/hang/${i}` })))
  const opened = await timed(() => mcp.callTool({ name: 'tab_open', arguments: { sessionId: id, url: 'http://example.com/hang/5' } }, undefined, { timeout: 120_000 }))

  const bound = TAB_OPEN_DEADLINE_MS + RELAY_SLACK_MS
  const body = JSON.parse((opened.out.content as Array<{ text: string }>)[0].text) as { status: number; error: { reason: string } }
  t.same([opened.out.isError, body.status, body.error.reason], [true, 504, 'navigation_timeout'], 'tab_open over MCP: 504 navigation_timeout')
  t.ok(opened.ms < bound, `tab_open answered in ${Math.round(opened.ms)} ms (deadline ${TAB_OPEN_DEADLINE_MS} ms)`)
  for (const [i, other] of (await Promise.all(others)).entries()) {
    t.same([other.out.status, other.out.body.error?.reason], [504, 'navigation_timeout'], `tab_open ${i + 1} over REST: 504 navigation_timeout`)
    t.ok(other.ms < bound, `tab_open ${i + 1} answered in ${Math.round(other.ms)} ms`)
  }

  // nothing else broke: the tabs are there, the session navigates and reads as before
  const listed = await rest('GET', `${base}/tabs`)
  t.equal(listed.status, 200)
  t.equal(listed.body.tabs.length, 6, 'the first tab and the five opened, each left on its page as a failed navigate leaves it')
  const fresh = await timed(() => rest('POST', `${base}/tabs/open`, { url: 'http://example.com/fast' }))
  t.same([fresh.out.status, fresh.out.body.status, fresh.out.body.tabs.length], [200, 200, 7], 'a tab opened after them loads its page')
  const seen = await rest('POST', `${base}/perceive`, {})
  t.match(seen.body.snapshot, /fast page/, 'and is the one tools drive')
})
