// RULE-33: egress policy, the declared-host allowlist and the deny floor bound a cloak
// browser exactly as they bound a headless one — the same gateway, the same answers.
import t, { type Test } from 'tap'
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

  /**
   * A cloak and a chromium session with the same egress, opened side by side: `go` makes the
   * same navigation from both. Each kind of egress opens one pair for all its URLs (a denied
   * navigation leaves a session as it was), and ends it when its subtest ends.
   */
  const pair = async (t: Test, egress: Record<string, unknown>) => {
    const [cloak, plain] = await Promise.all([w.open({ browserKind: 'cloak', url: `${APP}/`, ...egress }), w.open({ ...egress })])
    t.teardown(() => Promise.all([w.end(cloak), w.end(plain)]))
    return async (url: string) => {
      const [a, b] = await Promise.all([nav(cloak, url), nav(plain, url)])
      return { cloak: a, chromium: b }
    }
  }

  t.test('[RULE-33] platform egress: a cloak browser cannot reach loopback, the deny floor nor cluster ranges, and resolves nothing itself', async (t) => {
    const both = await pair(t, { egress: 'platform' })
    const { cloak, chromium } = await both(`http://127.0.0.1:${local.port}/`)
    t.same(errorOf(cloak), { status: 502, code: 'E_UPSTREAM', reason: 'NAVIGATION_FAILED' })
    t.match(cloak.body.error.message, /net::ERR_CONNECTION_REFUSED/)
    t.same(errorOf(cloak), errorOf(chromium), 'the same answer as a headless session')
    t.equal(local.connections(), 0, 'the loopback server never saw a connection')

    // the deny floor: metadata and configured cluster ranges
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.96.0.1/']) {
      const { cloak, chromium } = await both(url)
      t.same(errorOf(cloak), { status: 403, code: 'E_REACHABILITY_DENIED', reason: 'deny_floor' }, url)
      t.same(errorOf(cloak), errorOf(chromium))
    }

    // public names come through the gateway
    const named = await both(`${APP}/index.html`)
    t.equal(named.cloak.status, 200, 'app.example.com exists only in the gateway host aliases')
    t.ok((await w.web.requests()).some((r) => r.host === 'app.example.com'))
  })

  t.test('[RULE-33] declared hosts: local egress reaches only what the network declares', async (t) => {
    const declared = await (await pair(t, { egress: 'local', network: 'dev' }))(`${APP}/index.html`)
    t.equal(declared.cloak.body.error.code, 'E_REACHABILITY_DENIED', 'app.example.com is not declared, so it is not reached')
    t.same(errorOf(declared.cloak), errorOf(declared.chromium))
    const none = await (await pair(t, { egress: 'local' }))(`http://localhost:${local.port}/`)
    t.equal(none.cloak.body.error.code, 'E_REACHABILITY_DENIED', 'local egress without a network tunnels nothing')
    t.same(errorOf(none.cloak), errorOf(none.chromium))
    t.equal(local.connections(), 0)
  })
})
