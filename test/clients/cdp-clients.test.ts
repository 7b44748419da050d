// CDP clients nobody here wrote, as published (pinned devDependencies), against one live
// session: each starts from the HTTP URL session_cdp gives (a URL token in its path, no
// header), discovers the endpoint as it would Chrome's (/json/version, /json/list,
// /json/protocol) and does real work: opens a page of the "public web" and reads its title.
// A refused navigation leaves no tab behind, and the token is never logged or stored.
import t, { type Test } from 'tap'
import { createRequire } from 'node:module'
import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { chromium } from 'playwright-core'
import puppeteer from 'puppeteer-core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { randomBytes } from 'node:crypto'
import { SignJWT } from 'jose'
import { startTestServer } from '../helpers/server.ts'
import { mintCdpToken, resolveCdpToken, TOKEN_TTL_MS } from '../../api-server/auth/cdp-url-token.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { waitFor } from '../helpers/wait.ts'

const run = promisify(execFile)
const PAGE = 'http://example.com/cdp-drive.html'

interface CriOptions { host: string; port: number; alterPath: (path: string) => string }
interface CriClient {
  send(method: string, params?: Record<string, unknown>): Promise<any>
  on(event: string, listener: (params: any) => void): void
  close(): Promise<void>
}
type Cri = ((o: CriOptions) => Promise<CriClient>) & {
  List(o: CriOptions): Promise<Array<{ id: string; type: string; url: string; webSocketDebuggerUrl: string }>>
  Version(o: CriOptions): Promise<Record<string, string>>
  Protocol(o: CriOptions): Promise<{ domains: Array<{ domain: string }> }>
}
const CDP = createRequire(import.meta.url)('chrome-remote-interface') as Cri

t.test('[ISSUE-50] a CDP URL token is good for one session, until it expires, and is no other signed value', async (t) => {
  const auth = { orgId: 'norg_a', agentId: 'nagt_a', scopes: new Set(['sessions:drive', 'sessions:evaluate']), principal: { kind: 'key' as const, principalId: 'nagt_a', credentialId: 'nkey_a', name: 'k' } }
  let now = 1_000_000
  const deps = { cookieKey: randomBytes(32), now: () => now }
  const { token, expiresAt } = await mintCdpToken(deps, { auth, sessionId: 'nsess_a' })
  t.equal(expiresAt, now + TOKEN_TTL_MS)
  const back = await resolveCdpToken(deps, token, 'nsess_a')
  t.same([...(back?.scopes ?? [])], ['sessions:drive'], 'CDP’s scope only, whatever the minting credential held')
  t.equal(await resolveCdpToken(deps, token, 'nsess_b'), null, 'another session')
  t.equal(await resolveCdpToken({ ...deps, cookieKey: randomBytes(32) }, token, 'nsess_a'), null, 'another server key')
  // a console cookie is an HS256 JWT under the server key itself: never a CDP token
  const cookie = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256', typ: 'nj-cdp-url' }).setSubject('nsess_a').setExpirationTime(2_000_000_000).sign(deps.cookieKey)
  t.equal(await resolveCdpToken(deps, `njc_${cookie}`, 'nsess_a'), null, 'a value signed with the server key')
  now += TOKEN_TTL_MS + 1000
  t.equal(await resolveCdpToken(deps, token, 'nsess_a'), null, 'expired')
})

