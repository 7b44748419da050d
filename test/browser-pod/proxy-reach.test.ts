// Where a session's upstream proxy may be, and how it fails: the platform's rule binds the
// proxy whatever the org allowlisted (NIGHTJAR_DENY_CIDRS, loopback, the machine's own
// addresses, localhost names — literal or resolved), the credentials never reach a refused
// address, every failure reads as one error, and navigate answers within 15 s. Real
// Chromium and the real gateway; the proxies are listeners on loopback and in network
// namespaces the test creates (test/helpers/netns.ts), one of them denied by the pod's ranges.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { createProxy } from 'proxy'
import { EgressGateway } from '../../browser-pod/egress-gateway.ts'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { createNamespace, waitForLine } from '../helpers/netns.ts'
import { PROXY_USER, startProxyWorld } from '../helpers/proxies.ts'
import { fails, inProcessSandbox, newToken } from './harness.ts'

const HUNG = 4001 // accepts, never answers
const HALF = 4002 // answers a status line and one header, never the end of the headers
const PLAIN = 4003 // plain HTTP waiting for a whole request head (a TLS hello never is one)
const RESET = 4004 // resets the connection at the first byte
const FORBIDDEN = 4005 // an HTTP proxy answering CONNECT with 403
const AUTH = 4006 // an HTTP proxy answering CONNECT with 407
const BLURT = 4007 // plain HTTP answering 400 at the first byte (to a TLS hello too)
const NOTHING = 4009 // nothing listens
const STATUS = 4010 // what the listeners saw, for the test

// Runs in a namespace: the listeners above, each recording every connection and whether a
// proxy-authorization header arrived on it.
const LISTENERS = String.raw`
const net = require('node:net'), http = require('node:http')
const ip = process.env.LISTEN_IP, seen = []
const head = (s, then) => { let buf = ''; s.on('data', (d) => { buf += d.toString('latin1'); const end = buf.indexOf('\r\n\r\n'); if (end >= 0) { s.removeAllListeners('data'); then(buf.slice(0, end)) } }) }
const listen = (port, onSocket) => new Promise((r) => net.createServer((s) => {
  const row = { port, auth: false }; seen.push(row); s.on('error', () => {})
  s.on('data', (d) => { if (/proxy-authorization:/i.test(d.toString('latin1'))) row.auth = true })
  onSocket(s)
}).listen(port, ip, r))
Promise.all([
  listen(${HUNG}, () => {}),
  listen(${HALF}, (s) => head(s, () => s.write('HTTP/1.1 200 Connection established\r\nX-Half: yes\r\n'))),
  listen(${PLAIN}, (s) => head(s, () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'))),
  listen(${RESET}, (s) => s.once('data', () => s.resetAndDestroy())),
  listen(${FORBIDDEN}, (s) => head(s, () => s.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n'))),
  listen(${AUTH}, (s) => head(s, () => s.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="p"\r\nContent-Length: 0\r\n\r\n'))),
  listen(${BLURT}, (s) => s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'))),
  new Promise((r) => http.createServer((req, res) => res.end(JSON.stringify(seen))).listen(${STATUS}, ip, r)),
]).then(() => process.stdout.write('ready\n'))
`

/** A namespace of misbehaving proxies; `seen()` lists the connections they took. */
async function listenersIn(t: Test) {
  const space = await createNamespace(t)
  const child = space.spawn(process.execPath, ['-e', LISTENERS], { LISTEN_IP: space.ip })
  await waitForLine(child, 'ready', 15_000)
  return {
    ip: space.ip,
    hostIp: space.hostIp,
    seen: async () => (await (await fetch(`http://${space.ip}:${STATUS}/`)).json()) as { port: number; auth: boolean }[],
  }
}

/** A listener in this namespace that must never be connected to. */
async function canary(t: Test, host: string) {
  let connections = 0
  const server = net.createServer((s) => { connections++; s.destroy() })
  await new Promise<void>((r) => server.listen(0, host, () => r()))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return { port: (server.address() as AddressInfo).port, connections: () => connections }
}

