// The secure fill end to end: real Chromium, real "public web" hosts in a network
// namespace (example.com, login.example.com, evil-example.com), real KMS sealing.
import t from 'tap'
import { startTestServer, type Reply } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { fnv1a } from '../../helpers/fnv.ts'
import { shown } from '../../helpers/perceived.ts'
import { dumpAllTables } from '../../helpers/db.ts'

const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-pw'
const CANARY_B = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-pw'


t.test('secure fill', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip, 'evil-example.com': web.ip, 'other.example.org': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const replies: string[] = []
  const req = async (method: string, path: string, body?: unknown, token = acme.apiKey): Promise<Reply> => {
    const r = await s.request(method, path, { token, body })
    replies.push(r.text)
    return r
  }
  const persona = await createPersona(s, acme.apiKey, { name: 'shopper', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })
  const open = async (body: Record<string, unknown> = { identity: persona.identityId }) => {
    const r = await req('POST', '/v1/sessions', body)
    if (r.status !== 201) throw new Error(`session_start ${r.status} ${r.text}`)
    return r.body.id as string
  }
  const end = (id: string) => req('DELETE', `/v1/sessions/${id}`)
  const audit = async (action: string) => (await req('GET', `/v1/audit?action=${encodeURIComponent(action)}&limit=500`)).body.items as any[]

  t.test('[INV-02] [RULE-01] [RULE-04] [RULE-05] [RULE-06] [EP-18] [EV-01] a password field on an allowed origin receives the secret', async (t) => {
    const id = await open()
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
    const fill = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(fill.status, 200)
    t.has(fill.body, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' })
    await req('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#submit' })
    const seen = await req('POST', `/v1/sessions/${id}/perceive`, {})
    t.ok(shown(seen.body).includes(`len=${CANARY.length} fnv=${fnv1a(CANARY)}`), 'the page received exactly the secret')
    t.notOk(seen.text.includes(CANARY), 'perceive never shows a password value')
    const rows = await audit('credential.fill')
    t.equal(rows.length, 1)
    t.same([rows[0].credentialName, rows[0].host, rows[0].sessionId], ['login', 'login.example.com', id])
    await end(id)
  })

  t.test('[INV-03] the fill act screenshot does not show the value: two secrets, identical pixels', async (t) => {
    const shots: Buffer[] = []
    for (const value of [CANARY, CANARY_B]) {
      const rot = await req('POST', `/v1/identities/${persona.identityId}/credentials/${persona.credentialId}/rotate`, { value })
      t.equal(rot.status, 200)
      const id = await open()
      await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
      await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
      await req('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#user' }) // blur: no caret in the shot
      const shot = await s.request('POST', `/v1/sessions/${id}/screenshot`, { token: acme.apiKey, body: {} })
      shots.push(Buffer.from(shot.body.png, 'base64'))
      await end(id)
    }
    t.ok(shots[0].equals(shots[1]), 'the rendered page is the same whatever the secret')
    t.notOk(shots[0].includes(Buffer.from(CANARY)))
  })

  t.test('[RULE-05] [ERR-11] [EV-03] a redirect to a foreign host is refused before any keystroke', async (t) => {
    const id = await open()
    const nav = await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/redirect?to=http://evil-example.com/fill-check.html' })
    t.equal(new URL(nav.body.url).host, 'evil-example.com')
    const fill = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(fill.status, 403)
    t.equal(fill.body.error.message, 'origin not on the credential allowlist')
    t.equal(fill.body.error.reason, 'credential.origin_denied')
    await req('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#submit' })
    const seen = await req('POST', `/v1/sessions/${id}/perceive`, {})
    t.match(shown(seen.body), /len=0 /, 'nothing was typed')
    const rows = await audit('credential.origin_denied')
    t.ok(rows.some((r) => r.host === 'evil-example.com' && r.sessionId === id))
    await end(id)
  })

  t.test('[RULE-05] a lookalike host does not match; a real subdomain does (dot boundary)', async (t) => {
    const p2 = await createPersona(s, acme.apiKey, { name: 'broad', value: CANARY, originAllowlist: ['example.com'], agentId: acme.agentId })
    const id = await open({ identity: p2.identityId })
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://evil-example.com/fill-check.html' })
    const bad = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(bad.status, 403)
    t.equal(bad.body.error.reason, 'credential.origin_denied')
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
    const good = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(good.status, 200)
    await end(id)
  })

  t.test('[ERR-12] [EV-04] a button or checkbox target is refused with its field kind', async (t) => {
    const id = await open()
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/login.html' })
    for (const [sel, kind] of [['#submit', 'button'], ['#remember', 'checkbox']]) {
      const r = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: sel })
      t.equal(r.status, 403)
      t.equal(r.body.error.reason, 'credential.field_denied')
      t.equal(r.body.error.field_kind, kind)
    }
    const rows = await audit('credential.field_denied')
    t.same(rows.filter((r) => r.sessionId === id).map((r) => r.fieldKind).sort(), ['button', 'checkbox'])
    await end(id)
  })

  t.test('[ERR-10] [RULE-03] a grant whose origins are disjoint from the credential is a hard deny', async (t) => {
    const p3 = await createPersona(s, acme.apiKey, {
      name: 'narrowed', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId, grant: { allowedOrigins: ['other.example.org'] },
    })
    const id = await open({ identity: p3.identityId })
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
    const r = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(r.status, 403)
    t.equal(r.body.error.message, 'grant-origin denied')
    t.equal(r.body.error.reason, 'grant_intersection')
    await end(id)
  })

  t.test('[ERR-07] [ERR-08] anonymous sessions and unknown names', async (t) => {
    const anon = await open({})
    const r = await req('POST', `/v1/sessions/${anon}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(r.status, 400)
    t.equal(r.body.error.message, 'session has no bound identity; cannot fill a credential')
    await end(anon)
    const id = await open()
    const nope = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'nope', selector: '#pw' })
    t.equal(nope.status, 404)
    t.equal(nope.body.error.message, 'no credential named nope')
    const extra = await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw', value: 'x' })
    t.equal(extra.status, 400, '[EP-18] no other field')
    await end(id)
  })

  t.test('[EP-38] credential_fill over MCP: closed schema, no value field', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const { tools } = await mcp.listTools()
    const tool = tools.find((x) => x.name === 'credential_fill')!
    // selector or ref: exactly one, refused 400 otherwise; still no text, value or timeout
    t.same(Object.keys((tool.inputSchema as any).properties).sort(), ['changes', 'credentialName', 'ref', 'selector', 'sessionId'])
    t.same((tool.inputSchema as any).required.sort(), ['credentialName', 'sessionId'])
    t.equal((tool.inputSchema as any).additionalProperties, false)
    const id = await open()
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
    const r = await mcp.callTool({ name: 'credential_fill', arguments: { sessionId: id, credentialName: 'login', selector: '#pw' } })
    replies.push(JSON.stringify(r))
    t.notOk(r.isError)
    t.has(r.structuredContent, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' })
    const neither = await mcp.callTool({ name: 'credential_fill', arguments: { sessionId: id, credentialName: 'login' } })
    t.equal(neither.isError, true, 'neither selector nor ref: refused')
    const both = await mcp.callTool({ name: 'credential_fill', arguments: { sessionId: id, credentialName: 'login', selector: '#pw', ref: 'e1' } })
    t.equal(both.isError, true, 'both: refused')
    const withText = await mcp.callTool({ name: 'credential_fill', arguments: { sessionId: id, credentialName: 'login', selector: '#pw', text: 'x' } })
    t.equal(withText.isError, true)
    await end(id)
  })

  t.test('[RULE-16] [ERR-13] [EV-02] [ERR-09] the free-text path is off by default and audited', async (t) => {
    const id = await open()
    await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
    const r = await req('POST', `/v1/sessions/${id}/act`, { verb: 'type', selector: '#pw', text: '{{credential:login}}' })
    t.equal(r.status, 403)
    t.equal(r.body.error.message, 'free-text fill denied')
    t.equal(r.body.error.reason, 'freetext_disabled')
    t.ok((await audit('CREDENTIAL_FREETEXT_DENIED')).some((x) => x.sessionId === id))
    await req('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#submit' })
    t.match(shown((await req('POST', `/v1/sessions/${id}/perceive`, {})).body), /len=0 /, 'the marker never reached the page')

    const gov = await req('PUT', '/v1/governance', { credential_freetext_fill: true })
    t.equal(gov.status, 200)
    const ok = await req('POST', `/v1/sessions/${id}/act`, { verb: 'type', selector: '#pw', text: '{{credential:login}}' })
    t.equal(ok.status, 200)
    t.equal(ok.body.fieldKind, 'password')
    const absent = await req('POST', `/v1/sessions/${id}/act`, { verb: 'type', selector: '#pw', text: '{{credential:nope}}' })
    t.equal(absent.status, 400)
    t.equal(absent.body.error.message, 'no credential {{credential:nope}}')
    await req('PUT', '/v1/governance', { credential_freetext_fill: false })
    await end(id)
  })

  t.test('[INV-03] canary: the secret is nowhere — responses, journal, audit, logs, database', async (t) => {
    const journals: string[] = []
    for (const row of (await s.testDb.db.query('select id from sessions')).rows) {
      journals.push((await s.request('GET', `/v1/sessions/${row.id}/journal`, { token: acme.apiKey })).text)
    }
    const auditAll = (await s.request('GET', '/v1/audit?limit=500', { token: acme.apiKey })).text
    const dump = await dumpAllTables(s.testDb.db)
    for (const canary of [CANARY, CANARY_B]) {
      t.notOk(replies.some((r) => r.includes(canary)), 'no response carries it')
      t.notOk(journals.some((j) => j.includes(canary)), 'no journal carries it')
      t.notOk(auditAll.includes(canary), 'no audit row carries it')
      t.notOk(s.logs().includes(canary), 'no log line carries it')
      t.notOk(dump.includes(canary), 'no table holds it in clear')
      t.notOk(dump.includes(Buffer.from(canary).toString('base64')), 'nor base64-encoded')
    }
    t.ok(dump.length > 1000 && journals.length > 5, 'the search covered real data')
  })
})