t.test('CDP clients from npm connect with the session’s HTTP URL', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const started = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: {} })
  const id = started.body.id as string
  const other = 'nsess_' + '0'.repeat(22)
  const connect = (await s.request('GET', `/v1/sessions/${id}/cdp`, { token: acme.apiKey })).body as { url: string; httpUrl: string; httpUrlExpiresAt: string }
  const httpUrl = connect.httpUrl
  const token = new URL(httpUrl).pathname.split('/').pop()!
  // clients' errors name the URL they fetched: a failure shows it without the token
  const hidden = (body: (t: Test) => Promise<void>) => (t: Test) => body(t).catch((e: unknown) => {
    throw new Error(String(e instanceof Error ? e.message : e).replaceAll(token, '<token>'))
  })
  const pages = async () => ((await (await fetch(`${httpUrl}/json/list`)).json()) as Array<{ type: string; url: string }>).filter((p) => p.type === 'page')

  t.test('[ISSUE-50] discovery answers as Chrome does, for this session only; the token opens nothing else', hidden(async (t) => {
    t.ok(httpUrl.startsWith(`${s.url}/v1/sessions/${id}/cdp/njc_`), 'an http URL under the session’s CDP endpoint')
    t.ok(Date.parse(connect.httpUrlExpiresAt) > Date.now(), 'with its expiry')
    const { webSocketDebuggerUrl, ...version } = (await (await fetch(`${httpUrl}/json/version/`)).json()) as Record<string, string>
    t.match(version, { Browser: /Chrome\//, 'Protocol-Version': '1.3', 'User-Agent': /Mozilla/, 'V8-Version': /\d+\./, 'WebKit-Version': /537\.36/ })
    t.ok(webSocketDebuggerUrl === `${s.url.replace(/^http/, 'ws')}/v1/sessions/${id}/cdp/${token}`, 'a WebSocket URL with the same token')
    const protocol = (await (await fetch(`${httpUrl}/json/protocol`)).json()) as { domains: Array<{ domain: string }> }
    t.ok(protocol.domains.some((d) => d.domain === 'Page') && protocol.domains.some((d) => d.domain === 'Runtime'), 'the protocol, browser and JS domains')
    t.ok((await pages()).length >= 1, 'the session’s page is listed')
    const withBearer = await s.request('GET', `/v1/sessions/${id}/cdp/json/list`, { token: acme.apiKey })
    t.equal(withBearer.status, 200, 'a Bearer header works for discovery too')
    // valid for nothing else: not a Bearer credential, not another session
    t.equal((await s.request('GET', `/v1/sessions/${id}`, { token })).status, 401, 'not the REST API')
    t.equal((await fetch(`${s.url}/v1/sessions/${other}/cdp/${token}/json/version`)).status, 401, 'not another session’s discovery')
    t.equal((await fetch(`${s.url}/v1/sessions/${id}/cdp/njc_${'a'.repeat(20)}.${'b'.repeat(20)}.${'c'.repeat(20)}/json/list`)).status, 401, 'a forged token')
    t.equal((await fetch(`${s.url}/v1/sessions/${id}/cdp/json/list`)).status, 401, 'no credential at all')
  }))

  t.test('[ISSUE-50] chrome-remote-interface: default connect (List, /json/protocol, first page), Version, no header', hidden(async (t) => {
    const prefix = new URL(httpUrl).pathname
    // it takes a host and port, no base path: alterPath adds the endpoint's path (once: it also runs on the WebSocket URL)
    const opts: CriOptions = { host: '127.0.0.1', port: Number(new URL(s.url).port), alterPath: (p) => (p.startsWith(prefix) ? p : prefix + p) }
    t.match((await CDP.Version(opts)).Browser, /Chrome\//, 'CDP.Version')
    t.ok((await CDP.List(opts)).some((x) => x.type === 'page'), 'CDP.List')
    const client = await CDP(opts)
    t.teardown(() => client.close().catch(() => {}))
    const loaded = new Promise<void>((resolve) => client.on('Page.loadEventFired', () => resolve()))
    await client.send('Page.enable')
    await client.send('Page.navigate', { url: PAGE })
    await loaded
    const { result } = await client.send('Runtime.evaluate', { expression: 'document.title' })
    t.equal(result.value, 'CDP drive')
    const refused = await client.send('Page.navigate', { url: 'chrome://version' }).then(() => null, (e: Error) => e)
    t.match(String(refused), /nightjar: Page\.navigate is refused/, 'the filter still applies on a page endpoint')
    await client.close()
  }))

  t.test('[ISSUE-50] puppeteer-core connect({browserURL})', hidden(async (t) => {
    const browser = await puppeteer.connect({ browserURL: httpUrl, defaultViewport: null })
    t.teardown(() => browser.disconnect().catch(() => {}))
    const page = (await browser.pages())[0]
    await page.goto(PAGE)
    t.equal(await page.title(), 'CDP drive')
    await browser.disconnect()
  }))

  t.test('[ISSUE-50] playwright-core connectOverCDP with the http URL; a refused navigation leaves no tab behind', hidden(async (t) => {
    const browser = await chromium.connectOverCDP(httpUrl)
    t.teardown(() => browser.close().catch(() => {}))
    const context = browser.contexts()[0]
    const page = context.pages()[0]
    await page.goto(PAGE)
    t.equal(await page.title(), 'CDP drive')
    const before = (await pages()).length
    const tab = await context.newPage()
    const refused = await tab.goto('chrome://version').then(() => null, (e: Error) => e)
    t.match(String(refused), /nightjar: Page\.navigate is refused: scheme chrome:/)
    await tab.waitForEvent('close')
    t.equal((await pages()).length, before, 'the tab opened for it is closed')
    await page.goto('chrome://version').catch(() => {})
    t.equal((await pages()).length, before, 'a tab that showed a page stays')
    t.equal(await page.title(), 'CDP drive')
    const viaNew = await fetch(`${httpUrl}/json/new?chrome://version`, { method: 'PUT' })
    t.equal(viaNew.status, 403, '/json/new with chrome:// is refused')
    t.equal((await pages()).length, before, 'and opens nothing')
    await browser.close()
  }))

  t.test('[ISSUE-50] agent-browser connect <url>', hidden(async (t) => {
    const bin = join(process.cwd(), 'node_modules/agent-browser/bin/agent-browser-linux-x64')
    const home = mkdtempSync(join(tmpdir(), 'agent-browser-'))
    const env = { ...process.env, HOME: home, AGENT_BROWSER_SOCKET_DIR: home, XDG_RUNTIME_DIR: home }
    // a failure names the command, never the URL (it holds the token)
    const ab = (...args: string[]) => run(bin, ['--session', 'nj', ...args], { env, timeout: 30_000 }).catch((e: { stderr?: string }) => {
      throw new Error(`agent-browser ${args[0]} failed: ${String(e.stderr ?? '').replaceAll(token, '<token>')}`)
    })
    t.teardown(() => ab('close').catch(() => {}))
    // it reads a host and port from an http URL (no base path): it is given the WebSocket URL /json/version names
    await ab('connect', httpUrl.replace(/^http/, 'ws'))
    await ab('open', PAGE)
    const { stdout } = await ab('get', 'title')
    t.match(stdout, /CDP drive/)
  }))

  t.test('[ISSUE-50] Playwright MCP over CDP: browser_tabs new chrome://version is refused and leaves no tab', hidden(async (t) => {
    const mcp = new Client({ name: 'nightjar-test', version: '1.0.0' })
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(process.cwd(), 'node_modules/@playwright/mcp/cli.js'), '--cdp-endpoint', httpUrl], stderr: 'ignore' })
    await mcp.connect(transport)
    t.teardown(() => mcp.close())
    const nav = await mcp.callTool({ name: 'browser_navigate', arguments: { url: PAGE } })
    t.match(JSON.stringify(nav.content), /CDP drive/)
    const before = (await pages()).length
    const opened = await mcp.callTool({ name: 'browser_tabs', arguments: { action: 'new', url: 'chrome://version' } })
    t.equal(opened.isError, true, 'refused')
    t.match(JSON.stringify(opened.content), /nightjar: Page\.navigate is refused/)
    // the filter closes the blank tab as it refuses; Chromium drops it from its list a moment later
    await waitFor(async () => (await pages()).length === before, { what: 'the blank tab opened for the refused URL to close' })
    t.pass('no about:blank tab behind')
    const list = await waitFor(async () => {
      const answer = await mcp.callTool({ name: 'browser_tabs', arguments: { action: 'list' } })
      return /about:blank/.test(JSON.stringify(answer.content)) ? null : answer
    }, { what: 'Playwright MCP to list no leftover tab' })
    t.match(JSON.stringify(list.content), /CDP drive/, 'Playwright MCP lists the page that stays, and no leftover tab')
    await mcp.close()
  }))

  t.test('[ISSUE-50] the URL token is never logged nor stored', async (t) => {
    t.ok(!s.logs().includes(token) && !s.logs().includes(token.slice(4, 40)), 'not in the access log')
    const { rows: tables } = await s.testDb.db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")
    const hits: string[] = []
    for (const { table_name: name } of tables) {
      const { rows } = await s.testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}" x WHERE x::text LIKE $1`, [`%${token.slice(4, 40)}%`])
      if (rows[0].n > 0) hits.push(name)
    }
    t.same(hits, [], 'no table holds it (journal, audit, events)')
  })

  t.test('[ISSUE-50] the URL token ends with the session', async (t) => {
    t.equal((await s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })).status, 200)
    t.equal((await fetch(`${httpUrl}/json/version`)).status, 409, 'discovery: session not live')
  })

  t.teardown(async () => {
    // ending the session ends every CDP connection with it
    await s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey }).catch(() => {})
  })
})
