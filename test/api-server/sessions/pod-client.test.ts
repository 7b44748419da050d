// PodClient checks the pod's reply against the route's declared output (contracts/pod-api.ts)
// instead of casting it: a reply that is not JSON, or JSON of another shape, is the typed
// 502 node_protocol; a well-formed reply is handed on as sent; the pod's own errors come
// back as the ApiError it sent. A plain http server stands in for the pod.
import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { PodClient } from '../../../api-server/sessions/pod-client.ts'
import { ApiError } from '../../../contracts/errors.ts'

/** A stand-in pod answering every request with the given status and body. */
async function fakePod(t: Test, reply: { status: number; body: string }): Promise<PodClient> {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const client = new PodClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'pod-token')
  t.teardown(() => {
    client.close()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return client
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p
  } catch (e) {
    if (e instanceof ApiError) return e
    throw e
  }
  throw new Error('expected a rejection')
}

t.test('a well-formed reply is handed on as sent', async (t) => {
  const pod = await fakePod(t, { status: 200, body: JSON.stringify({ ok: true, configured: false }) })
  t.same(await pod.health(), { ok: true, configured: false })
})

t.test('a reply of another shape is the typed 502 node_protocol, not a cast', async (t) => {
  const cases: Array<[string, string]> = [
    ['a field missing', JSON.stringify({ ok: true })],
    ['a field of the wrong type', JSON.stringify({ ok: true, configured: 'yes' })],
    ['not an object', JSON.stringify([1, 2])],
    ['null', 'null'],
  ]
  for (const [what, body] of cases) {
    const pod = await fakePod(t, { status: 200, body })
    const e = await rejection(pod.health())
    t.same({ status: e.status, code: e.code, reason: e.reason }, { status: 502, code: 'E_UPSTREAM', reason: 'node_protocol' }, what)
  }
})

t.test('a driving action and the secure fill are checked against their own routes', async (t) => {
  const wrong = await fakePod(t, { status: 200, body: JSON.stringify({ ok: true, fieldKind: 'button', host: 'example.com' }) })
  const secret = Buffer.from('not-a-real-secret')
  const e = await rejection(wrong.secureType({ selector: '#pw', value: secret, allowlist: ['example.com'] }))
  t.equal(e.reason, 'node_protocol', 'a field kind the contract does not list is refused')
  const right = await fakePod(t, { status: 200, body: JSON.stringify({ ok: true, fieldKind: 'password', host: 'example.com' }) })
  t.same(await right.secureType({ selector: '#pw', value: secret, allowlist: ['example.com'] }), { ok: true, fieldKind: 'password', host: 'example.com' })
})

t.test('a reply that is not JSON is node_protocol; the pod\'s own error is passed on', async (t) => {
  const garbled = await fakePod(t, { status: 200, body: '<html>' })
  t.equal((await rejection(garbled.health())).reason, 'node_protocol')
  const refusing = await fakePod(t, { status: 409, body: JSON.stringify({ error: { code: 'conflict', reason: 'cdp_connected', message: 'a CDP client is connected' } }) })
  const e = await rejection(refusing.health())
  t.equal(e.status, 409)
  t.equal(e.reason, 'cdp_connected')
})
