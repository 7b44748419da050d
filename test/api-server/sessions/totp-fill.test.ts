// A TOTP credential end to end: a person pastes an otpauth:// URI into
// the console (real Chromium); an agent on the real MCP SDK client fills the credential
// into a login page's one-time-code field; the page's own server — in a network
// namespace, with its own HMAC implementation written from RFC 4226/6238 — accepts the
// code. Then the canary: neither the seed nor any code of the fill's time window is in
// any MCP message, any REST reply, any table, any log line or the session's recording.
// Seeds and codes are only checked with booleans, never printed.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTestServer, type Reply, type TestServer } from '../../helpers/server.ts'
import { createNamespace, waitForLine } from '../../helpers/netns.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { signIn } from '../../helpers/console.ts'
import { base32, totp } from '../../helpers/totp-reference.ts'
import { shown } from '../../helpers/perceived.ts'
import { dumpAllTables } from '../../helpers/db.ts'

// The login page's server, run inside the namespace. Its TOTP check is its own (not
// the otpauth package, not the test helper): HOTP per RFC 4226 §5.3 over the step of
// RFC 6238, accepting the current step and the one before (RFC 6238 §5.2's allowance
// for transmission delay). /__verdicts tells the test what it decided.
const SERVER = String.raw`
const http = require('node:http'), crypto = require('node:crypto')
const key = Buffer.from(process.env.SEED_HEX, 'hex'), digits = Number(process.env.DIGITS), period = Number(process.env.PERIOD), alg = process.env.ALG
const verdicts = { accepted: 0, rejected: 0 }
function hotp(counter) {
  const msg = Buffer.alloc(8); msg.writeBigUInt64BE(BigInt(counter))
  const mac = crypto.createHmac(alg, key).update(msg).digest()
  const o = mac[mac.length - 1] & 15
  const bin = ((mac[o] & 127) << 24) | (mac[o + 1] << 16) | (mac[o + 2] << 8) | mac[o + 3]
  return String(bin % 10 ** digits).padStart(digits, '0')
}
const page = (body) => '<!doctype html><html><head><title>Sign-in step 2</title></head><body>' + body + '</body></html>'
http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x')
  if (u.pathname === '/__verdicts') { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify(verdicts)) }
  if (u.pathname === '/otp.html') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    return res.end(page('<h1>Enter the code from your authenticator app</h1><form method="post" action="/verify"><label>Code <input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code"></label><button id="submit" type="submit">Verify</button></form>'))
  }
  if (u.pathname === '/verify' && req.method === 'POST') {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    return req.on('end', () => {
      const code = new URLSearchParams(Buffer.concat(chunks).toString()).get('otp') || ''
      const step = Math.floor(Date.now() / 1000 / period)
      const ok = code.length === digits && (code === hotp(step) || code === hotp(step - 1))
      verdicts[ok ? 'accepted' : 'rejected']++
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(page('<p id="verdict">' + (ok ? 'Code accepted: signed in' : 'Code rejected') + '</p>'))
    })
  }
  res.writeHead(404); res.end('not found')
}).listen(80, process.env.LISTEN_IP, () => process.stdout.write('ready\n'))
`

