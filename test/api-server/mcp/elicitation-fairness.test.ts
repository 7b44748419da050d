// One org cannot switch off another's URL elicitation by flooding `initialize`: on two
// replicas sharing one Postgres, org B's flood is answered 429 past the per-credential
// limit and leaves it at most its cap of memos; org A, initialized before the flood, is
// still asked by elicitation/create on replica B and its decline, sent to replica A, ends
// the call — the memos and the answer routing live in the shared store.
import t from 'tap'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { MEMO_PER_CREDENTIAL } from '../../../api-server/mcp/elicitation.ts'
import { LIMIT_DEFAULTS } from '../../../api-server/config.ts'

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } }, clientInfo: { name: 'flood', version: '1' } } }

function post(s: TestServer, token: string, body: unknown, sessionId?: string) {
  return fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25', ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
    body: JSON.stringify(body),
  })
}

/** The JSON-RPC messages of an SSE answer, one at a time, as they arrive. */
function sseMessages(res: Response) {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  return async function next(): Promise<any> {
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end >= 0) {
        const event = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n')
        if (data) return JSON.parse(data)
        continue
      }
      const { value, done } = await reader.read()
      if (done) throw new Error('the stream ended')
      buffer += decoder.decode(value, { stream: true })
    }
  }
}

t.test('[ISSUE-40 row 5] an initialize flood from one org is bounded and leaves another org’s elicitation working, across replicas', async (t) => {
  const a = await startTestServer(t)
  const b = await startTestServer(t, { sharing: a })
  const orgA = await a.bootstrap()
  const orgB = await a.bootstrap()
  const ident = await a.request('POST', '/v1/identities', { token: orgA.apiKey, body: { name: 'shop' } })
  t.equal(ident.status, 201)

  // org A's client declares URL elicitation on replica A
  const init = await post(a, orgA.apiKey, INIT)
  t.equal(init.status, 200)
  const sessionId = init.headers.get('mcp-session-id')
  t.ok(sessionId, 'a client that declared URL elicitation gets a session id')
  await init.arrayBuffer()

  // org B floods, alternating replicas
  const FLOOD = 150
  const limit = LIMIT_DEFAULTS.mcpInitializeLimit
  const started = Date.now()
  const statuses: number[] = []
  const refusals: Array<{ retryAfter: number; body: any }> = []
  for (let i = 0; i < FLOOD; i++) {
    const r = await post(i % 2 ? b : a, orgB.apiKey, INIT)
    statuses.push(r.status)
    if (r.status === 429) refusals.push({ retryAfter: Number(r.headers.get('retry-after')), body: await r.json() })
    else await r.arrayBuffer()
  }
  const elapsed = Date.now() - started
  t.equal(statuses.filter((s) => s === 200).length, limit, `the first ${limit} initializes of the window are served, over both replicas`)
  t.equal(statuses.filter((s) => s === 429).length, FLOOD - limit, 'every one after is refused')
  t.same(statuses.slice(limit).filter((s) => s !== 429), [], 'refused from the limit on, none let through later in the window')
  t.ok(refusals.every((r) => r.retryAfter >= 1), 'each refusal carries Retry-After')
  t.has(refusals[0].body, { error: { code: 'rate_limited', reason: 'initialize_rate' } })
  t.ok(elapsed < 30_000, `the flood ends in bounded time (${elapsed} ms for ${FLOOD} requests)`)
  const held = (await a.testDb.db.query('select org_id, count(*)::int as n from mcp_elicitation_clients group by org_id')).rows
  const heldBy = Object.fromEntries(held.map((r: { org_id: string; n: number }) => [r.org_id, r.n]))
  t.equal(heldBy[orgB.orgId], MEMO_PER_CREDENTIAL, `the flooding credential holds at most ${MEMO_PER_CREDENTIAL} memos`)
  t.equal(heldBy[orgA.orgId], 1, 'org A’s memo is still there')

  // org A calls on replica B: asked by URL elicitation, not answered "pending"
  const call = await post(b, orgA.apiKey, {
    jsonrpc: '2.0', id: 7, method: 'tools/call',
    params: { name: 'credential_request', arguments: { identity: 'shop', credentialName: 'login', originAllowlist: ['login.example.com'], reason: 'sign in to the shop' } },
  }, sessionId!)
  t.equal(call.status, 200)
  t.match(call.headers.get('content-type'), /^text\/event-stream/, 'the call answers on an SSE stream: the client will be asked')
  const next = sseMessages(call)
  const ask = await next()
  t.has(ask, { method: 'elicitation/create', params: { mode: 'url' } })
  t.match(ask.params.url, /\/console\/credential-requests\/ncreq_/)

  // the answer reaches replica A; the call waits on replica B
  const answer = await post(a, orgA.apiKey, { jsonrpc: '2.0', id: ask.id, result: { action: 'decline' } }, sessionId!)
  t.equal(answer.status, 202, 'the answer is taken by the other replica')
  let result = await next()
  while (result.method) result = await next() // progress notifications, if any
  t.equal(result.id, 7)
  t.equal(result.result.structuredContent.status, 'declined', 'the call on replica B ends with the answer given on replica A')
  t.equal(result.result.structuredContent.elicited, true)
})
