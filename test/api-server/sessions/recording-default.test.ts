// The org's recording default ("record at session_start, or an org default set by an
// admin"). Off for a new org; an admin turns it on with PUT /v1/governance; then a
// start that leaves `record` out is recorded — over MCP too, whose session_start has no
// `record` input — and a REST start may still say record: false. Real Chromium, the real
// MCP SDK client, the real API server.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'

const PAGE = 'data:text/html,' + encodeURIComponent('<title>Default</title><h1>Recorded by default</h1>')

t.test('the org default for recordings', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const mcp = await mcpClient(t, s.url, acme.apiKey)
  const structured = (r: any) => r.structuredContent ?? JSON.parse(r.content[0].text)

  t.test('a new org records nothing unless asked', async (t) => {
    const g = await rest('GET', '/v1/governance')
    t.equal(g.body.recordSessions, false)
    const plain = await rest('POST', '/v1/sessions', {})
    t.equal(plain.status, 201)
    await rest('DELETE', `/v1/sessions/${plain.body.id}`)
    t.equal((await rest('GET', `/v1/sessions/${plain.body.id}/recording`)).status, 404, 'not recorded')
  })

  t.test('an admin turns it on; the change is audited by name', async (t) => {
    const put = await rest('PUT', '/v1/governance', { recordSessions: true })
    t.equal(put.status, 200)
    t.equal(put.body.recordSessions, true)
    t.equal(put.body.cloakEnabled, false, 'the other flags keep their value')
    const audit = await s.testDb.db.query(`select reason from audit_events where action = 'governance.update' order by id desc limit 1`)
    t.equal(audit.rows[0]?.reason, 'recordSessions')
    t.equal((await rest('PUT', '/v1/governance', { recordSessions: 'yes' })).status, 400, 'a boolean, nothing else')
  })

  t.test('an MCP session_start is recorded by the org default', async (t) => {
    const started = structured(await mcp.callTool({ name: 'session_start', arguments: {} }))
    const id = started.id as string
    const nav: any = await mcp.callTool({ name: 'navigate', arguments: { sessionId: id, url: PAGE } })
    t.notOk(nav.isError, `the page opened${nav.isError ? ': ' + JSON.stringify(nav.content).slice(0, 300) : ''}`)
    const live = await rest('GET', `/v1/sessions/${id}/recording`)
    t.equal(live.status, 200, 'listed while it runs')
    t.equal(live.body.endedAt, null)
    await mcp.callTool({ name: 'session_end', arguments: { sessionId: id } })
    const events = (await rest('GET', `/v1/sessions/${id}/recording/events`)).body.events as any[]
    const snapshots = events.filter((e) => e.type === 2)
    // on failure: what the timeline holds (types, and the page of each meta event) and what the server warned
    const diagnostic = { timeline: events.map((e) => (e.type === 4 ? `4 ${String(e.data?.href).slice(0, 40)}` : e.type)), warnings: s.logs().split('\n').filter((l) => /"level":(40|50)/.test(l)).slice(-5) }
    t.ok(snapshots.some((e) => JSON.stringify(e).includes('Recorded by default')), 'the page the agent opened is in the timeline', diagnostic)
  })

  t.test('a REST start may still say record: false', async (t) => {
    const off = await rest('POST', '/v1/sessions', { record: false })
    t.equal(off.status, 201)
    await rest('POST', `/v1/sessions/${off.body.id}/navigate`, { url: PAGE })
    await rest('DELETE', `/v1/sessions/${off.body.id}`)
    t.equal((await rest('GET', `/v1/sessions/${off.body.id}/recording`)).status, 404)
  })

  t.test('turned off again, a start that leaves record out is not recorded', async (t) => {
    t.equal((await rest('PUT', '/v1/governance', { recordSessions: false })).body.recordSessions, false)
    const plain = await rest('POST', '/v1/sessions', {})
    await rest('DELETE', `/v1/sessions/${plain.body.id}`)
    t.equal((await rest('GET', `/v1/sessions/${plain.body.id}/recording`)).status, 404)
  })
})
