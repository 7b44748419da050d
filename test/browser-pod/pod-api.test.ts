// The pod API's transport against its contract (contracts/pod-api.ts), without a
// browser: every declared route is served, the health probe alone skips the token, and
// the refusals (401, 404, 405, 400, 413) come before any handler runs. The routes with
// Chromium behind them are exercised in pod-process.test.ts.
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { driveContracts } from '../../contracts/operations/drive.ts'
import { podRoutes } from '../../contracts/pod-api.ts'
import { EchoGuard } from '../../browser-pod/secrets/echo-guard.ts'
import { createPodApi, ROUTES } from '../../browser-pod/pod-api.ts'
import type { PodSession } from '../../browser-pod/session.ts'

const TOKEN = 'pod-api-test-token'

t.test('the pod serves exactly the contract: every driving action, and the pod\'s own routes', async (t) => {
  const paths = Object.values(podRoutes).map((r) => r.path)
  t.equal(new Set(paths).size, paths.length, 'one route per path')
  t.same([...ROUTES.keys()].sort(), [...paths].sort())
  for (const c of driveContracts) {
    const r = podRoutes[c.name]
    t.equal(r.path, c.pod.path, `${c.name} at ${c.pod.path}`)
    t.notOk('sessionId' in r.input.shape, `${c.name}: the pod is the session (no sessionId)`)
    t.same(r.opaque, c.pod.opaque ?? [], `${c.name}: opaque fields`)
  }
  t.same(Object.entries(podRoutes).filter(([, r]) => !r.auth).map(([n]) => n), ['health'], 'only the health probe goes without the token')
  t.same(Object.entries(podRoutes).filter(([, r]) => r.secret).map(([n]) => n).sort(), ['configure', 'egress_proxy', 'secure_type', 'storage_state'], 'the routes that carry secrets: the pod never logs their details')
  t.notOk(podRoutes.wait_for.input.safeParse({ selector: '#a', text: 'b' }).success, "wait_for's refinement holds at the pod")
  t.notOk(podRoutes.act.output.safeParse({ ok: true, credentialName: 'c', fieldKind: 'password', host: 'h' }).success, "the pod's act answers an ActResult only")
})

t.test('refusals before any handler', async (t) => {
  // a session whose page access would fail loudly: none of these requests may reach it
  const session = {
    echoGuard: new EchoGuard(),
    configured: false,
    get page(): never {
      throw new Error('a handler ran')
    },
  } as unknown as PodSession
  const lines: string[] = []
  const server = createPodApi({ token: TOKEN, session, log: (l) => lines.push(l) })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const call = async (method: string, path: string, init: { auth?: string | null; body?: string } = {}) => {
    const auth = init.auth === undefined ? `Bearer ${TOKEN}` : init.auth
    const res = await fetch(base + path, { method, headers: { ...(auth ? { authorization: auth } : {}), 'content-type': 'application/json' }, body: init.body })
    return { status: res.status, allow: res.headers.get('allow'), body: (await res.json()) as { error?: { code: string; message: string } } & Record<string, unknown> }
  }

  t.same((await call('GET', '/healthz', { auth: null })).body, { ok: true, configured: false }, 'health without a token')
  t.equal((await call('POST', '/healthz', { auth: null })).status, 405)
  t.equal((await call('POST', '/v1/navigate', { auth: null, body: '{}' })).status, 401)
  t.equal((await call('POST', '/v1/navigate', { auth: 'Bearer wrong', body: '{}' })).status, 401)
  t.equal((await call('POST', '/v1/nowhere', { auth: 'Bearer wrong' })).status, 401, 'the token is checked before the route is looked up')
  t.equal((await call('POST', '/v1/nowhere')).status, 404)
  const wrongMethod = await call('GET', '/v1/perceive')
  t.equal(wrongMethod.status, 405)
  t.equal(wrongMethod.allow, 'POST')
  const notJson = await call('POST', '/v1/navigate', { body: '{nope' })
  t.equal(notJson.status, 400)
  const invalid = await call('POST', '/v1/navigate', { body: JSON.stringify({ url: 'file:///etc/passwd' }) })
  t.equal(invalid.status, 400)
  t.match(invalid.body.error?.message, /^invalid request: url: /)
  t.equal((await call('POST', '/v1/wait_for', { body: JSON.stringify({ timeoutMs: 5 }) })).status, 400)
  t.equal((await call('POST', '/v1/secure_type', { body: 'x'.repeat(17 * 1024 * 1024) }).catch(() => ({ status: 413 }))).status, 413, 'a body over the limit')
  t.same(lines, [], 'no refusal is logged')
})