/** The real MCP SDK client, every JSON-RPC message both ways kept as text for the canary. */
async function recordingMcpClient(t: { teardown(fn: () => unknown): void }, s: TestServer, token: string, messages: string[]) {
  const client = new Client({ name: 'nightjar-totp-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  await client.connect(transport)
  const received = transport.onmessage!
  transport.onmessage = (m) => { messages.push(JSON.stringify(m)); received(m) }
  const send = transport.send.bind(transport)
  transport.send = (m, o) => { messages.push(JSON.stringify(m)); return send(m, o) }
  t.teardown(() => client.close())
  return client
}

t.test('a TOTP credential: pasted in the console, its code typed by credential_fill, accepted by the page', async (t) => {
  const seed = randomBytes(20)
  const seedB32 = base32(seed)
  const space = await createNamespace(t)
  const server = space.spawn(process.execPath, ['-e', SERVER], { SEED_HEX: seed.toString('hex'), DIGITS: '6', PERIOD: '30', ALG: 'sha1', LISTEN_IP: space.ip })
  await waitForLine(server, 'ready', 15_000)
  const verdicts = async () => (await (await fetch(`http://${space.ip}/__verdicts`)).json()) as { accepted: number; rejected: number }

  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'otp.example.com': space.ip }), NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  const replies: string[] = []
  const rest = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    replies.push(r.text)
    return r
  }
  const ident = await rest('POST', '/v1/identities', { name: 'two-factor' })
  const grant = await rest('POST', `/v1/identities/${ident.body.id}/grants`, {
    principalAgentId: acme.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(), allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: 'test',
  })
  t.equal(grant.status, 201)
  const started = Date.now()

  await t.test('a person pastes the otpauth:// URI in the console; only bullets come back', async (t) => {
    const browser = await launchTestBrowser(t)
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await signIn(s, ctx, acme.email, acme.password, `/console/identities/${ident.body.id}`)
    const seen: Promise<string>[] = []
    page.on('response', (r) => { seen.push(r.text().catch(() => '')) })
    await page.fill('#credential-name', 'otp')
    await page.selectOption('#credential-kind', 'totp')
    await page.fill('#credential-value', `otpauth://totp/Example:alice%40example.com?secret=${seedB32}&issuer=Example&algorithm=SHA1&digits=6&period=30`)
    await page.fill('#credential-hosts', 'otp.example.com')
    await page.click('#credential-create button[type=submit]')
    await page.waitForURL(/\?done=credential-created#credentials$/)
    t.equal((await page.textContent('#credentials .mask'))?.trim(), 'TOTP ••••••••', 'listed as TOTP, the mask shows nothing of the seed')
    const bodies = (await Promise.all(seen)).join('\n') + (await page.content())
    t.ok(bodies.length > 0 && !bodies.includes(seedB32) && !bodies.includes(seedB32.slice(0, 16)), 'no page the person saw after saving holds the seed')
    const list = await rest('GET', `/v1/identities/${ident.body.id}/credentials`)
    t.same(list.body.map((c: any) => [c.name, c.kind, c.maskedValue]), [['otp', 'totp', '••••••••']])
  })

  const messages: string[] = []
  let sessionId = ''
  await t.test('credential_fill over MCP types the current code; the page’s server accepts it', async (t) => {
    const mcp = await recordingMcpClient(t, s, acme.apiKey, messages)
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any }
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent?.error?.message ?? r)}`)
      return r.structuredContent
    }
    // recorded (a REST-only start field), then driven over MCP
    const start = await rest('POST', '/v1/sessions', { identity: ident.body.id, record: true })
    t.equal(start.status, 201)
    sessionId = start.body.id
    await call('navigate', { sessionId, url: 'http://otp.example.com/otp.html' })
    const fill = await call('credential_fill', { sessionId, credentialName: 'otp', selector: '#otp' })
    // a fill answers with what it changed, the field drawn masked; the canary below searches it too
    const { changes: _fillChanges, ...fillResult } = fill
    t.same(fillResult, { ok: true, credentialName: 'otp', fieldKind: 'text', host: 'otp.example.com' }, 'the fill result names the field, never the code')
    await call('act', { sessionId, verb: 'click', selector: '#submit' })
    const after = await call('perceive', { sessionId })
    t.match(shown(after), /Code accepted: signed in/, 'the page’s own TOTP check accepted the typed code')
    t.same(await verdicts(), { accepted: 1, rejected: 0 })
    await call('session_end', { sessionId })
  })

  await t.test('canary: no seed and no code of the fill’s window in MCP messages, replies, tables, logs or the recording', async (t) => {
    const events = await rest('GET', `/v1/sessions/${sessionId}/recording/events`)
    t.equal(events.status, 200)
    t.ok(Array.isArray(events.body.events) && events.body.events.length > 0, 'the session was recorded')
    const journal = await rest('GET', `/v1/sessions/${sessionId}/journal`)
    t.ok(journal.body.items.some((r: any) => r.op === 'credential_fill'), 'the journal has the fill')
    const audit = await rest('GET', '/v1/audit?action=credential.fill')
    t.ok(audit.body.items.some((r: any) => r.credentialName === 'otp' && r.host === 'otp.example.com'), 'the fill is audited by name and host')
    // every code valid from before the fill until now, one step either side
    const codes = new Set<string>()
    for (let at = Math.floor(started / 1000) - 30; at <= Math.floor(Date.now() / 1000) + 30; at += 30) codes.add(totp(seed, at))
    const seedForms = [seedB32, seedB32.slice(0, 16), seedB32.slice(-16), seed.toString('hex'), seed.toString('base64').slice(0, 20)]
    const places: Record<string, string> = {
      'MCP messages': messages.join('\n'),
      'REST replies': replies.join('\n'),
      tables: await dumpAllTables(s.testDb.db),
      logs: s.logs(),
    }
    t.ok(messages.length >= 10 && places.tables.includes('## credentials') && places.logs.length > 0, 'the places searched are not empty')
    for (const [where, text] of Object.entries(places)) {
      t.equal(seedForms.filter((f) => text.includes(f)).length, 0, `no form of the seed in the ${where}`)
      // a 6-digit code can occur by chance in long text; look for it where a value would stand
      const codeHits = [...codes].filter((c) => new RegExp(`(^|[^0-9])${c}([^0-9]|$)`).test(text)).length
      t.equal(codeHits, 0, `no code of the window in the ${where}`)
    }
    const recording = JSON.stringify(events.body)
    t.equal([...codes].filter((c) => recording.includes(c)).length, 0, 'no code anywhere in the recording')
    t.equal(seedForms.filter((f) => recording.includes(f)).length, 0, 'no seed in the recording')
    // the search detects what it looks for
    t.ok(new RegExp(`(^|[^0-9])${[...codes][0]}([^0-9]|$)`).test(`x ${[...codes][0]} y`))
  })
})
