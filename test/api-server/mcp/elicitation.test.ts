// URL elicitation through the real MCP SDK client, Chromium and Postgres, with a client
// that declares `elicitation: { url: {} }` and one that does not: credential_request sends
// the first the console page (a person types the secret, the call completes, and the new
// secret fills a real login), the second gets the URL; request_human likewise with the
// live view. The canary searches every MCP message, table and log line for the typed
// password and TOTP seed: no hits (checked with booleans, never printed).
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { createNamespace, waitForLine } from '../../helpers/netns.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { signIn } from '../../helpers/console.ts'
import { base32 } from '../../helpers/totp-reference.ts'
import { createUser } from '../../../api-server/auth/orgs.ts'
import { shown } from '../../helpers/perceived.ts'
import { dumpAllTables } from '../../helpers/db.ts'

// The login page's server, in its own network namespace: it tells the test only whether
// the password it received equals the one it was started with.
const SERVER = String.raw`
const http = require('node:http')
const expected = process.env.EXPECTED
const verdicts = { match: 0, mismatch: 0 }
const page = (body) => '<!doctype html><html><head><title>Sign in</title></head><body>' + body + '</body></html>'
http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x')
  if (u.pathname === '/__verdicts') { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify(verdicts)) }
  if (u.pathname === '/login.html') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    return res.end(page('<form method="post" action="/login"><label>Password <input id="password" name="password" type="password"></label><button id="submit" type="submit">Sign in</button></form>'))
  }
  if (u.pathname === '/login' && req.method === 'POST') {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    return req.on('end', () => {
      const ok = new URLSearchParams(Buffer.concat(chunks).toString()).get('password') === expected
      verdicts[ok ? 'match' : 'mismatch']++
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(page('<p id="verdict">' + (ok ? 'Welcome back' : 'Wrong password') + '</p>'))
    })
  }
  res.writeHead(404); res.end('not found')
}).listen(80, process.env.LISTEN_IP, () => process.stdout.write('ready\n'))
`

/** A promise and its resolver: what a handler hands the test, instead of a sleep. */
function waiter<T>() {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => { resolve = r })
  return { promise, resolve }
}

/** A queue of events a handler receives; next() waits for the next one. */
function inbox<T>() {
  const items: T[] = []
  const waiting: Array<(v: T) => void> = []
  return {
    push(v: T) { const w = waiting.shift(); if (w) w(v); else items.push(v) },
    next(): Promise<T> { return items.length ? Promise.resolve(items.shift()!) : new Promise((r) => waiting.push(r)) },
    get size() { return items.length },
  }
}

/**
 * The real MCP SDK client; with `url`, it declares URL elicitation and accepts every
 * elicitation (as a client does once its user opened the URL), or declines it. Every JSON-RPC message
 * both ways is kept as text for the canary.
 */