/** CONNECT through the gateway as Chromium does: the gateway's status, and how long it took. */
function connectThrough(gw: EgressGateway, authority: string): Promise<{ status: number; ms: number }> {
  const began = Date.now()
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.port, method: 'CONNECT', path: authority, agent: false })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve({ status: res.statusCode!, ms: Date.now() - began })
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('a session\'s proxy is held to the platform\'s deny list, never to the org\'s word alone', async (t) => {
  const password = `pw-${randomBytes(12).toString('hex')}`
  const world = await startProxyWorld(t, password)
  const denied = await listenersIn(t) // in NIGHTJAR_DENY_CIDRS below
  const v4 = await canary(t, '127.0.0.1')
  const v6 = await canary(t, '::1')
  const own = await canary(t, denied.hostIp) // an address of this machine's own interfaces
  const denyCidrs = [`${denied.ip}/32`, 'fd00::/120']
  const aliases = { 'example.com': world.ip, 'inside.example': '127.0.0.1', 'denied.example': denied.ip }

  const gateway = async (proxy: { scheme: 'http' | 'https' | 'socks5'; host: string; port: number; platformProxy?: boolean }) => {
    const gw = new EgressGateway({ log: () => {} })
    await gw.listen()
    t.teardown(() => gw.close())
    gw.configure({ mode: 'platform', declaredHosts: [], denyCidrs, hostAliases: aliases })
    gw.setProxy({ ...proxy, username: PROXY_USER, password })
    return gw
  }

  t.test('refused literals and names: no connection, so the credentials go nowhere', async (t) => {
    const refused = [
      { scheme: 'http', host: '127.0.0.1', port: v4.port },
      { scheme: 'https', host: '127.0.0.1', port: v4.port },
      { scheme: 'socks5', host: '127.0.0.1', port: v4.port },
      { scheme: 'http', host: '::1', port: v6.port },
      { scheme: 'http', host: '::ffff:127.0.0.1', port: v4.port },
      { scheme: 'http', host: 'inside.example', port: v4.port }, // a name resolving to loopback
      { scheme: 'http', host: denied.ip, port: AUTH }, // NIGHTJAR_DENY_CIDRS, as a literal
      { scheme: 'http', host: 'denied.example', port: AUTH }, // and once resolved
      { scheme: 'http', host: denied.hostIp, port: own.port }, // the machine's own address
      { scheme: 'http', host: 'localhost', port: v4.port },
      { scheme: 'http', host: 'localhost.', port: v4.port },
      { scheme: 'http', host: 'foo.localhost', port: v4.port },
    ] as const
    for (const proxy of refused) {
      const gw = await gateway(proxy)
      const r = await connectThrough(gw, 'example.com:80')
      t.equal(r.status, 502, `${proxy.scheme}://${proxy.host}: the tunnel fails`)
      t.match(gw.lastDecision('example.com', 80), { outcome: 'failed', route: 'proxy', proxyFailed: true }, 'as the proxy failing')
      t.match(gw.lastDecision('example.com', 80)?.proxyDetail, /refused by the platform/, 'refused before any connection (the log says so)')
    }
    t.equal(v4.connections() + v6.connections() + own.connections(), 0, 'no loopback or own-address listener was ever connected to')
    t.same(await denied.seen(), [], 'nothing in the denied range was connected to: no proxy-authorization went there')
  })

  t.test('a proxy the platform names (NIGHTJAR_PLATFORM_PROXIES) may be internal; the floor still binds it', async (t) => {
    const server = createProxy(http.createServer())
    const targets: string[] = []
    server.on('connect', (req: http.IncomingMessage) => targets.push(req.url ?? ''))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    t.teardown(() => { server.closeAllConnections(); server.close() })
    const port = (server.address() as AddressInfo).port
    const gw = await gateway({ scheme: 'http', host: '127.0.0.1', port, platformProxy: true })
    t.equal((await connectThrough(gw, 'example.com:80')).status, 200, 'a platform proxy on loopback carries the tunnel')
    t.same(targets, [`${world.ip}:80`])
    const floor = await gateway({ scheme: 'http', host: '169.254.169.254', port: 80, platformProxy: true })
    t.equal((await connectThrough(floor, 'example.com:80')).status, 502, 'a platform proxy at the metadata address is refused all the same')
  })

  t.test('navigate: a refused proxy reads as the one proxy error', async (t) => {
    for (const url of [`http://127.0.0.1:${v4.port}`, `http://${denied.ip}:${AUTH}`]) {
      const token = newToken()
      const pod = await startPod({ token, hostAliases: aliases, denyCidrs, sandbox: inProcessSandbox() })
      t.teardown(() => pod.close())
      const client = new PodClient(pod.endpoint, token)
      t.teardown(() => client.close())
      await client.configure({ sessionId: 'nsess_reach', egress: { mode: 'platform', declaredHosts: [] } })
      await client.egressProxy({ url, username: PROXY_USER, password })
      const e = await fails(client.drive('navigate', { url: 'http://example.com/' }))
      t.match(e, { status: 502, code: 'E_UPSTREAM', reason: 'proxy_failed' }, url)
      t.notOk(e.message.includes(password) || e.message.includes(denied.ip), 'the message names neither the credential nor the proxy')
    }
    t.equal(v4.connections(), 0)
    t.same(await denied.seen(), [])
  })
})

