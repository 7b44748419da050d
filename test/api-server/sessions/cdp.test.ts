// CDP connect end to end: session_cdp (REST and MCP) gives the URL, and the real
// playwright-core client connects over CDP to it with the caller's own Bearer credential
// (an API key, an OAuth token), through the api-server's relay and the pod's filter, to
// the session's real Chromium. Refusals before the upgrade are the REST door's own bytes.
import t from 'tap'
import { chromium, type Browser } from 'playwright-core'
import { WebSocket } from 'ws'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { waitFor } from '../../helpers/wait.ts'
import { mintKey } from '../../../api-server/auth/keys.ts'
import { CDP_MAX_CLIENT_MESSAGE } from '../../../contracts/pod-api.ts'
import { privilegedTarget } from '../../../browser-pod/cdp-proxy.ts'
import { loginTokens } from '../oauth/helpers.ts'
import { shown } from '../../helpers/perceived.ts'

interface Refusal {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** An upgrade the server must refuse: its status, headers and body as sent. */
function refusedUpgrade(url: string, token?: string): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {} })
    ws.once('open', () => { ws.close(); reject(new Error('the upgrade was accepted')) })
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    ws.once('error', reject)
  })
}

t.test('CDP connect', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const open = async (body: Record<string, unknown> = {}, token = acme.apiKey) => {
    const r = await s.request('POST', '/v1/sessions', { token, body })
    if (r.status !== 201) throw new Error(`session_start ${r.status} ${r.text}`)
    return r.body.id as string
  }
  const end = (id: string) => s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })
  const wsUrl = (id: string) => `${s.url.replace(/^http/, 'ws')}/v1/sessions/${id}/cdp`
  const connect = async (id: string, token = acme.apiKey): Promise<Browser> => {
    const browser = await chromium.connectOverCDP(wsUrl(id), { headers: { authorization: `Bearer ${token}` } })
    t.teardown(() => browser.close().catch(() => {}))
    return browser
  }

  t.test('session_cdp gives the URL over REST and MCP', async (t) => {
    const id = await open()
    const r = await s.request('GET', `/v1/sessions/${id}/cdp`, { token: acme.apiKey })
    t.equal(r.status, 200)
    const { httpUrl, httpUrlExpiresAt, ...rest } = r.body
    t.same(rest, { sessionId: id, url: wsUrl(id), protocol: 'cdp' })
    t.ok(typeof httpUrl === 'string' && httpUrl.startsWith(`${s.url}/v1/sessions/${id}/cdp/njc_`), 'an http URL with a token, for clients without headers')
    t.ok(Date.parse(httpUrlExpiresAt) > Date.now())
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const tool = await mcp.callTool({ name: 'session_cdp', arguments: { sessionId: id } })
    t.match(tool.structuredContent, { sessionId: id, url: wsUrl(id), protocol: 'cdp', httpUrl: /\/cdp\/njc_/ })
    await end(id)
  })

  t.test('playwright-core connectOverCDP drives a session with the caller’s API key: goto the public web, click, screenshot', async (t) => {
    const id = await open()
    const { body } = await s.request('GET', `/v1/sessions/${id}/cdp`, { token: acme.apiKey })
    const browser = await chromium.connectOverCDP(body.url, { headers: { authorization: `Bearer ${acme.apiKey}` } })
    t.teardown(() => browser.close().catch(() => {}))
    const page = browser.contexts().flatMap((c) => c.pages())[0]
    t.ok(page, 'the session’s page')
    const loaded = await page.goto('http://example.com/cdp-drive.html')
    // what came back, if not the page: the gateway's answer names its cause
    t.equal(loaded?.status(), 200, `the page through the gateway (${loaded?.status()} ${loaded?.headers()['x-nightjar-egress'] ?? ''} ${page.url()})`)
    await page.click('#go')
    t.equal(await page.textContent('#status'), 'clicked over CDP')
    const png = await page.screenshot()
    t.ok(png.subarray(1, 4).toString() === 'PNG' && png.length > 1000, 'a screenshot')
    // the REST door sees the same page: one browser, two ways in
    const seen = await s.request('POST', `/v1/sessions/${id}/perceive`, { token: acme.apiKey, body: {} })
    t.match(shown(seen.body), /clicked over CDP/)
    t.ok((await web.requests()).some((r) => r.url === '/cdp-drive.html' && r.host === 'example.com'), 'through the egress gateway')
    // what the gateway refuses over REST it refuses over CDP
    const denied = await page.goto('http://127.0.0.1:9/').then((r) => r?.status(), () => 'failed')
    t.not(denied, 200, 'loopback is not reachable from the session')
    await browser.close()
    const journal = await waitFor(async () => {
      const rows = (await s.request('GET', `/v1/sessions/${id}/journal`, { token: acme.apiKey })).body.items as Array<{ op: string; detail: Record<string, unknown> }>
      return rows.some((r) => r.op === 'cdp_disconnect') ? rows : null
    }, { what: 'the journal to record the disconnect' })
    t.same(journal.filter((r) => r.op.startsWith('cdp_')).map((r) => r.op), ['cdp_connect', 'cdp_disconnect'])
    t.ok(Number(journal.find((r) => r.op === 'cdp_disconnect')!.detail.messages) > 10, 'counts, never messages')
    await end(id)
  })

  t.test('through the api-server: Chromium’s own pages and the download path are refused, the pod’s paths never shown (Playwright’s CDPSession)', async (t) => {
    const id = await open()
    const browser = await connect(id)
    const page = browser.contexts().flatMap((c) => c.pages())[0]
    await page.goto('http://example.com/cdp-drive.html')
    const cdp = await browser.newBrowserCDPSession()
    const refusedWith = async (p: Promise<unknown>, what: RegExp, msg: string) => {
      const e = await p.then(() => null, (err: Error) => err)
      t.match(e?.message ?? 'accepted', what, msg)
    }
    for (const url of ['chrome://version', 'chrome-untrusted://terminal/', 'devtools://devtools/bundled/inspector.html']) {
      await refusedWith(cdp.send('Target.createTarget', { url }), /nightjar: Target\.createTarget is refused: scheme [a-z-]+: is not allowed/, `Target.createTarget ${url}`)
    }
    const { targetInfos } = await cdp.send('Target.getTargets', { filter: [{}] })
    t.ok(targetInfos.some((x) => x.url === 'http://example.com/cdp-drive.html'), 'the session’s page is listed')
    t.notOk(targetInfos.some((x) => privilegedTarget(x)), 'none of Chromium’s own pages is')
    await refusedWith(cdp.send('Target.attachToTarget', { targetId: 'A'.repeat(32), flatten: true }), /nightjar: Target\.attachToTarget is refused: unknown target/, 'a target never named')
    const ctx = targetInfos.find((x) => x.url === 'http://example.com/cdp-drive.html')!.browserContextId
    await refusedWith(cdp.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: '/tmp', browserContextId: ctx }),
      /nightjar: Browser\.setDownloadBehavior is refused: download behaviour of the session’s own context is the pod’s/, 'Browser.setDownloadBehavior with a path on the session’s context')
    const pageCdp = await page.context().newCDPSession(page)
    await refusedWith(pageCdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' }),
      /nightjar: Page\.setDownloadBehavior is refused: the download path is the pod’s/, 'Page.setDownloadBehavior')
    t.equal((await cdp.send('SystemInfo.getInfo')).commandLine, '', 'SystemInfo: no command line (it names the pod’s paths)')
    await refusedWith(cdp.send('Browser.getBrowserCommandLine'), /nightjar: .* the browser’s command line holds the pod’s paths/, 'Browser.getBrowserCommandLine')
    t.equal(await page.title(), 'CDP drive', 'the session goes on')
    await browser.close()
    await end(id)
  })

  t.test('an OAuth access token connects too', async (t) => {
    const tokens = await loginTokens(s, acme)
    const id = await open({}, tokens.access_token)
    const browser = await connect(id, tokens.access_token)
    const page = browser.contexts().flatMap((c) => c.pages())[0]
    await page.goto('http://example.com/cdp-drive.html')
    t.equal(await page.title(), 'CDP drive')
    await browser.close()
    await end(id)
  })

  t.test('[ERR-06] [INV-04] a foreign org’s token gets the byte-identical 404', async (t) => {
    const globex = await s.bootstrap()
    const id = await open()
    const foreign = await refusedUpgrade(wsUrl(id), globex.apiKey)
    const unknown = await refusedUpgrade(wsUrl('nsess_0000000000000000000000'), globex.apiKey)
    const rest = await s.request('GET', `/v1/sessions/${id}`, { token: globex.apiKey })
    const restCdp = await s.request('GET', `/v1/sessions/${id}/cdp`, { token: globex.apiKey })
    t.equal(foreign.status, 404)
    t.equal(unknown.status, 404)
    t.equal(foreign.body, rest.text, 'the upgrade’s 404 is the REST 404, byte for byte')
    t.equal(unknown.body, rest.text, 'unknown and foreign alike')
    t.equal(restCdp.text, rest.text, 'session_cdp too')
    t.equal(foreign.headers['content-type'], rest.headers.get('content-type'))
    await end(id)
  })

  t.test('[ERR-04] a token without sessions:drive is refused; no token gets the one 401', async (t) => {
    const id = await open()
    const writeOnly = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'w', scopes: ['sessions:write'], minterScopes: new Set(['sessions:write']) })
    const up = await refusedUpgrade(wsUrl(id), writeOnly.secret)
    const rest = await s.request('GET', `/v1/sessions/${id}/cdp`, { token: writeOnly.secret })
    t.equal(up.status, 403)
    t.equal(rest.status, 403)
    t.equal(up.body, rest.text)
    t.equal(JSON.parse(up.body).error.message, 'missing required scope: sessions:drive')
    const none = await refusedUpgrade(wsUrl(id))
    const restNone = await s.request('GET', `/v1/sessions/${id}/cdp`)
    t.equal(none.status, 401)
    t.equal(none.body, restNone.text)
    t.equal(none.headers['www-authenticate'], restNone.headers.get('www-authenticate'), 'the same challenge')
    const wrong = await refusedUpgrade(wsUrl(id), 'njk_not_a_real_key_at_all')
    t.equal(wrong.status, 401)
    t.equal((await refusedUpgrade(wsUrl('not-a-session'), acme.apiKey)).body, (await s.request('GET', '/v1/sessions/not-a-session/cdp', { token: acme.apiKey })).text, 'a malformed id: the REST 400')
    await end(id)
  })

  t.test('refused with a typed 403 on a session with a bound identity', async (t) => {
    const persona = await createPersona(s, acme.apiKey, { name: 'cdp-shopper', value: 'Cdp-Persona-9d2e', originAllowlist: ['login.example.com'], agentId: acme.agentId })
    const id = await open({ identity: persona.identityId })
    const rest = await s.request('GET', `/v1/sessions/${id}/cdp`, { token: acme.apiKey })
    t.equal(rest.status, 403)
    t.same(rest.body, { error: { code: 'forbidden', message: 'CDP is not available on a session with a bound identity', reason: 'cdp_identity_bound' } })
    const up = await refusedUpgrade(wsUrl(id), acme.apiKey)
    t.equal(up.status, 403)
    t.equal(up.body, rest.text)
    await end(id)
  })

  t.test('session_end closes the CDP socket; the ended session refuses a new one', async (t) => {
    const id = await open()
    const browser = await connect(id)
    const disconnected = new Promise<void>((resolve) => browser.once('disconnected', () => resolve()))
    const raw = new WebSocket(wsUrl(id), { headers: { authorization: `Bearer ${acme.apiKey}` } })
    const rawClosed = new Promise<number>((resolve) => raw.once('close', (code) => resolve(code)))
    await new Promise((resolve, reject) => { raw.once('open', resolve); raw.once('error', reject) })
    const ended = await end(id)
    t.equal(ended.status, 200)
    await disconnected
    t.pass('Playwright saw the browser disconnect')
    t.equal(await rawClosed, 1001, 'going away: the session ended')
    const again = await refusedUpgrade(wsUrl(id), acme.apiKey)
    t.equal(again.status, 409)
    t.equal(JSON.parse(again.body).error.code, 'conflict')
  })

  t.test('frames from the caller are bounded at the api-server', async (t) => {
    const id = await open()
    const raw = new WebSocket(wsUrl(id), { headers: { authorization: `Bearer ${acme.apiKey}` } })
    const closed = new Promise<number>((resolve) => raw.once('close', (code) => resolve(code)))
    await new Promise((resolve, reject) => { raw.once('open', resolve); raw.once('error', reject) })
    raw.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: 'x'.repeat(CDP_MAX_CLIENT_MESSAGE) } }))
    t.equal(await closed, 1009)
    await end(id)
  })
})
