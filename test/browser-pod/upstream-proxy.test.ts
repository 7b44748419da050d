// A session's upstream proxy at the pod: real Chromium, the egress
// gateway, and real proxies in a network namespace (test/helpers/proxies.ts: npm's
// `proxy` for HTTP CONNECT, `@pondwader/socks5-server` for SOCKS5). Proves the page's
// requests reach the site through the proxy, with credentials where the proxy needs them,
// and that every failure is the one typed error on navigate, in bounded time.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createProxy } from 'proxy'
import { EgressGateway } from '../../browser-pod/egress-gateway.ts'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import type { ApiError } from '../../contracts/errors.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { socksFailure } from '../../browser-pod/upstream-proxy.ts'
import { HTTP_AUTH_PROXY_PORT, HTTP_PROXY_PORT, PROXY_USER, SOCKS_PROXY_PORT, startProxyWorld } from '../helpers/proxies.ts'
import { fails, fakeTunnel, inProcessSandbox, loopbackServer, newToken } from './harness.ts'

t.test('[#39-proxy] sessions through real proxies', async (t) => {
  const password = `pw-${randomBytes(12).toString('hex')}`
  const world = await startProxyWorld(t, password)
  const aliases = { 'example.com': world.ip, 'proxy.example': world.ip, 'inside-proxy.example': '127.0.0.1' }

  async function session(t: Test, proxy: { url: string; username?: string; password?: string } | null) {
    const token = newToken()
    const logs: string[] = []
    const pod = await startPod({ token, hostAliases: aliases, sandbox: inProcessSandbox(), log: (l) => logs.push(l) })
    t.teardown(() => pod.close())
    const client = new PodClient(pod.endpoint, token)
    t.teardown(() => client.close())
    await client.configure({ sessionId: 'nsess_proxy', egress: { mode: 'platform', declaredHosts: [] } })
    if (proxy) await client.egressProxy(proxy)
    return { client, pod, logs }
  }

  t.test('without a proxy the site sees the pod itself (the control)', async (t) => {
    const { client } = await session(t, null)
    t.match(await client.drive('navigate', { url: 'http://example.com/direct' }), { title: 'the site behind the proxy', status: 200 })
    const seen = (await world.siteRequests()).filter((r) => r.url === '/direct')
    t.same(seen.map((r) => r.from), [world.hostIp], 'a direct request comes from the root side of the veth')
  })

  t.test('HTTP CONNECT proxy with Basic credentials', async (t) => {
    const { client, pod } = await session(t, { url: `http://proxy.example:${HTTP_AUTH_PROXY_PORT}`, username: PROXY_USER, password })
    t.same(pod.gateway.proxy, { scheme: 'http', host: 'proxy.example', port: HTTP_AUTH_PROXY_PORT, authenticated: true })
    t.match(await client.drive('navigate', { url: 'http://example.com/via-http' }), { title: 'the site behind the proxy', status: 200 })
    const seen = (await world.siteRequests()).filter((r) => r.url === '/via-http')
    t.ok(seen.length >= 1 && seen.every((r) => r.from === world.ip), 'the site saw the proxy as the source, never the pod')
    t.equal(seen[0].host, 'example.com', 'the page\'s own Host header arrives unchanged')
    t.ok((await world.proxyTargets()).some((p) => p.proxy === 'http-auth' && p.target === `${world.ip}:80`), 'the proxy was asked for the address the gateway checked')
    t.notOk(JSON.stringify(pod.gateway.recordsSince(0)).includes(password), 'no gateway record holds the password')
  })

  t.test('SOCKS5 proxy with username and password (RFC 1929)', async (t) => {
    const { client } = await session(t, { url: `socks5://proxy.example:${SOCKS_PROXY_PORT}`, username: PROXY_USER, password })
    t.match(await client.drive('navigate', { url: 'http://example.com/via-socks' }), { title: 'the site behind the proxy', status: 200 })
    const seen = (await world.siteRequests()).filter((r) => r.url === '/via-socks')
    t.ok(seen.length >= 1 && seen.every((r) => r.from === world.ip), 'the site saw the SOCKS proxy as the source')
    t.ok((await world.proxyTargets()).some((p) => p.proxy === 'socks5' && p.target === `${world.ip}:80`))
  })

  t.test('an open HTTP proxy needs no credentials', async (t) => {
    const { client } = await session(t, { url: `http://${world.ip}:${HTTP_PROXY_PORT}` })
    t.match(await client.drive('navigate', { url: 'http://example.com/via-open' }), { status: 200 })
    t.ok((await world.siteRequests()).filter((r) => r.url === '/via-open').every((r) => r.from === world.ip))
  })

  t.test('split egress: declared local targets still go through the daemon, the public web through the proxy', async (t) => {
    const local = await loopbackServer(t, 'developer app')
    const tunnel = fakeTunnel()
    const token = newToken()
    const pod = await startPod({ token, hostAliases: aliases, tunnel, sandbox: inProcessSandbox() })
    t.teardown(() => pod.close())
    const client = new PodClient(pod.endpoint, token)
    t.teardown(() => client.close())
    await client.configure({ sessionId: 'nsess_split_proxy', egress: { mode: 'split', declaredHosts: [`localhost:${local.port}`] } })
    await client.egressProxy({ url: `socks5://proxy.example:${SOCKS_PROXY_PORT}`, username: PROXY_USER, password })
    const before = (await world.proxyTargets()).length
    t.match(await client.drive('navigate', { url: `http://localhost:${local.port}/` }), { title: 'developer app' })
    t.ok(tunnel.dials.includes(`localhost:${local.port}`), 'the declared local target went through the daemon tunnel')
    t.equal((await world.proxyTargets()).length, before, 'and never through the proxy')
    t.match(await client.drive('navigate', { url: 'http://example.com/split-public' }), { status: 200 })
    t.ok((await world.siteRequests()).filter((r) => r.url === '/split-public').every((r) => r.from === world.ip), 'the public web went through the proxy')
    t.notOk(tunnel.dials.some((d) => d.startsWith('example.com')), 'not through the tunnel')
  })

  t.test('refusals are typed errors on navigate', async (t) => {
    const right = await session(t, { url: `http://proxy.example:${HTTP_AUTH_PROXY_PORT}`, username: PROXY_USER, password })
    const wrongHttp = await session(t, { url: `http://proxy.example:${HTTP_AUTH_PROXY_PORT}`, username: PROXY_USER, password: 'not-the-password' })
    let e = await fails(wrongHttp.client.drive('navigate', { url: 'http://example.com/wrong' }))
    t.match(e, { status: 502, code: 'E_UPSTREAM', reason: 'proxy_failed' }, 'HTTP 407 → proxy_failed')
    t.match(wrongHttp.pod.gateway.lastDecision('example.com', 80), { proxyFailed: true, proxyDetail: 'HTTP 407' }, 'the cause is the pod\'s to know')

    const noCreds = await session(t, { url: `http://proxy.example:${HTTP_AUTH_PROXY_PORT}` })
    e = await fails(noCreds.client.drive('navigate', { url: 'http://example.com/none' }))
    t.equal(e.reason, 'proxy_failed', 'a proxy that wants credentials and got none')

    const wrongSocks = await session(t, { url: `socks5://proxy.example:${SOCKS_PROXY_PORT}`, username: PROXY_USER, password: 'not-the-password' })
    e = await fails(wrongSocks.client.drive('navigate', { url: 'http://example.com/wrong-socks' }))
    t.match(e, { status: 502, code: 'E_UPSTREAM', reason: 'proxy_failed' }, 'SOCKS5 auth failure → proxy_failed')

    const down = await session(t, { url: `socks5://proxy.example:3999` })
    const started = Date.now()
    e = await fails(down.client.drive('navigate', { url: 'http://example.com/down' }))
    t.match(e, { status: 502, code: 'E_UPSTREAM', reason: 'proxy_failed' }, 'nothing listening → proxy_failed')
    t.notMatch(e.message, /ECONNREFUSED/, 'the cause stays in the pod')
    t.ok(Date.now() - started < 15_000, 'answered, not hung')

    const secure = await session(t, { url: `http://proxy.example:${HTTP_PROXY_PORT}` })
    e = await fails(secure.client.drive('navigate', { url: 'https://example.com/' }))
    t.ok(e.reason === 'NAVIGATION_FAILED' || e.reason === 'proxy_failed', 'a site with no TLS, reached through the proxy, fails as a navigation')

    for (const [url, what] of [['http://169.254.169.254/latest/meta-data/', 'the metadata address'], ['http://127.0.0.1/', 'loopback']] as const) {
      // this session's proxy only: Chromium may still send the session above a late CONNECT of its own
      const asked = async () => (await world.proxyTargets()).filter((p) => p.proxy === 'http-auth').length
      const before = await asked()
      e = await fails(wrongHttp.client.drive('navigate', { url }))
      t.ok(e.code === 'E_REACHABILITY_DENIED' || e.reason === 'NAVIGATION_FAILED', `${what} is refused by the gateway before any proxy`)
      t.notOk(e.reason?.startsWith('proxy_'), `${what}: the proxy is never asked`)
      t.equal(await asked(), before, `${what}: no CONNECT reached the proxy`)
    }
    e = await fails(wrongHttp.client.drive('navigate', { url: 'http://169.254.169.254/' }))
    t.match(e, { code: 'E_REACHABILITY_DENIED', reason: 'deny_floor' }, 'the deny floor still applies to the destination')

    const inside = await session(t, { url: `http://inside-proxy.example:${HTTP_PROXY_PORT}` })
    e = await fails(inside.client.drive('navigate', { url: 'http://example.com/inside' }))
    t.match(e, { status: 502, code: 'E_UPSTREAM', reason: 'proxy_failed' }, 'a proxy name resolving to a local address is refused, as the proxy failing')
    t.match(inside.pod.gateway.lastDecision('example.com', 80)?.proxyDetail, /refused by the platform/)

    // a failed navigation of a session holding the right password says nothing of it either
    await fails(right.client.drive('navigate', { url: 'http://169.254.169.254/' }))
    const closed = await fails(right.client.drive('navigate', { url: 'http://example.com:81/' }))
    t.notOk(closed.message.includes(password), 'no error message carries the password')
    t.notOk(right.logs.some((l) => l.includes(password)), 'the proxy password is in no pod log line')
  })
})

