// A session end to end through both doors, against real Chromium.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { mintKey } from '../../../api-server/auth/keys.ts'
import { shown } from '../../helpers/perceived.ts'

const PAGE = 'data:text/html,' + encodeURIComponent(`<title>Shop</title><h1>Welcome</h1>
<button id="go" onclick="document.getElementById('out').textContent='clicked'">Go</button>
<input id="q" aria-label="Search"><select id="s" aria-label="Size"><option>s</option><option>m</option></select>
<p id="out">idle</p><script>console.log('page says hi')</script>`)

t.test('sessions end to end', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()

  t.test('[INV-01] [FLD-27] [FLD-28] [FLD-29] [EP-32] [EP-35] [EP-36] [EP-37] [EP-39] [EP-40] open, navigate, perceive, act, screenshot, end over MCP', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await mcp.callTool({ name, arguments: args })
      if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
      return r
    }
    const started = (await call('session_start', { url: 'https://example.com/' })).structuredContent as any
    t.match(started.id, /^nsess_[0-9A-Za-z]{22}$/)
    t.equal(started.egress, 'platform', 'the agent default egress')
    t.equal(started.status, 'live', '[ST-09] status live')
    t.equal(started.url, 'https://example.com/', '[FLD-33] url is recorded')
    t.same(started.openedBy, { principalId: acme.agentId, credentialId: acme.apiKeyId, name: 'owner (bootstrap)' }, '[FLD-31] openedBy')
    const first = (await call('perceive', { sessionId: started.id })).structuredContent as any
    t.equal(first.url, 'about:blank', 'url set at create is not navigated')

    const nav = (await call('navigate', { sessionId: started.id, url: PAGE })).structuredContent as any
    t.equal(nav.title, 'Shop')
    const seen = (await call('perceive', { sessionId: started.id, full: true })).structuredContent as any
    t.match(seen.snapshot, /heading "Welcome"/)
    t.match(shown(seen), /idle/)
    await call('act', { sessionId: started.id, verb: 'click', selector: '#go' })
    await call('act', { sessionId: started.id, verb: 'type', selector: '#q', text: 'boots' })
    await call('select_option', { sessionId: started.id, selector: '#s', values: ['m'] })
    await call('hover', { sessionId: started.id, selector: '#go' })
    await call('wait_for', { sessionId: started.id, text: 'clicked' })
    const after = (await call('perceive', { sessionId: started.id })).structuredContent as any
    t.match(shown(after), /clicked/)
    const shot = await call('screenshot', { sessionId: started.id })
    const img = (shot.content as any)[0]
    t.equal(img.type, 'image')
    t.equal(img.mimeType, 'image/png')
    t.equal(Buffer.from(img.data, 'base64').subarray(1, 4).toString(), 'PNG')
    const cons = (await call('console_messages', { sessionId: started.id })).structuredContent as any
    t.ok(cons.messages.some((m: any) => m.text === 'page says hi'))
    const pdf = await call('pdf', { sessionId: started.id })
    t.equal(Buffer.from((pdf.content as any)[0].resource.blob, 'base64').subarray(0, 4).toString(), '%PDF')
    await call('reload', { sessionId: started.id })
    const ended = (await call('session_end', { sessionId: started.id })).structuredContent as any
    t.equal(ended.status, 'ended')
    const again = (await call('session_end', { sessionId: started.id })).structuredContent as any
    t.equal(again.status, 'ended', '[ST-10] ending twice is fine')
    const drive = await mcp.callTool({ name: 'navigate', arguments: { sessionId: started.id, url: PAGE } })
    t.equal(drive.isError, true)
    t.match((drive.content as any)[0].text, /session is ended/)
  })

  t.test('the same flow over REST, with the journal', async (t) => {
    const start = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: { agent: '' } })
    t.equal(start.status, 201)
    const id = start.body.id
    const nav = await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: PAGE } })
    t.equal(nav.body.title, 'Shop')
    const typed = await s.request('POST', `/v1/sessions/${id}/act`, { token: acme.apiKey, body: { verb: 'type', selector: '#q', text: 'private words' } })
    t.equal(typed.status, 200)
    const list = await s.request('GET', '/v1/sessions?status=live', { token: acme.apiKey })
    t.ok(list.body.items.some((x: any) => x.id === id))
    const journal = await s.request('GET', `/v1/sessions/${id}/journal`, { token: acme.apiKey })
    t.same(journal.body.items.map((e: any) => e.op), ['session_start', 'navigate', 'act'])
    t.notOk(journal.text.includes('private words'), 'typed text never enters the journal')
    t.equal((await s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })).body.status, 'ended')
  })

  t.test("a start that leaves egress out takes its agent's default (read by admission); one that names it keeps it; the journal's first row says which", async (t) => {
    await s.testDb.db.query(`update agents set default_egress = 'local' where id = $1`, [acme.agentId])
    t.teardown(() => s.testDb.db.query(`update agents set default_egress = 'platform' where id = $1`, [acme.agentId]))
    const byDefault = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: {} })
    t.equal(byDefault.status, 201)
    t.equal(byDefault.body.egress, 'local', "the agent's default egress")
    t.equal((await s.request('GET', `/v1/sessions/${byDefault.body.id}`, { token: acme.apiKey })).body.egress, 'local', 'as written on the row')
    const journal = await s.request('GET', `/v1/sessions/${byDefault.body.id}/journal`, { token: acme.apiKey })
    t.same(journal.body.items.map((e: any) => [e.op, e.detail?.egress]), [['session_start', 'local']])
    const named = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: { egress: 'platform' } })
    t.equal(named.body.egress, 'platform', 'an explicit egress wins over the default')
    for (const id of [byDefault.body.id, named.body.id]) await s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })
  })

  t.test('[RULE-32] the SDK agent defaults to the credential agent; another agent is refused', async (t) => {
    const other = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: { agent: 'nagt_someoneelse' } })
    t.equal(other.status, 403)
    t.equal(other.body.error.reason, 'agent_mismatch')
  })

  t.test('[ERR-06] [INV-04] unknown and foreign sessions give byte-identical 404s', async (t) => {
    const globex = await s.bootstrap()
    const mine = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: {} })
    const foreign = await s.request('POST', `/v1/sessions/${mine.body.id}/navigate`, { token: globex.apiKey, body: { url: PAGE } })
    const unknown = await s.request('POST', `/v1/sessions/nsess_0000000000000000000000/navigate`, { token: globex.apiKey, body: { url: PAGE } })
    t.equal(foreign.status, 404)
    t.equal(foreign.text, unknown.text)
    t.equal((await s.request('GET', `/v1/sessions/${mine.body.id}`, { token: globex.apiKey })).text, unknown.text)
    t.equal((await s.request('DELETE', `/v1/sessions/${mine.body.id}`, { token: globex.apiKey })).text, unknown.text)
    await s.request('DELETE', `/v1/sessions/${mine.body.id}`, { token: acme.apiKey })
  })

  t.test('[ERR-04] driving needs sessions:drive, opening needs sessions:write', async (t) => {
    const writeOnly = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'w', scopes: ['sessions:write'], minterScopes: new Set(['sessions:write']) })
    const opened = await s.request('POST', '/v1/sessions', { token: writeOnly.secret, body: {} })
    t.equal(opened.status, 201)
    const nav = await s.request('POST', `/v1/sessions/${opened.body.id}/navigate`, { token: writeOnly.secret, body: { url: PAGE } })
    t.equal(nav.status, 403)
    t.equal(nav.body.error.message, 'missing required scope: sessions:drive')
    const driveOnly = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'd', scopes: ['sessions:drive'], minterScopes: new Set(['sessions:drive']) })
    const open2 = await s.request('POST', '/v1/sessions', { token: driveOnly.secret, body: {} })
    t.equal(open2.status, 403)
    t.equal(open2.body.error.message, 'missing required scope: sessions:write')
    await s.request('DELETE', `/v1/sessions/${opened.body.id}`, { token: acme.apiKey })
  })
})