t.test('every way a proxy fails reads the same, byte for byte; navigate answers within 15 s', async (t) => {
  const password = `pw-${randomBytes(12).toString('hex')}`
  const world = await startProxyWorld(t, password)
  const bad = await listenersIn(t)
  const aliases = { 'example.com': world.ip, 'slow-proxy.example': bad.ip }

  async function session(url: string) {
    const token = newToken()
    const pod = await startPod({ token, hostAliases: aliases, sandbox: inProcessSandbox() })
    t.teardown(() => pod.close())
    const client = new PodClient(pod.endpoint, token)
    t.teardown(() => client.close())
    await client.configure({ sessionId: 'nsess_oracle', egress: { mode: 'platform', declaredHosts: [] } })
    await client.egressProxy({ url, username: PROXY_USER, password })
    return { pod, client }
  }
  const navigate = async (s: Awaited<ReturnType<typeof session>>) => {
    const began = Date.now()
    const e = await fails(s.client.drive('navigate', { url: 'http://example.com/same' }))
    return { status: e.status, body: JSON.stringify(e.toBody()), ms: Date.now() - began, detail: s.pod.gateway.lastDecision('example.com', 80)?.proxyDetail }
  }

  t.test('a refused port, a reset, a 403, a 407, a failed TLS handshake: one body', async (t) => {
    const cases = [
      ['nothing listening', `http://${bad.ip}:${NOTHING}`],
      ['a reset', `http://${bad.ip}:${RESET}`],
      ['HTTP 403 to CONNECT', `http://${bad.ip}:${FORBIDDEN}`],
      ['HTTP 407 to CONNECT', `http://${bad.ip}:${AUTH}`],
      ['TLS to a plain HTTP answer', `https://${bad.ip}:${BLURT}`],
    ] as const
    const answers = []
    for (const [what, url] of cases) answers.push({ what, ...(await navigate(await session(url))) })
    const first = answers[0]
    t.match(JSON.parse(first.body), { error: { code: 'E_UPSTREAM', reason: 'proxy_failed' } })
    for (const a of answers) {
      t.equal(a.status, 502, a.what)
      t.equal(a.body, first.body, `${a.what}: the same bytes as ${first.what}`)
    }
    t.equal(new Set(answers.map((a) => a.detail)).size, answers.length, 'while the pod\'s own record (its log) tells each cause apart')
    t.notOk(answers.some((a) => a.body.includes(password)))
  })

  t.test('a hung proxy, one that half-answers, TLS to a plain one: each answers within 15 s (+1.5 s slack)', async (t) => {
    const cases = [
      ['hung', `http://${bad.ip}:${HUNG}`],
      ['half an answer', `http://${bad.ip}:${HALF}`],
      ['TLS to plain HTTP', `https://${bad.ip}:${PLAIN}`],
      ['SOCKS5 to a hung one', `socks5://${bad.ip}:${HUNG}`],
    ] as const
    const sessions = []
    for (const [, url] of cases) sessions.push(await session(url))
    const answers = await Promise.all(sessions.map(navigate)) // waiting out the deadline together
    answers.forEach((a, i) => {
      t.comment(`${cases[i][0]}: navigate answered in ${a.ms} ms (${a.detail})`)
      t.ok(a.ms <= 16_500, `${cases[i][0]}: answered in ${a.ms} ms`)
      t.match(JSON.parse(a.body), { error: { reason: 'proxy_failed' } })
    })
  })

  t.test('a proxy name that is slow to resolve shares the one deadline', async (t) => {
    const gw = new EgressGateway({
      log: () => {},
      dns: async (host) => {
        await new Promise((r) => setTimeout(r, 4000)) // a resolver that takes 4 s
        return { address: host === 'slow-proxy.example' ? bad.ip : world.ip, family: 4 }
      },
    })
    await gw.listen()
    t.teardown(() => gw.close())
    gw.configure({ mode: 'platform', declaredHosts: [], denyCidrs: [], hostAliases: { 'example.com': world.ip } })
    gw.setProxy({ scheme: 'http', host: 'slow-proxy.example', port: HUNG, username: PROXY_USER, password })
    const r = await connectThrough(gw, 'example.com:80')
    t.comment(`slow lookup, then a hung proxy: the tunnel failed after ${r.ms} ms`)
    t.equal(r.status, 502)
    t.ok(r.ms <= 16_500, `within 15 s (+1.5 s slack): ${r.ms} ms`)
  })
})