async function client(t: { teardown(fn: () => unknown): void }, s: TestServer, token: string, messages: string[], url: boolean, action: 'accept' | 'decline' = 'accept') {
  const c = new Client({ name: `nightjar-elicit-${url ? 'url' : 'plain'}`, version: '1.0.0' }, url ? { capabilities: { elicitation: { url: {} } } } : {})
  const elicitations = inbox<ElicitRequest['params']>()
  const completions = inbox<string>()
  if (url) {
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params)
      return { action }
    })
    c.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => { completions.push(n.params.elicitationId) })
  }
  const transport = new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  await c.connect(transport)
  const received = transport.onmessage!
  transport.onmessage = (m) => { messages.push(JSON.stringify(m)); received(m) }
  const send = transport.send.bind(transport)
  transport.send = (m, o) => { messages.push(JSON.stringify(m)); return send(m, o) }
  t.teardown(() => c.close())
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any }
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent?.error?.message ?? 'no message')}`)
    return r.structuredContent
  }
  return { client: c, transport, elicitations, completions, call }
}

t.test('URL elicitation: credential_request and request_human', async (t) => {
  const password = `pw-${randomBytes(18).toString('base64url')}`
  const seed = randomBytes(20)
  const seedB32 = base32(seed)
  const space = await createNamespace(t)
  const server = space.spawn(process.execPath, ['-e', SERVER], { EXPECTED: password, LISTEN_IP: space.ip })
  await waitForLine(server, 'ready', 15_000)
  const verdicts = async () => (await (await fetch(`http://${space.ip}/__verdicts`)).json()) as { match: number; mismatch: number }

  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'login.example.com': space.ip }), NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const ident = await rest('POST', '/v1/identities', { name: 'shop-account' })
  const grant = await rest('POST', `/v1/identities/${ident.body.id}/grants`, {
    principalAgentId: acme.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(), allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: 'test',
  })
  t.equal(grant.status, 201)

  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  // the person signs in once; later pages open in the same browser context
  let signedIn = false
  const open = async (url: string) => {
    const path = new URL(url).pathname
    if (!signedIn) {
      signedIn = true
      return signIn(s, ctx, acme.email, acme.password, path)
    }
    const page = await ctx.newPage()
    await page.goto(url)
    return page
  }
  const messages: string[] = []
  const withUrl = await client(t, s, acme.apiKey, messages, true)
  const plain = await client(t, s, acme.apiKey, messages, false)

  await t.test('[INV-02] [INV-03] a client with URL elicitation: the console page is elicited, a person enters the password, the completion arrives, credential_fill types it', async (t) => {
    const pending = withUrl.call('credential_request', { identity: 'shop-account', credentialName: 'shop-login', originAllowlist: ['login.example.com'], reason: 'the shop asks for a password' })
    const asked = await withUrl.elicitations.next()
    t.equal(asked.mode, 'url', 'elicitation/create in mode url')
    const url = (asked as { url: string }).url
    const elicitationId = (asked as { elicitationId: string }).elicitationId
    t.ok(url.startsWith(`${s.url}/console/credential-requests/ncreq_`), 'pointing at the console page')
    t.match(asked.message, /shop-login/)

    const page = await open(url)
    t.equal((await page.textContent('#request-name'))?.trim(), 'shop-login')
    t.equal((await page.textContent('#request-reason'))?.trim(), 'the shop asks for a password', 'the agent’s reason is shown')
    t.ok((await page.textContent('#credential-request'))?.includes(acme.agentId), 'and which agent asks')
    t.equal(await page.getAttribute('#credential-value', 'type'), 'password', 'typed into a password field')
    await page.fill('#credential-value', password)
    await page.click('#credential-request-form button[type=submit]')
    await page.waitForSelector('#credential-saved')
    t.notOk((await page.content()).includes(password), 'the page after saving does not hold the password')

    t.equal(await withUrl.completions.next(), elicitationId, 'notifications/elicitation/complete for that elicitation')
    const result = await pending
    t.has(result, { id: elicitationId, credentialName: 'shop-login', status: 'completed', elicited: true, identityId: ident.body.id })

    const list = await withUrl.call('credential_list', { identityId: ident.body.id })
    t.same((list.result as any[]).map((c) => [c.name, c.kind, c.originAllowlist]), [['shop-login', 'password', ['login.example.com']]])

    const { id: sessionId } = await withUrl.call('session_start', { identity: ident.body.id })
    await withUrl.call('navigate', { sessionId, url: 'http://login.example.com/login.html' })
    const fill = await withUrl.call('credential_fill', { sessionId, credentialName: 'shop-login', selector: '#password' })
    t.has(fill, { ok: true, credentialName: 'shop-login', fieldKind: 'password', host: 'login.example.com' })
    await withUrl.call('act', { sessionId, verb: 'click', selector: '#submit' })
    t.match(shown(await withUrl.call('perceive', { sessionId })), /Welcome back/)
    t.same(await verdicts(), { match: 1, mismatch: 0 }, 'the login page’s server received exactly the password the person typed')
    await withUrl.call('session_end', { sessionId })

    const again = await page.goto(url)
    t.equal(again?.status(), 404, 'the request is single use: answered, it is the one 404')
  })

  await t.test('[INV-04] a client without URL elicitation gets the URL; a person pastes a TOTP seed; credential_list shows it; other orgs and unknown ids get the same 404', async (t) => {
    const asked = await plain.call('credential_request', { identity: ident.body.id, credentialName: 'shop-otp', originAllowlist: ['login.example.com'], reason: 'a second factor' })
    t.has(asked, { credentialName: 'shop-otp', status: 'pending', elicited: false })
    t.ok(asked.url.startsWith(`${s.url}/console/credential-requests/ncreq_`), 'the URL is in the result')
    t.ok(Date.parse(asked.expiresAt) - Date.now() > 590_000, 'it expires in ten minutes')
    t.equal(withUrl.elicitations.size + plain.elicitations.size, 0, 'nothing was elicited')
    const names = async () => ((await plain.call('credential_list', { identityId: ident.body.id })).result as any[]).map((c) => c.name)
    t.notOk((await names()).includes('shop-otp'), 'not there yet')

    // another org's person, and an unknown id: the same 404 page
    const stranger = await browser.newContext()
    t.teardown(() => stranger.close())
    const foreign = await signIn(s, stranger, other.email, other.password, '/console/keys')
    const cross = await foreign.goto(asked.url)
    const crossText = await foreign.textContent('main')
    const unknown = await foreign.goto(`${s.url}/console/credential-requests/ncreq_0000000000000000000000`)
    t.equal(cross?.status(), 404)
    t.equal(unknown?.status(), 404)
    t.equal(crossText, await foreign.textContent('main'), 'byte-identical: no existence oracle')
    // a form posted from another origin is refused before anything is saved
    const forged = await foreign.request.post(asked.url, { headers: { origin: 'https://evil.example' }, form: { kind: 'password', value: 'x', csrf: 'x' } })
    t.equal(forged.status(), 403, 'another origin is refused')

    // a person of the org whose role cannot write credentials sees no form, and cannot post one
    await createUser(s.testDb.db, acme.orgId, 'member@acme.test', 'member password 1', 'member')
    const memberCtx = await browser.newContext()
    t.teardown(() => memberCtx.close())
    const memberPage = await signIn(s, memberCtx, 'member@acme.test', 'member password 1', new URL(asked.url).pathname)
    t.equal(await memberPage.isVisible('#credential-request-form'), false, 'no form for a member')
    t.match(await memberPage.textContent('main'), /identities:write/, 'the page says which scope is missing')
    const csrf = await memberPage.getAttribute('header input[name=csrf]', 'value')
    t.ok(csrf && csrf.length > 10, 'the member holds a valid form token (the sign-out form’s)')
    const byMember = await memberPage.request.post(asked.url, { headers: { origin: s.url }, form: { kind: 'password', value: 'x', csrf: csrf ?? '' } })
    t.equal(byMember.status(), 403, 'a member’s post with a valid form token is refused')

    const page = await open(asked.url)
    // same origin but no form token: refused, nothing saved
    const noToken = await page.request.post(asked.url, { headers: { origin: s.url }, form: { kind: 'totp', value: seedB32 } })
    t.equal(noToken.status(), 403, 'a post without the form token is refused')
    t.notOk((await names()).includes('shop-otp'))
    await page.selectOption('#credential-kind', 'totp')
    await page.fill('#credential-value', `otpauth://totp/Shop:alice?secret=${seedB32}&issuer=Shop&digits=6&period=30`)
    await page.click('#credential-request-form button[type=submit]')
    await page.waitForSelector('#credential-saved')
    const list = (await plain.call('credential_list', { identityId: ident.body.id })).result as any[]
    t.same(list.filter((c) => c.name === 'shop-otp').map((c) => [c.kind, c.maskedValue]), [['totp', '••••••••']], 'credential_list shows it, masked')
  })

  await t.test('a user who declines the URL: the call answers declined at once, and the request stays open for the URL', async (t) => {
    const declining = await client(t, s, acme.apiKey, messages, true, 'decline')
    const r = await declining.call('credential_request', { identity: ident.body.id, credentialName: 'declined-one', originAllowlist: ['login.example.com'], reason: 'not now' })
    t.equal((await declining.elicitations.next()).mode, 'url', 'it was asked')
    t.has(r, { status: 'declined', elicited: true })
    t.equal(declining.completions.size, 0, 'nothing completed')
    const page = await open(r.url)
    t.equal(await page.isVisible('#credential-request-form'), true, 'a person can still answer it until it expires')
    await page.close()
  })

  await t.test('request_human with URL elicitation: the live view is elicited; the completion arrives when control is handed back', async (t) => {
    const { id: sessionId } = await withUrl.call('session_start', {})
    const pending = withUrl.call('request_human', { sessionId, reason: 'solve the puzzle' })
    const asked = await withUrl.elicitations.next()
    t.equal(asked.mode, 'url')
    const url = (asked as { url: string }).url
    t.equal(url, `${s.url}/console/sessions/${sessionId}`, 'the live view')
    const live = await open(url)
    await live.click('#take')
    await live.waitForSelector('#hand-back')
    t.equal((await plain.call('session_get', { sessionId })).control, 'human', 'the person holds the browser')
    t.equal(withUrl.completions.size, 0, 'no completion while the person holds control')
    await live.click('#hand-back')
    t.equal(await withUrl.completions.next(), (asked as { elicitationId: string }).elicitationId, 'completion once control is handed back')
    t.has(await pending, { sessionId, url, control: 'agent', elicitation: 'completed' })

    // without URL elicitation: the URL at once, as before
    const plainAsk = await plain.call('request_human', { sessionId, reason: 'look at this' })
    t.same(plainAsk, { sessionId, url, status: 'live', control: 'agent' })
    await withUrl.call('session_end', { sessionId })
  })

  await t.test('[INV-03] canary: the typed password and the TOTP seed are in no MCP message, no table, no log line', async (t) => {
    const forms = (secret: string) => [secret, secret.slice(0, 16), secret.slice(-16)]
    const secrets = [...forms(password), ...forms(seedB32), seed.toString('hex'), seed.toString('base64').slice(0, 20)]
    const places: Record<string, string> = {
      'MCP messages': messages.join('\n'),
      tables: await dumpAllTables(s.testDb.db),
      logs: s.logs(),
    }
    t.ok(messages.some((m) => m.includes('elicitation/create')) && messages.some((m) => m.includes('notifications/elicitation/complete')), 'the elicitations are among the messages searched')
    t.ok(places.tables.includes('## credential_requests') && places.tables.includes('shop-login') && places.logs.length > 0, 'the places searched are not empty')
    for (const [where, text] of Object.entries(places)) t.equal(secrets.filter((f) => text.includes(f)).length, 0, `no form of either secret in the ${where}`)
    // the search finds what it looks for
    t.equal(secrets.filter((f) => `x${password}y${seedB32}`.includes(f)).length, 6)
  })
})
