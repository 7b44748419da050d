// The simulated fleet's hollow browser pod over real HTTP on loopback: it checks what the
// real pod checks (token, method, input) and answers in the shapes the api-server parses
// (the contract's output schemas), and a frozen one holds requests until thawed.
import t, { type Test } from 'tap'
import { HollowServer, HOLLOW_TITLE } from '../../devcluster/fleet/hollow-pod.ts'
import { freePort } from '../../devcluster/processes.ts'
import { podRoutes } from '../../contracts/pod-api.ts'

const TOKEN = 'pod-token-for-the-test'

async function hollow(t: Test) {
  const port = await freePort()
  const server = new HollowServer(TOKEN)
  await server.listen('127.0.0.1', port)
  t.teardown(() => server.close())
  const call = async (path: string, body?: unknown, token = TOKEN) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: r.status, body: await r.json() as any }
  }
  return { server, call }
}

t.test('[ISSUE-49] a hollow pod answers the routes the api-server and the operator use, in the contract\'s shapes', async (t) => {
  const { call } = await hollow(t)
  const health = await call('/healthz', undefined, 'not the token')
  t.equal(health.status, 200, 'the health probe needs no token, as the real pod\'s')
  t.ok(podRoutes.health.output.safeParse(health.body).success, 'and is a health answer')
  t.equal((await call('/v1/navigate', { url: 'https://example.com/' }, 'wrong')).status, 401, 'every other route needs the pod token')
  t.equal((await call('/v1/navigate', { url: 'ftp://example.com/' })).status, 400, 'an input the contract refuses is refused')
  const configured = await call('/v1/configure', { sessionId: 'nsess_hollow', egress: { mode: 'platform', declaredHosts: [] } })
  t.equal(configured.status, 200, 'configure answers')
  t.equal((await call('/healthz')).body.configured, true, 'and the pod says it is configured')
  const nav = await call('/v1/navigate', { url: 'https://example.com/' })
  t.ok(podRoutes.navigate.output.safeParse(nav.body).success, 'navigate answers a navigate result')
  t.equal(nav.body.title, HOLLOW_TITLE, 'of the fixed page')
  const seen = await call('/v1/perceive', {})
  t.ok(podRoutes.perceive.output.safeParse(seen.body).success, 'perceive answers a perceive result')
  t.match(seen.body.snapshot, /button "Go" \[ref=e4\]/, 'with refs')
  const acted = await call('/v1/act', { verb: 'click', ref: 'e4' })
  t.ok(podRoutes.act.output.safeParse(acted.body).success, 'act answers an act result')
  const shot = await call('/v1/screenshot', {})
  t.equal(shot.status, 502, 'a route it does not simulate fails as an action would')
  t.match(shot.body.error.message, /not simulated by the hollow pod/, 'saying why')
})

t.test('[ISSUE-49] a frozen hollow pod (its node stopped) holds requests and answers them once thawed', async (t) => {
  const { server, call } = await hollow(t)
  server.freeze(true)
  let answered = false
  const pending = call('/healthz').then((r) => { answered = true; return r })
  const raced = await Promise.race([pending.then(() => 'answered'), new Promise((r) => setTimeout(() => r('held'), 300))])
  t.equal(raced, 'held', 'no answer while frozen')
  t.notOk(answered)
  server.freeze(false)
  t.equal((await pending).status, 200, 'the held request is answered once thawed')
})
