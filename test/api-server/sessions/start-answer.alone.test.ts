// Starts never hang: POST /v1/sessions answers within 5 s — 201 live,
// 202 pending (with the id, Location and Retry-After), or 429 — and a pending start goes
// live later: nothing is lost. Prefer: wait=N (RFC 7240) waits longer; over MCP,
// session_start waits up to waitSeconds and session_get can wait for live. Latency-bound:
// this file runs alone (scripts/test.mjs), so it measures the service, not a neighbour.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { BurstClient } from '../../helpers/burst.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { loadConfig } from '../../../api-server/config.ts'

const PAGE = 'data:text/html,' + encodeURIComponent('<title>ok</title><p>drivable</p>')

t.test('twenty starts at once from the default warm pool: each answered within 5 s, every pending one live later', async (t) => {
  t.equal(loadConfig({}).capacity.startAnswerMs, 5000, 'the default answer bound is 5 s')
  // the server's defaults (warm pool, launch slots, queue, quotas); only the test helper's
  // longer answer bound is set back to the default
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_START_ANSWER_SECONDS: '5', NIGHTJAR_WARM_POOL_SIZE: '2' } })
  const acme = await s.bootstrap()
  const clients = new BurstClient({ url: s.url, apiKey: acme.apiKey })
  t.teardown(() => clients.close())
  const results = await clients.send(20, 'POST', '/v1/sessions', {})
  const by = (status: number) => results.filter((r) => r.status === status)
  const [live, pending, refused] = [by(201), by(202), by(429)]
  t.equal(live.length + pending.length + refused.length, 20, `every start answered 201, 202 or 429 (${results.map((r) => r.status).join(',')})`)
  const slowest = Math.max(...results.map((r) => r.ms))
  t.ok(slowest < 5000, `every answer came within 5 s (slowest ${Math.round(slowest)} ms)`)
  t.ok(live.length + pending.length >= 2, 'starts were admitted')
  for (const r of live) t.equal(r.body.status, 'live')
  for (const r of pending) {
    t.equal(r.body.status, 'pending', 'a 202 carries the pending session')
    t.match(r.body.id, /^nsess_/)
    t.equal(r.location, `${s.url}/v1/sessions/${r.body.id}`, 'Location names the session')
    t.ok(Number(r.retryAfter) >= 1, 'Retry-After says when to look again')
  }
  for (const r of refused) {
    t.ok(Number(r.retryAfter) >= 1)
    t.equal(r.body.error.code, 'rate_limited')
  }
  // every pending start goes live: GET shows pending → live
  for (const r of pending) {
    const seen = await s.request('GET', `/v1/sessions/${r.body.id}?waitSeconds=60`, { token: acme.apiKey })
    t.equal(seen.body.status, 'live', `${r.body.id} went live`)
  }
  const admitted = [...live, ...pending].map((r) => r.body.id as string)
  const listed = (await s.request('GET', '/v1/sessions?status=live&limit=200', { token: acme.apiKey })).body.items.map((x: any) => x.id)
  t.same([...admitted].sort(), [...listed].sort(), 'no start was lost: every admitted start is live, and nothing else')
  for (const id of admitted) {
    const nav = await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: PAGE } })
    t.equal(nav.body.title, 'ok', `${id} is drivable`)
    await s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })
  }
})

t.test('Prefer: wait=N, and a session read that waits; over MCP, session_start’s waitSeconds and session_get’s', async (t) => {
  // no warm pool: every start is a cold launch (over a second), so a wait of 0 is pending
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_START_ANSWER_SECONDS: '5', NIGHTJAR_WARM_POOL_SIZE: '0' } })
  const acme = await s.bootstrap()
  const ids: string[] = []

  await t.test('Prefer: wait=0 answers 202 pending at once; GET shows pending, then live', async (t) => {
    const res = await fetch(`${s.url}/v1/sessions`, { method: 'POST', headers: { authorization: `Bearer ${acme.apiKey}`, 'content-type': 'application/json', prefer: 'respond-async, wait=0' }, body: '{}' })
    const body = await res.json()
    t.equal(res.status, 202)
    t.equal(res.headers.get('preference-applied'), 'wait=0', 'the preference is acknowledged')
    t.equal(body.status, 'pending')
    t.equal(res.headers.get('location'), `${s.url}/v1/sessions/${body.id}`)
    ids.push(body.id)
    const now = await s.request('GET', `/v1/sessions/${body.id}`, { token: acme.apiKey })
    t.equal(now.body.status, 'pending', 'read at once, it is still pending')
    const later = await s.request('GET', `/v1/sessions/${body.id}?waitSeconds=60`, { token: acme.apiKey })
    t.equal(later.body.status, 'live', 'and then live')
    t.ok(later.body.liveAt, 'with the time it went live')
  })

  await t.test('Prefer: wait=60 waits for the cold launch and answers 201 live', async (t) => {
    const res = await fetch(`${s.url}/v1/sessions`, { method: 'POST', headers: { authorization: `Bearer ${acme.apiKey}`, 'content-type': 'application/json', prefer: 'wait=60' }, body: '{}' })
    const body = await res.json()
    t.equal(res.status, 201)
    t.equal(res.headers.get('preference-applied'), 'wait=60')
    t.equal(body.status, 'live')
    t.equal(res.headers.get('location'), null)
    ids.push(body.id)
  })

  await t.test('a wait beyond the maximum is capped, and says so', async (t) => {
    const res = await fetch(`${s.url}/v1/sessions`, { method: 'POST', headers: { authorization: `Bearer ${acme.apiKey}`, 'content-type': 'application/json', prefer: 'wait=100000' }, body: '{}' })
    t.equal(res.status, 201)
    t.equal(res.headers.get('preference-applied'), 'wait=120')
    ids.push((await res.json()).id)
  })

  await t.test('MCP: session_start with waitSeconds 0 returns the pending session; session_get with waitSeconds waits for live', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const started = (await mcp.callTool({ name: 'session_start', arguments: { waitSeconds: 0 } })) as { isError?: boolean; structuredContent?: any }
    t.notOk(started.isError)
    t.equal(started.structuredContent.status, 'pending')
    const id = started.structuredContent.id
    ids.push(id)
    const got = (await mcp.callTool({ name: 'session_get', arguments: { sessionId: id, waitSeconds: 60 } })) as { structuredContent?: any }
    t.equal(got.structuredContent.status, 'live')
    const waited = (await mcp.callTool({ name: 'session_start', arguments: {} })) as { structuredContent?: any }
    t.equal(waited.structuredContent.status, 'live', 'by default (30 s) a cold start is waited for')
    ids.push(waited.structuredContent.id)
  })

  await t.test('refusals are never turned into a pending answer', async (t) => {
    const res = await fetch(`${s.url}/v1/sessions`, { method: 'POST', headers: { authorization: `Bearer ${acme.apiKey}`, 'content-type': 'application/json', prefer: 'wait=0' }, body: JSON.stringify({ identity: 'nobody-here' }) })
    t.equal(res.status, 404, 'an unknown identity is a 404 whatever the wait')
  })

  for (const id of ids) await s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })
})
