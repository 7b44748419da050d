// Input hygiene at both doors: a string holding a NUL or an unpaired UTF-16
// surrogate — in a path id, the query, the body (values or field names) or MCP tool
// arguments — is refused before any work: 400 over REST, -32602 over MCP, naming the
// field and never echoing the value. Postgres can store neither (22021 / 22P05): before,
// an act ran in the browser and then its journal write failed (a click the journal never
// recorded), and a NUL id answered 500.
import t from 'tap'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { operations } from '../../../api-server/operations/registry.ts'
import { pathParams } from '../../../api-server/http/operations.ts'
import { newId } from '../../../contracts/ids.ts'
import { shown } from '../../helpers/perceived.ts'

const PAGE = 'data:text/html,' + encodeURIComponent(`<title>Shop</title>
<button id="go" onclick="document.getElementById('out').textContent='clicked'">Go</button>
<input id="q" aria-label="Search"><p id="out">idle</p>`)

const NUL = 'contains a NUL character'
const LONE = 'contains an unpaired UTF-16 surrogate'
const err400 = (message: string) => JSON.stringify({ error: { code: 'bad_request', message } })

async function rpc(s: TestServer, token: string, name: string, args: unknown) {
  const res = await fetch(s.url + '/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  })
  return (await res.json()) as any
}

t.test('input hygiene', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const key = acme.apiKey

  t.test('a NUL or lone surrogate in a selector: 400 / -32602, no action ran, nothing half-journalled', async (t) => {
    const start = await s.request('POST', '/v1/sessions', { token: key, body: {} })
    t.equal(start.status, 201)
    const id = start.body.id
    t.equal((await s.request('POST', `/v1/sessions/${id}/navigate`, { token: key, body: { url: PAGE } })).status, 200)
    const journalOps = async () => (await s.request('GET', `/v1/sessions/${id}/journal`, { token: key })).body.items.map((e: any) => e.op)
    const before = await journalOps()
    t.same(before, ['session_start', 'navigate'])

    // '#go' alone would click: the selector list would run the click if it got to the browser
    for (const [selector, problem] of [['#go, b\u0000', NUL], ['#go, b\ud800', LONE], ['#go, b\udfff', LONE]] as const) {
      const rest = await s.request('POST', `/v1/sessions/${id}/act`, { token: key, body: { verb: 'click', selector } })
      t.equal(rest.status, 400, 'REST: 400')
      t.equal(rest.text, err400(`invalid request: selector: ${problem}`), 'REST: the service error shape, naming the field, value-free')
      const mcp = await rpc(s, key, 'act', { sessionId: id, verb: 'click', selector })
      t.equal(mcp.error?.code, -32602, 'MCP: -32602')
      t.equal(mcp.error?.message, `invalid params: arguments.selector: ${problem}`)
    }
    const typed = await s.request('POST', `/v1/sessions/${id}/act`, { token: key, body: { verb: 'type', selector: '#q', text: 'boots\u0000' } })
    t.equal(typed.text, err400(`invalid request: text: ${NUL}`))
    const fill = await s.request('POST', `/v1/sessions/${id}/fill-credential`, { token: key, body: { credentialName: 'login', selector: '#q\u0000' } })
    t.equal(fill.text, err400(`invalid request: selector: ${NUL}`), 'the secure fill too')
    const mcpFill = await rpc(s, key, 'credential_fill', { sessionId: id, credentialName: 'login', selector: '#q\ud800' })
    t.equal(mcpFill.error?.code, -32602)

    const seen = await s.request('POST', `/v1/sessions/${id}/perceive`, { token: key, body: {} })
    t.match(shown(seen.body), /idle/, 'no click happened')
    t.notMatch(shown(seen.body), /clicked/)
    t.same(await journalOps(), ['session_start', 'navigate', 'perceive'], 'the journal holds every action that ran, and only those')

    const clicked = await s.request('POST', `/v1/sessions/${id}/act`, { token: key, body: { verb: 'click', selector: '#go' } })
    t.equal(clicked.status, 200, 'a well-formed selector still works')
    t.same((await journalOps()).slice(-1), ['act'], 'and is journalled')
    t.equal((await s.request('DELETE', `/v1/sessions/${id}`, { token: key })).status, 200)
  })

  t.test('[ERR-06] a NUL in a path id: 400 naming the parameter; unknown and other-org ids keep the one byte-identical 404', async (t) => {
    const r = await s.request('GET', '/v1/sessions/nsess_%00', { token: key })
    t.equal(r.status, 400)
    t.equal(r.text, err400(`invalid request: sessionId: ${NUL}`))
    const nav = await s.request('POST', '/v1/sessions/%00/navigate', { token: key, body: { url: PAGE } })
    t.equal(nav.text, err400(`invalid request: sessionId: ${NUL}`))
    const unknown = await s.request('GET', `/v1/sessions/${newId('nsess_')}`, { token: key })
    const theirs = await s.request('POST', '/v1/sessions', { token: other.apiKey, body: {} })
    const foreign = await s.request('GET', `/v1/sessions/${theirs.body.id}`, { token: key })
    t.equal(unknown.status, 404)
    t.equal(foreign.text, unknown.text, 'byte-identical 404 for an unknown and an other-org id')
    t.equal(unknown.text, '{"error":{"code":"not_found","message":"unknown session"}}')
    await s.request('DELETE', `/v1/sessions/${theirs.body.id}`, { token: other.apiKey })
  })

  t.test('a NUL or lone surrogate in the query, body values and field names: 400 naming where', async (t) => {
    const q = await s.request('GET', '/v1/sessions?status=%00', { token: key })
    t.equal(q.text, err400(`invalid request: status: ${NUL}`))
    const body = await s.request('POST', '/v1/identities', { token: key, body: { name: 'shop\u0000per' } })
    t.equal(body.text, err400(`invalid request: name: ${NUL}`))
    const lone = await s.request('POST', '/v1/identities', { token: key, body: { name: 'shop\ud83dper' } })
    t.equal(lone.text, err400(`invalid request: name: ${LONE}`))
    const nested = await s.request('POST', '/v1/sessions', { token: key, body: { viewport: { ['wi\u0000dth']: 800 } } })
    t.equal(nested.text, err400(`invalid request: viewport: a field name ${NUL}`))
    const deep = await s.request('PATCH', `/v1/networks/${newId('nnet_')}`, { token: key, body: { declaredHosts: ['localhost', 'a\u0000b'] } })
    t.equal(deep.text, err400(`invalid request: declaredHosts.1: ${NUL}`))
    const ok = await s.request('POST', '/v1/identities', { token: key, body: { name: 'shopper' } })
    t.equal(ok.status, 201, 'well-formed input is untouched')
    const rows = await s.testDb.db.query(`select count(*)::int as n from identities where org_id = $1`, [acme.orgId])
    t.equal(rows.rows[0].n, 1, 'none of the refused creates wrote a row')
  })

  t.test('every REST operation refuses a NUL in each path parameter and in its body or query with 400, never 500', async (t) => {
    let checked = 0
    for (const op of operations) {
      if (!op.rest) continue
      const { method, path } = op.rest
      const params = pathParams(path)
      const hasBody = method !== 'GET' && method !== 'DELETE'
      for (const p of params) {
        const url = path.replace(/:([A-Za-z]+)/g, (_m, name) => (name === p ? 'x%00' : newId('nsess_')))
        const r = await s.request(method, url, { token: key, ...(hasBody ? { body: {} } : {}) })
        t.equal(r.status, 400, `${method} ${path}: ${p}`)
        t.equal(r.body?.error?.message, `invalid request: ${p}: ${NUL}`)
        checked++
      }
      const url = path.replace(/:([A-Za-z]+)/g, () => newId('nsess_'))
      const r = hasBody
        ? await s.request(method, url, { token: key, body: { probe: 'x\u0000' } })
        : await s.request(method, `${url}?probe=x%00`, { token: key })
      t.equal(r.status, 400, `${method} ${path}: ${hasBody ? 'body' : 'query'}`)
      t.equal(r.body?.error?.message, `invalid request: probe: ${NUL}`)
      checked++
    }
    t.ok(checked > 40, `${checked} REST calls checked`)
  })

  t.test('every MCP tool refuses a NUL in its arguments with -32602, never a 500 tool error', async (t) => {
    const list = await fetch(s.url + '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    const tools = ((await list.json()) as any).result.tools as Array<{ name: string; inputSchema: { properties?: Record<string, unknown> } }>
    t.equal(tools.length, 38, '[LIM-08] 38 tools')
    for (const tool of tools) {
      const field = Object.keys(tool.inputSchema.properties ?? {})[0] ?? 'probe'
      const r = await rpc(s, key, tool.name, { [field]: 'x\u0000' })
      t.equal(r.error?.code, -32602, `${tool.name}.${field}`)
      t.equal(r.error?.message, `invalid params: arguments.${field}: ${NUL}`)
    }
  })
})
