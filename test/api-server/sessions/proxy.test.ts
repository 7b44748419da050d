// A session's upstream proxy end to end: the org allowlist, session
// start with a proxy, an identity's default proxy, real Chromium behind the egress
// gateway, and real proxies in a network namespace (test/helpers/proxies.ts: npm's
// `proxy` for HTTP CONNECT, `@pondwader/socks5-server` for SOCKS5). The proxy password is
// a canary: it must appear in no response, log line, audit row or database table.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer, type Reply } from '../../helpers/server.ts'
import { dumpAllTables } from '../../helpers/db.ts'
import { createPersona } from '../../helpers/personas.ts'
import { HTTP_AUTH_PROXY_PORT, PROXY_USER, SOCKS_PROXY_PORT, startProxyWorld } from '../../helpers/proxies.ts'

const CANARY = `Prx-${randomBytes(9).toString('hex')}-pw`

t.test('[#39-proxy] sessions through an upstream proxy', async (t) => {
  const world = await startProxyWorld(t, CANARY)
  const aliases = { 'example.com': world.ip, 'proxy.example': world.ip, 'socks.example': world.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases), NIGHTJAR_DENY_CIDRS: '10.0.0.0/24,fd00::/120' } })
  const acme = await s.bootstrap()
  const replies: string[] = []
  const req = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    replies.push(r.text)
    return r
  }
  const httpProxy = { url: `http://proxy.example:${HTTP_AUTH_PROXY_PORT}`, username: PROXY_USER, password: CANARY }
  const socksProxy = { url: `socks5://socks.example:${SOCKS_PROXY_PORT}`, username: PROXY_USER, password: CANARY }
  const sessionCount = async () => Number((await s.testDb.db.query('select count(*) from sessions')).rows[0].count)

  t.test('[#39-proxy] no proxy is allowed until an admin lists its host; malformed proxies are clear 400s', async (t) => {
    const before = await sessionCount()
    const refused = await req('POST', '/v1/sessions', { proxy: httpProxy })
    t.equal(refused.status, 400)
    t.equal(refused.body.error.reason, 'proxy_host_not_allowed')
    t.match(refused.body.error.message, /proxy\.example:3129 is not on the org's proxy allowlist/)
    t.equal(await sessionCount(), before, 'a refused start leaves no session')

    for (const [proxy, rule] of [
      [{ url: 'ftp://proxy.example:21' }, /scheme must be http, https or socks5/],
      [{ url: `http://${PROXY_USER}:${CANARY}@proxy.example:3129` }, /must not carry credentials/],
      [{ url: 'http://proxy.example:3129/path' }, /no path, query or fragment/],
      [{ url: 'http://proxy.example:3129', password: CANARY }, /password: a password needs a username/],
    ] as const) {
      const r = await req('POST', '/v1/sessions', { proxy })
      t.equal(r.status, 400, proxy.url)
      t.match(r.body.error.message, rule)
      t.notOk(r.text.includes(CANARY), 'the refusal does not echo the credential')
    }

    const gov = await req('PUT', '/v1/governance', { proxyHosts: ['Proxy.Example:3129', 'socks.example'] })
    t.equal(gov.status, 200)
    t.same(gov.body.proxyHosts, ['proxy.example:3129', 'socks.example'], 'hosts are normalised')
    const otherPort = await req('POST', '/v1/sessions', { proxy: { url: 'http://proxy.example:3128' } })
    t.equal(otherPort.body.error?.reason, 'proxy_host_not_allowed', 'a port-bound entry allows that port only')
    const subdomain = await req('POST', '/v1/sessions', { proxy: { url: 'socks5://a.socks.example:1080' } })
    t.equal(subdomain.body.error?.reason, 'proxy_host_not_allowed', 'hosts match exactly, never a subdomain')
  })

  t.test('an address the platform refuses is a 400 whatever the org allowlisted, before anything is written', async (t) => {
    const port = new URL(s.url).port
    const hosts = ['10.0.0.5:3128', '127.0.0.1:9999', '[::1]:443', `127.0.0.1:${port}`, '[::ffff:7f00:1]:8080', 'localhost:3128', 'a.localhost:3128', '169.254.169.254:80']
    await req('PUT', '/v1/governance', { proxyHosts: [...hosts, 'proxy.example:3129', 'socks.example'] })
    const persona = await createPersona(s, acme.apiKey, { name: 'refused-proxy', value: 'unrelated-secret-2', originAllowlist: ['example.com'], agentId: acme.agentId })
    const before = await sessionCount()
    const bodies = new Set<string>()
    for (const host of hosts) {
      const start = await req('POST', '/v1/sessions', { proxy: { url: `http://${host}`, username: PROXY_USER, password: CANARY } })
      t.equal(start.status, 400, `${host}: refused at the start`)
      t.equal(start.body.error?.reason, 'proxy_address_refused')
      bodies.add(start.text)
      const put = await req('PUT', `/v1/identities/${persona.identityId}/proxy`, { url: `socks5://${host}` })
      t.equal(put.body.error?.reason, 'proxy_address_refused', `${host}: refused as an identity's default`)
    }
    t.equal(bodies.size, 1, 'one body for every refused address: it names none of them')
    t.equal(await sessionCount(), before, 'no session was written')
    await req('PUT', '/v1/governance', { proxyHosts: ['proxy.example:3129', 'socks.example'] })
  })

  t.test('[#39-proxy] an HTTP CONNECT proxy with credentials carries the page to the site', async (t) => {
    const start = await req('POST', '/v1/sessions', { proxy: httpProxy })
    t.equal(start.status, 201)
    t.same(start.body.proxy, { url: 'http://proxy.example:3129', authenticated: true }, 'the URL and that it authenticates, nothing more')
    const id = start.body.id as string
    const nav = await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/api-http' })
    t.equal(nav.status, 200)
    t.equal(nav.body.title, 'the site behind the proxy')
    const seen = (await world.siteRequests()).filter((r) => r.url === '/api-http')
    t.ok(seen.length >= 1 && seen.every((r) => r.from === world.ip), 'the site saw the proxy as the source')
    t.ok((await world.proxyTargets()).some((p) => p.proxy === 'http-auth' && p.target === `${world.ip}:80`), 'the proxy logged the CONNECT target')
    const got = await req('GET', `/v1/sessions/${id}`)
    t.same(got.body.proxy, { url: 'http://proxy.example:3129', authenticated: true })
    const journal = await req('GET', `/v1/sessions/${id}/journal`)
    t.equal(journal.body.items.find((r: any) => r.op === 'session_start')?.detail.proxy, 'http://proxy.example:3129')

    const floor = await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://169.254.169.254/latest/meta-data/' })
    t.equal(floor.status, 403)
    t.match(floor.body.error, { code: 'E_REACHABILITY_DENIED', reason: 'deny_floor' }, 'the deny floor still applies to the destination')
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[#39-proxy] a SOCKS5 proxy with username and password', async (t) => {
    const start = await req('POST', '/v1/sessions', { proxy: socksProxy })
    t.equal(start.status, 201)
    t.same(start.body.proxy, { url: 'socks5://socks.example:1080', authenticated: true })
    const id = start.body.id as string
    const nav = await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/api-socks' })
    t.equal(nav.status, 200)
    t.ok((await world.siteRequests()).filter((r) => r.url === '/api-socks').every((r) => r.from === world.ip))
    t.ok((await world.proxyTargets()).some((p) => p.proxy === 'socks5' && p.target === `${world.ip}:80`))
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[#39-proxy] refusals: wrong credentials and a proxy that is down are the one proxy error on navigate', async (t) => {
    for (const [proxy, reason] of [
      [{ ...httpProxy, password: 'wrong-password' }, 'proxy_failed'],
      [{ ...socksProxy, password: 'wrong-password' }, 'proxy_failed'],
      [{ url: 'socks5://socks.example:3999' }, 'proxy_failed'],
    ] as const) {
      const start = await req('POST', '/v1/sessions', { proxy })
      t.equal(start.status, 201)
      const id = start.body.id as string
      const began = Date.now()
      const nav = await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/refused' })
      t.equal(nav.status, 502, proxy.url)
      t.match(nav.body.error, { code: 'E_UPSTREAM', reason })
      t.ok(Date.now() - began < 20_000, 'answered in bounded time')
      await req('DELETE', `/v1/sessions/${id}`)
    }
  })

  t.test('[#39-proxy] an identity default proxy, sealed like its credentials', async (t) => {
    const persona = await createPersona(s, acme.apiKey, { name: 'proxied', value: 'unrelated-secret-1', originAllowlist: ['example.com'], agentId: acme.agentId })
    const notAllowed = await req('PUT', `/v1/identities/${persona.identityId}/proxy`, { url: 'http://elsewhere.example:8080' })
    t.equal(notAllowed.body.error?.reason, 'proxy_host_not_allowed')
    const put = await req('PUT', `/v1/identities/${persona.identityId}/proxy`, socksProxy)
    t.equal(put.status, 200)
    t.same(put.body, { url: 'socks5://socks.example:1080', authenticated: true })
    const listed = (await req('GET', '/v1/identities')).body.find((i: any) => i.id === persona.identityId)
    t.same(listed.proxy, { url: 'socks5://socks.example:1080', authenticated: true })

    const start = await req('POST', '/v1/sessions', { identity: persona.identityId })
    t.equal(start.status, 201)
    t.same(start.body.proxy, { url: 'socks5://socks.example:1080', authenticated: true }, 'a session bound to it that names no proxy uses the default')
    const id = start.body.id as string
    t.equal((await req('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/api-default' })).status, 200)
    t.ok((await world.siteRequests()).filter((r) => r.url === '/api-default').every((r) => r.from === world.ip), 'through the default proxy')
    await req('DELETE', `/v1/sessions/${id}`)

    // the admin takes the host off the list: the default no longer opens a session
    await req('PUT', '/v1/governance', { proxyHosts: ['proxy.example:3129'] })
    const refused = await req('POST', '/v1/sessions', { identity: persona.identityId })
    t.equal(refused.body.error?.reason, 'proxy_host_not_allowed')
    const lease = await s.testDb.db.query('select count(*) from identity_leases where identity_id = $1', [persona.identityId])
    t.equal(Number(lease.rows[0].count), 0, 'the refused start gave the lease back')
    t.equal((await req('DELETE', `/v1/identities/${persona.identityId}/proxy`)).status, 204)
    const plain = await req('POST', '/v1/sessions', { identity: persona.identityId })
    t.equal(plain.status, 201)
    t.notOk('proxy' in plain.body, 'without a default the session goes direct')
    await req('DELETE', `/v1/sessions/${plain.body.id}`)
    await req('PUT', '/v1/governance', { proxyHosts: ['proxy.example:3129', 'socks.example'] })
  })

  t.test('[#39-proxy] the proxy password is in no response, log, audit row or table', async (t) => {
    const audit = await req('GET', '/v1/audit?limit=500')
    t.equal(audit.status, 200)
    t.notOk(replies.some((r) => r.includes(CANARY)), 'no response carried it')
    t.notOk(s.logs().includes(CANARY), 'no log line (api-server, operator, pods) carried it')
    const dump = await dumpAllTables(s.testDb.db)
    t.notOk(dump.includes(CANARY), 'no table holds it in clear')
    t.notOk(dump.includes(Buffer.from(`${PROXY_USER}:${CANARY}`).toString('base64')), 'nor its Basic encoding')
    t.match(dump, /"proxy_sealed_auth":"[A-Za-z0-9+/]{40,}={0,2}"/, 'the sealed envelope is what is stored')
  })
})
