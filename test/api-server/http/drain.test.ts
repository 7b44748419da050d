// Graceful shutdown: during the shutdown delay the server serves on, readiness failing and
// every answer closing its connection; then a request in flight still gets its answer, a
// new one is not taken, and one that never finishes is cut at the drain deadline.
import t from 'tap'
import { z } from 'zod'
import { defineOperation } from '../../../api-server/operations/types.ts'
import { closeGracefully } from '../../../api-server/http/drain.ts'
import { startTestServer } from '../../helpers/server.ts'

function gatedOperation() {
  let entered!: () => void
  const inside = new Promise<void>((r) => (entered = r))
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  const op = defineOperation({
    name: 'slow_call',
    description: 'answers once the test opens the gate',
    scopes: [],
    input: z.strictObject({}),
    output: z.object({ ok: z.literal(true) }),
    rest: { method: 'GET', path: '/v1/slow' },
    mcp: false,
    handler: async () => {
      entered()
      await gate
      return { ok: true as const }
    },
  })
  return { op, inside, open }
}

t.test('a request in flight finishes during shutdown; a new one is not taken', async (t) => {
  const g = gatedOperation()
  const s = await startTestServer(t, { operations: [g.op] })
  const org = await s.bootstrap()
  const slow = s.request('GET', '/v1/slow', { token: org.apiKey })
  await g.inside
  const closing = s.close()
  const late = await fetch(`${s.url}/v1/slow`, { headers: { authorization: `Bearer ${org.apiKey}` } }).then((r) => r.status, () => 'refused')
  t.ok(late === 'refused' || late === 503, `a request after the stop began is not served (${late})`)
  g.open()
  const answered = await slow
  t.equal(answered.status, 200, 'the request in flight got its answer')
  t.same(answered.body, { ok: true })
  await closing
})

t.test('a request that never finishes is cut at the drain deadline', async (t) => {
  const g = gatedOperation()
  const s = await startTestServer(t, { operations: [g.op] })
  const org = await s.bootstrap()
  const stuck = s.request('GET', '/v1/slow', { token: org.apiKey }).then((r) => r.status, () => 'cut')
  await g.inside
  await closeGracefully(s.app, 200)
  t.equal(await stuck, 'cut', 'the stuck request was cut, and the stop ended')
})

t.test('[ISSUE-38] during the shutdown delay requests are still served, each closing its connection, while /readyz answers 503', async (t) => {
  const g = gatedOperation()
  const s = await startTestServer(t, { operations: [g.op] })
  const org = await s.bootstrap()
  t.equal((await fetch(`${s.url}/readyz`)).status, 200, 'ready before the stop')
  let closed = false
  const early = fetch(`${s.url}/v1/slow`, { headers: { authorization: `Bearer ${org.apiKey}` } })
  await g.inside
  const closing = closeGracefully(s.app, 5000, 1000).then(() => (closed = true))
  const ready = await fetch(`${s.url}/readyz`)
  t.equal(ready.status, 503, '/readyz fails at once, so load balancers stop sending traffic')
  t.equal((await ready.json()).error.reason, 'shutting_down')
  const slow = fetch(`${s.url}/v1/slow`, { headers: { authorization: `Bearer ${org.apiKey}` } })
  t.notOk(closed, 'the server was still serving during the delay')
  g.open()
  const before = await early
  t.equal(before.status, 200, 'a request in flight when the shutdown began is answered')
  t.equal(before.headers.get('connection'), 'close', 'closing its connection too: a client reusing it would meet the close')
  const answered = await slow
  t.equal(answered.status, 200, 'a request arriving during the delay is served, not refused')
  t.equal(answered.headers.get('connection'), 'close', 'and its answer closes the connection, so the client\'s next request is routed anew')
  await closing
  const late = await fetch(`${s.url}/v1/slow`, { headers: { authorization: `Bearer ${org.apiKey}` } }).then((r) => r.status, () => 'refused')
  t.equal(late, 'refused', 'after the delay and the drain nothing is taken')
})
