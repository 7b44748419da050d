// Watching and taking over, end to end: a person signed in to the console in
// real Chromium watches a session an agent drives over MCP (the real MCP SDK client),
// takes control (the agent's driving tools answer 409 human_in_control, read-only ones
// keep working), clicks and types through the live picture into the session's real
// browser, and hands back. request_human gives the page's URL; session_get's control
// says when the browser is the agent's again. The viewer WebSocket refuses without a
// console session, from a foreign Origin, and across orgs (the REST door's 404, byte for byte).
import t from 'tap'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { WebSocket } from 'ws'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { signIn } from '../../helpers/console.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { waitFor } from '../../helpers/wait.ts'
import { shown } from '../../helpers/perceived.ts'

interface Refusal { status: number; contentType?: string; body: string }

/** A WebSocket upgrade the server must refuse: its status and body as sent. */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.once('open', () => { ws.close(); reject(new Error('the upgrade was accepted')) })
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body }))
    })
    ws.once('error', reject)
  })
}


const frames = async (page: Page) => Number(await page.getAttribute('#live', 'data-frames'))

t.test('watching and taking over', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const browser = await launchTestBrowser(t)
  const mcp = await mcpClient(t, s.url, acme.apiKey)
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await mcp.callTool({ name, arguments: args })
    if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
    return r.structuredContent as any
  }
  const { id: sessionId } = await call('session_start', {})
  t.teardown(() => s.request('DELETE', `/v1/sessions/${sessionId}`, { token: acme.apiKey }))
  await call('navigate', { sessionId, url: 'http://example.com/live-fill.html?delay=100000' })

  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const list = await signIn(s, ctx, acme.email, acme.password, '/console/sessions')
  const consoleCookie = (await ctx.cookies()).find((c) => c.name === 'nj_console')!.value
  const wsUrl = (id: string) => `${s.url.replace(/^http/, 'ws')}/console/sessions/${id}/live`

  t.test('the list shows the org’s live sessions', async (t) => {
    t.ok(await list.isVisible(`#session-${sessionId}`), 'the session is listed')
    t.equal((await list.textContent(`#session-${sessionId} .control`))!.trim(), 'the agent')
  })

  let live: Page
  t.test('[request_human] the agent asks for a person and gets the live view’s URL', async (t) => {
    const asked = await call('request_human', { sessionId, reason: 'solve the CAPTCHA, please' })
    t.same(asked, { sessionId, url: `${s.config.baseUrl}/console/sessions/${sessionId}`, status: 'live', control: 'agent' })
    t.match(asked.url, /^http:\/\/127\.0\.0\.1:\d+\/console\/sessions\/nsess_/, 'absolute')
    await list.reload()
    t.match(await list.textContent(`#session-${sessionId} .request`), /asks for a person: solve the CAPTCHA, please/)
    live = await ctx.newPage()
    await live.goto(asked.url)
    t.match(await live.textContent('#request'), /solve the CAPTCHA, please/, 'the reason is shown')
  })

  t.test('the live view draws frames while the agent drives over MCP', async (t) => {
    await waitFor(async () => (await frames(live)) >= 1, { what: 'a first frame' })
    t.equal(await live.getAttribute('#live', 'data-state'), 'live')
    t.equal(await live.textContent('#url'), 'http://example.com/live-fill.html?delay=100000')
    const before = await frames(live)
    await call('navigate', { sessionId, url: 'http://example.com/page2.html' })
    await waitFor(async () => (await live.textContent('#url')) === 'http://example.com/page2.html', { what: 'the new URL' })
    await waitFor(async () => (await frames(live)) > before, { what: 'frames of the new page' })
    const src = await live.getAttribute('#screen', 'src')
    t.match(src, /^data:image\/jpeg;base64,\/9j\//, 'the picture is the latest JPEG frame')
    await call('navigate', { sessionId, url: 'http://example.com/live-fill.html?delay=100000' })
  })

  t.test('the session’s tabs and journal show beside the picture', async (t) => {
    const tabs = async () => live.$$eval('#tabs li', (lis) => lis.map((li) => ({ id: (li as HTMLElement).dataset.tab, text: li.textContent, active: li.className === 'active' })))
    const journalOps = async () => live.$$eval('#journal tr', (trs) => trs.map((tr) => tr.children[1]?.textContent ?? ''))
    await waitFor(async () => (await tabs()).length === 1 && (await tabs())[0].text!.startsWith('http://example.com/live-fill.html'), { what: 'the one tab' })
    t.ok((await tabs())[0].active, 'marked active')
    const { tabId: second } = await call('tab_open', { sessionId })
    await call('navigate', { sessionId, url: 'http://example.com/page2.html' })
    await waitFor(async () => (await tabs()).length === 2, { what: 'the opened tab' })
    await waitFor(async () => (await tabs()).find((x) => x.id === second)?.text === 'http://example.com/page2.html (active)', { what: 'the new tab, active, on page2' })
    t.notOk((await tabs()).find((x) => x.id !== second)!.active, 'the first tab is no longer active')
    // the journal refreshes on its own: the calls just made appear without a reload
    await waitFor(async () => (await journalOps()).slice(-2).join(',') === 'tab_open,navigate', { what: 'the new journal rows' })
    t.equal((await journalOps())[0], 'session_start', 'oldest first')
    await call('tab_close', { sessionId, tabId: second })
    await waitFor(async () => (await tabs()).length === 1, { what: 'the closed tab gone' })
    t.ok((await tabs())[0].active, 'the first tab is active again')
  })

  t.test('take control: the person’s click and keys reach the browser, the agent gets 409 human_in_control', async (t) => {
    // a CDP script driving the session is cut off when the person takes over
    const script = await chromium.connectOverCDP(`${s.url.replace(/^http/, 'ws')}/v1/sessions/${sessionId}/cdp`, { headers: { authorization: `Bearer ${acme.apiKey}` } })
    t.teardown(() => script.close().catch(() => {}))
    const scriptGone = new Promise<void>((resolve) => script.once('disconnected', () => resolve()))
    await live.click('#take')
    await live.waitForLoadState()
    await waitFor(async () => (await live.getAttribute('#live', 'data-control')) === 'mine', { what: 'control to be mine' })
    t.equal((await call('session_get', { sessionId })).control, 'human', 'session_get shows it')

    const refused = await mcp.callTool({ name: 'navigate', arguments: { sessionId, url: 'http://example.com/page2.html' } })
    t.equal(refused.isError, true)
    t.equal((refused.structuredContent as any).status, 409)
    t.equal((refused.structuredContent as any).error.reason, 'human_in_control')
    const viaRest = await s.request('POST', `/v1/sessions/${sessionId}/act`, { token: acme.apiKey, body: { verb: 'click', selector: '#name' } })
    t.equal(viaRest.status, 409)
    t.same(viaRest.body.error, { code: 'conflict', reason: 'human_in_control', message: (refused.structuredContent as any).error.message })
    const mouse = await mcp.callTool({ name: 'mouse_click', arguments: { sessionId, x: 10, y: 10 } })
    t.equal((mouse.structuredContent as any).error?.reason, 'human_in_control', 'mouse_* too')
    const fill = await mcp.callTool({ name: 'credential_fill', arguments: { sessionId, credentialName: 'login', selector: '#late-pw' } })
    t.equal((fill.structuredContent as any).error?.reason, 'human_in_control', 'and credential_fill')
    await scriptGone
    t.pass('the connected CDP client was closed')
    const cdp = await s.request('GET', `/v1/sessions/${sessionId}/cdp`, { token: acme.apiKey })
    t.equal(cdp.body.error?.reason, 'human_in_control', 'and CDP connect')
    // read-only tools keep working
    t.match((await call('perceive', { sessionId })).url, /live-fill\.html/)
    t.ok((await mcp.callTool({ name: 'screenshot', arguments: { sessionId } })).content, 'screenshot works')

    // the #name field sits at (40..440, 300..350) in the 1280×720 viewport
    await waitFor(async () => (await frames(live)) >= 1, { what: 'a frame after reconnecting' })
    const box = (await live.locator('#screen').boundingBox())!
    await live.mouse.click(box.x + (100 * box.width) / 1280, box.y + (325 * box.height) / 720)
    await live.keyboard.type('hello')
    await waitFor(async () => shown(await call('perceive', { sessionId })).includes('typed:hello'), { what: 'the typed text in the session’s page' })
    t.pass('the person typed into the session’s page')
  })

  t.test('hand back: the agent’s next tool call works', async (t) => {
    await live.click('#hand-back')
    await live.waitForLoadState()
    await waitFor(async () => (await live.getAttribute('#live', 'data-control')) === 'agent', { what: 'control back to the agent' })
    const view = await call('session_get', { sessionId })
    t.equal(view.control, 'agent', 'session_get shows control: agent')
    const nav = await call('navigate', { sessionId, url: 'http://example.com/page2.html' })
    t.equal(nav.url, 'http://example.com/page2.html')
    await list.reload()
    t.equal((await list.textContent(`#session-${sessionId} .request`))!.trim(), '', 'the request was answered')

    const journal = (await s.request('GET', `/v1/sessions/${sessionId}/journal?limit=500`, { token: acme.apiKey })).body.items as Array<{ op: string; detail: Record<string, unknown> }>
    const ops = journal.map((r) => r.op)
    for (const op of ['request_human', 'live_view_open', 'human_take_control', 'human_hand_back']) t.ok(ops.includes(op), `journalled: ${op}`)
    t.same(journal.find((r) => r.op === 'request_human')!.detail, { reasonLength: 'solve the CAPTCHA, please'.length }, 'the reason’s size only')
    t.ok(ops.indexOf('human_take_control') < ops.indexOf('human_hand_back'))
    const audit = (await s.request('GET', '/v1/audit?limit=500', { token: acme.apiKey })).body.items as Array<{ action: string; sessionId?: string; actor: string }>
    const mine = audit.filter((a) => a.sessionId === sessionId).map((a) => a.action)
    t.same(mine.filter((a) => a.startsWith('session.')), ['session.human_requested', 'session.control_taken', 'session.control_returned'])
    t.equal(audit.find((a) => a.action === 'session.control_taken')!.actor, acme.userId, 'the person is the actor')
  })

  t.test('[INV-04] the viewer WebSocket refuses without a console session, from a foreign Origin, and across orgs', async (t) => {
    const noCookie = await refusedUpgrade(wsUrl(sessionId), {})
    t.equal(noCookie.status, 401)
    t.equal(noCookie.body, 'sign in to the console to watch a session')
    const foreignOrigin = await refusedUpgrade(wsUrl(sessionId), { cookie: `nj_console=${consoleCookie}`, origin: 'https://evil.example' })
    t.equal(foreignOrigin.status, 403)

    const gctx = await browser.newContext()
    t.teardown(() => gctx.close())
    const gpage = await signIn(s, gctx, globex.email, globex.password, '/console/sessions')
    t.notOk(await gpage.isVisible(`#session-${sessionId}`), 'another org’s list does not show it')
    const globexCookie = (await gctx.cookies()).find((c) => c.name === 'nj_console')!.value
    const foreign = await refusedUpgrade(wsUrl(sessionId), { cookie: `nj_console=${globexCookie}` })
    const unknown = await refusedUpgrade(wsUrl('nsess_0000000000000000000000'), { cookie: `nj_console=${globexCookie}` })
    const rest = await s.request('GET', `/v1/sessions/${sessionId}`, { token: globex.apiKey })
    t.equal(rest.status, 404)
    t.equal(foreign.status, 404)
    t.equal(foreign.body, rest.text, 'the REST door’s 404, byte for byte')
    t.equal(unknown.body, rest.text, 'unknown and foreign alike')
    t.equal(foreign.contentType, rest.headers.get('content-type'))
    const page = await gctx.newPage()
    const r = await page.goto(`${s.url}/console/sessions/${sessionId}`)
    t.equal(r?.status(), 404, 'the page too')
    const journal = await gctx.request.get(`${s.url}/console/sessions/${sessionId}/journal?after=0`)
    const unknownJournal = await gctx.request.get(`${s.url}/console/sessions/nsess_0000000000000000000000/journal?after=0`)
    t.equal(journal.status(), 404, 'and the journal refresh')
    t.equal(await journal.text(), rest.text, 'with the REST door’s 404, byte for byte')
    t.equal(await unknownJournal.text(), rest.text, 'unknown and foreign alike')
    const take = await gctx.request.post(`${s.url}/console/sessions/${sessionId}/take`, { form: { csrf: 'forged' }, maxRedirects: 0 })
    t.equal(take.status(), 403, 'a forged form is refused')
    t.equal((await call('session_get', { sessionId })).control, 'agent', 'and took nothing')
  })

  t.test('ending the session ends the view', async (t) => {
    await s.request('DELETE', `/v1/sessions/${sessionId}`, { token: acme.apiKey })
    await waitFor(async () => (await live.getAttribute('#live', 'data-state')) === 'ended', { what: 'the view to show the end' })
    const late = await s.request('POST', `/v1/sessions/${sessionId}/request-human`, { token: acme.apiKey, body: { reason: 'too late' } })
    t.equal(late.status, 409, 'request_human on an ended session')
    t.equal(late.body.error.reason, 'session_not_live')
    const foreign = await s.request('POST', `/v1/sessions/${sessionId}/request-human`, { token: globex.apiKey, body: { reason: 'not mine' } })
    t.equal(foreign.status, 404, 'and the one 404 across orgs')
  })
})
