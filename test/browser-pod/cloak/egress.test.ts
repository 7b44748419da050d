// RULE-33: egress policy, the declared-host allowlist and the deny floor bound a cloak
// browser exactly as they bound a headless one — the same gateway, the same answers.
import t from 'tap'
import { loopbackServer } from '../harness.ts'
import { APP, cloakWorld } from './helpers.ts'

t.test('cloak sessions keep the egress rules', async (t) => {
  const w = await cloakWorld(t, { env: { NIGHTJAR_DENY_CIDRS: '10.96.0.0/12' } })
  const { req } = w
  await w.enableCloak()
  const local = await loopbackServer(t, 'developer machine')
  const net = await req('POST', '/v1/networks', { name: 'dev' })
  if (net.status !== 201) throw new Error(`network ${net.status} ${net.text}`)
  await req('PATCH', `/v1/networks/${net.body.network.id}`, { declaredHosts: [`localhost:${local.port}`] })
  const nav = (id: string, url: string) => req('POST', `/v1/sessions/${id}/navigate`, { url })
  const errorOf = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.error?.code, reason: r.body?.error?.reason })

  /** the same navigation from a cloak and a chromium session with the same egress */
  const both = async (egress: Record<string, unknown>, url: string) => {
    const cloak = await w.open({ browserKind: 'cloak', url: `${APP}/`, ...egress })
    const plain = await w.open({ ...egress })
    const a = await nav(cloak, url)
    const b = await nav(plain, url)
    await w.end(cloak)
    await w.end(plain)
    return { cloak: a, chromium: b }
  }

  t.test('[RULE-33] platform egress: a cloak browser cannot reach loopback', async (t) => {
    const { cloak, chromium } = await both({ egress: 'platform' }, `http://127.0.0.1:${local.port}/`)
    t.same(errorOf(cloak), { status: 502, code: 'E_UPSTREAM', reason: 'NAVIGATION_FAILED' })
    t.match(cloak.body.error.message, /net::ERR_CONNECTION_REFUSED/)
    t.same(errorOf(cloak), errorOf(chromium), 'the same answer as a headless session')
    t.equal(local.connections(), 0, 'the loopback server never saw a connection')
  })

  t.test('[RULE-33] the deny floor: metadata and configured cluster ranges', async (t) => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.96.0.1/']) {
      const { cloak, chromium } = await both({ egress: 'platform' }, url)
      t.same(errorOf(cloak), { status: 403, code: 'E_REACHABILITY_DENIED', reason: 'deny_floor' }, url)
      t.same(errorOf(cloak), errorOf(chromium))
    }
  })

  t.test('[RULE-33] declared hosts: local egress reaches only what the network declares', async (t) => {
    const { cloak, chromium } = await both({ egress: 'local', network: 'dev' }, `${APP}/index.html`)
    t.equal(cloak.body.error.code, 'E_REACHABILITY_DENIED', 'app.example.com is not declared, so it is not reached')
    t.same(errorOf(cloak), errorOf(chromium))
    const none = await both({ egress: 'local' }, `http://localhost:${local.port}/`)
    t.equal(none.cloak.body.error.code, 'E_REACHABILITY_DENIED', 'local egress without a network tunnels nothing')
    t.same(errorOf(none.cloak), errorOf(none.chromium))
    t.equal(local.connections(), 0)
  })

  t.test('[RULE-33] the cloak browser resolves nothing itself: public names come through the gateway', async (t) => {
    const { cloak } = await both({ egress: 'platform' }, `${APP}/index.html`)
    t.equal(cloak.status, 200, 'app.example.com exists only in the gateway host aliases')
    t.ok((await w.web.requests()).some((r) => r.host === 'app.example.com'))
  })
})