t.test('[#39-proxy] SOCKS library errors keep their gist for the pod\'s log', async (t) => {
  t.equal(socksFailure(new Error('Socks5 Authentication failed')).detail, 'SOCKS5 authentication failed')
  t.equal(socksFailure(new Error('Received invalid Socks5 initial handshake (no accepted authentication type)')).detail, 'SOCKS5 authentication failed')
  t.same(socksFailure(new Error('Socks5 proxy rejected connection - NotAllowed')).detail, 'SOCKS5 NotAllowed')
  t.equal(socksFailure(new Error('Proxy connection timed out')).detail, 'timed out')
})

/** A self-signed certificate for 127.0.0.1, made with the openssl CLI. */
function selfSigned() {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-proxy-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') }
}

/** CONNECT through the gateway the way Chromium does, then one GET in the tunnel: the status line, or the refusal's status. */
function getThrough(gw: EgressGateway, authority: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.port, method: 'CONNECT', path: authority, agent: false })
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy()
        return resolve(res.statusCode!)
      }
      let raw = ''
      socket.on('data', (d) => (raw += d))
      socket.on('end', () => resolve(Number(raw.split(' ')[1])))
      socket.on('error', reject)
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${authority.replace(/:\d+$/, '')}\r\nConnection: close\r\n\r\n`)
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('[#39-proxy] an https:// proxy: TLS to the proxy (verified), then CONNECT with credentials', async (t) => {
  const password = `pw-${randomBytes(12).toString('hex')}`
  const world = await startProxyWorld(t, password)
  const { cert, key } = selfSigned()
  const server = createProxy(https.createServer({ cert, key }))
  server.authenticate = (req) => req.headers['proxy-authorization'] === `Basic ${Buffer.from(`${PROXY_USER}:${password}`).toString('base64')}`
  const targets: string[] = []
  server.on('connect', (req: http.IncomingMessage) => targets.push(req.url ?? ''))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const port = (server.address() as AddressInfo).port

  const gateway = async (ca: string[] | undefined, pw: string) => {
    const gw = new EgressGateway({ connectTimeoutMs: 5000, proxyCa: ca })
    await gw.listen()
    t.teardown(() => gw.close())
    gw.configure({ mode: 'platform', declaredHosts: [], denyCidrs: [], hostAliases: { 'example.com': world.ip } })
    // loopback, so the platform names it (NIGHTJAR_PLATFORM_PROXIES): no org could
    gw.setProxy({ scheme: 'https', host: '127.0.0.1', port, username: PROXY_USER, password: pw, platformProxy: true })
    return gw
  }

  const gw = await gateway([cert], password)
  t.equal(await getThrough(gw, 'example.com:80', '/via-tls'), 200)
  t.same(targets, [`${world.ip}:80`], 'the TLS proxy was asked for the checked address')
  t.ok((await world.siteRequests()).some((r) => r.url === '/via-tls'), 'the site got the request')
  t.match(gw.lastDecision('example.com', 80), { outcome: 'allowed', route: 'proxy' })

  const wrong = await gateway([cert], 'not-the-password')
  t.equal(await getThrough(wrong, 'example.com:80', '/wrong'), 502, 'Chromium sees a failed tunnel, never a 407 of ours')
  t.match(wrong.lastDecision('example.com', 80), { outcome: 'failed', route: 'proxy', proxyFailed: true, proxyDetail: 'HTTP 407' })

  const untrusted = await gateway(undefined, password)
  t.equal(await getThrough(untrusted, 'example.com:80', '/untrusted'), 502)
  t.match(untrusted.lastDecision('example.com', 80), { outcome: 'failed', proxyFailed: true }, 'a proxy certificate nobody trusts: failed, never sent the credentials')
  t.equal(targets.length, 2, 'the untrusted attempt never reached CONNECT')
})
