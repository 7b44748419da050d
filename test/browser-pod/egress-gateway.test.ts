// The egress gateway on its own (no Chromium): real HTTP and CONNECT through it to the
// "public web" namespace and to loopback servers, with every egress mode.
import t, { type Test } from 'tap'
import http from 'node:http'
import { Duplex } from 'node:stream'
import { EgressGateway, parseAuthority, type EgressPolicy, type TunnelDialer } from '../../browser-pod/egress-gateway.ts'
import { CompiledPolicy, decide } from '../../browser-pod/egress-policy.ts'
import { createNamespace, startPublicWeb, waitForLine } from '../helpers/netns.ts'
import { fakeTunnel, loopbackServer, publicAliases } from './harness.ts'

interface Reply { status: number; body: string; headers: http.IncomingHttpHeaders }

/** A plain-HTTP proxy request, the way Chromium sends one (absolute URI). */
function proxyGet(gw: EgressGateway, url: string): Promise<Reply> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.port, path: url, headers: { host: u.host }, agent: false }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** CONNECT host:port, then one HTTP/1.1 GET through the tunnel. */
function proxyConnect(gw: EgressGateway, authority: string, hostHeader = authority.replace(/:\d+$/, '')): Promise<Reply & { tunnel: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.port, method: 'CONNECT', path: authority, agent: false })
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy()
        return resolve({ status: res.statusCode!, body: '', headers: res.headers, tunnel: false })
      }
      let raw = ''
      socket.on('data', (d) => (raw += d))
      socket.on('end', () => {
        const [head, ...rest] = raw.split('\r\n\r\n')
        resolve({ status: Number(head.split(' ')[1]), body: rest.join('\r\n\r\n'), headers: {}, tunnel: true })
      })
      socket.on('error', reject)
      socket.write(`GET /page2.html HTTP/1.1\r\nHost: ${hostHeader}\r\nConnection: close\r\n\r\n`)
    })
    req.on('error', reject)
    req.end()
  })
}

async function gateway(t: Test, policy: Partial<EgressPolicy> | null): Promise<EgressGateway> {
  const gw = new EgressGateway({ connectTimeoutMs: 3000 })
  await gw.listen()
  t.teardown(() => gw.close())
  if (policy) gw.configure({ mode: 'platform', declaredHosts: [], denyCidrs: [], hostAliases: {}, ...policy })
  return gw
}


t.test('policy decisions (pure)', async (t) => {
  const dns = async (h: string) => {
    const table: Record<string, string> = { 'public.test': '198.18.5.5', 'lan.test': '10.1.2.3', 'meta.test': '169.254.169.254', 'mapped.test': '::ffff:127.0.0.1' }
    if (!table[h]) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' })
    return { address: table[h], family: table[h].includes(':') ? 6 : 4 } as const
  }
  const p = (mode: EgressPolicy['mode'], declaredHosts: string[] = [], extra: Partial<EgressPolicy> = {}) =>
    new CompiledPolicy({ mode, declaredHosts, denyCidrs: ['100.64.0.0/10'], hostAliases: {}, ...extra })
  const tunnel = { dial: async () => new Duplex() }

  t.same(await decide(null, 'public.test', 80, dns), { action: 'deny', reason: 'not_configured' })
  // platform
  t.same(await decide(p('platform'), 'public.test', 80, dns), { action: 'direct', address: '198.18.5.5', family: 4 })
  t.same(await decide(p('platform'), '127.0.0.1', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), 'localhost', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), 'app.localhost', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), '::1', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), 'lan.test', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), '192.168.1.1', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), 'fd00::1', 80, dns), { action: 'refuse', reason: 'local_address' })
  t.same(await decide(p('platform'), 'mapped.test', 80, dns), { action: 'refuse', reason: 'local_address' }, 'IPv4-mapped loopback is loopback')
  // deny floor, every mode, and the configured cluster ranges
  for (const mode of ['platform', 'local', 'split'] as const) {
    for (const h of ['169.254.169.254', '0.0.0.0', '224.0.0.1', 'fe80::1', '::ffff:169.254.169.254']) {
      t.same(await decide(p(mode, [h], { tunnel }), h, 80, dns), { action: 'deny', reason: 'deny_floor' }, `${mode} ${h}`)
    }
  }
  t.same(await decide(p('platform'), 'meta.test', 80, dns), { action: 'deny', reason: 'deny_floor' }, 'judged on the resolved address')
  t.same(await decide(p('platform'), '100.64.1.1', 80, dns), { action: 'deny', reason: 'deny_floor' }, 'denyCidrs')
  // local: only declared hosts, all through the tunnel, no pod-side DNS
  t.same(await decide(p('local', ['localhost:3000'], { tunnel }), 'localhost', 3000, dns), { action: 'tunnel' })
  t.same(await decide(p('local', ['localhost:3000'], { tunnel }), 'localhost', 3001, dns), { action: 'deny', reason: 'host_not_declared' })
  t.same(await decide(p('local', [], { tunnel }), 'public.test', 80, dns), { action: 'deny', reason: 'host_not_declared' })
  t.same(await decide(p('local', ['localhost']), 'localhost', 80, dns), { action: 'refuse', reason: 'no_tunnel' })
  // split: local targets via the tunnel when declared, public direct
  t.same(await decide(p('split', ['localhost'], { tunnel }), 'localhost', 8080, dns), { action: 'tunnel' })
  t.same(await decide(p('split', [], { tunnel }), '127.0.0.1', 8080, dns), { action: 'deny', reason: 'host_not_declared' })
  t.same(await decide(p('split', [], { tunnel }), 'lan.test', 80, dns), { action: 'deny', reason: 'host_not_declared' })
  t.same(await decide(p('split', [], { tunnel }), 'public.test', 80, dns), { action: 'direct', address: '198.18.5.5', family: 4 })
  t.same(await decide(p('split', ['10.1.2.3']), '10.1.2.3', 80, dns), { action: 'refuse', reason: 'no_tunnel' })
})

t.test('CONNECT authority parsing', async (t) => {
  t.same(parseAuthority('example.com:443'), { host: 'example.com', port: 443 })
  t.same(parseAuthority('[::1]:8443'), { host: '::1', port: 8443 })
  t.equal(parseAuthority('example.com'), null)
  t.equal(parseAuthority('example.com:0'), null)
  t.equal(parseAuthority('a b:80'), null)
})

t.test('through the gateway (real sockets)', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = publicAliases(web.ip)

  t.test('before configure every target is denied', async (t) => {
    const gw = await gateway(t, null)
    const r = await proxyGet(gw, 'http://example.com/page2.html')
    t.equal(r.status, 403)
    t.equal(r.headers['x-nightjar-egress'], 'denied')
    t.equal(gw.lastDecision('example.com', 80)?.reason, 'not_configured')
  })

  t.test('platform: public names go direct, plain HTTP and CONNECT', async (t) => {
    const gw = await gateway(t, { hostAliases: aliases })
    const r = await proxyGet(gw, 'http://example.com/page2.html')
    t.equal(r.status, 200)
    t.match(r.body, /Second page/)
    t.notOk(r.headers['x-nightjar-egress'], 'upstream responses carry no gateway header')
    t.match(gw.lastDecision('example.com', 80), { outcome: 'allowed', route: 'direct' })
    const c = await proxyConnect(gw, 'login.example.com:80')
    t.ok(c.tunnel)
    t.equal(c.status, 200)
    t.match(c.body, /Second page/)
    const seen = await web.requests()
    t.ok(seen.some((s) => s.host === 'example.com' && s.url === '/page2.html'), 'Host header preserved')
    t.ok(seen.some((s) => s.host === 'login.example.com'))
  })

  t.test('request bodies and large responses stream through', async (t) => {
    const gw = await gateway(t, { hostAliases: aliases })
    const payload = Buffer.alloc(3 * 1024 * 1024, 'nightjar ')
    const echoed = await new Promise<Buffer>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: gw.port, method: 'POST', path: 'http://example.com/echo', headers: { host: 'example.com' }, agent: false },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (d: Buffer) => chunks.push(d))
          res.on('end', () => resolve(Buffer.concat(chunks)))
        },
      )
      req.on('error', reject)
      req.end(payload)
    })
    t.ok(echoed.equals(payload), 'a 3 MiB body went there and back intact')
  })

  t.test('platform: loopback and LAN are refused without a connection', async (t) => {
    const local = await loopbackServer(t)
    const gw = await gateway(t, { hostAliases: { ...aliases, 'sneaky.example': '127.0.0.1' } })
    for (const url of [`http://127.0.0.1:${local.port}/`, `http://localhost:${local.port}/`, `http://sneaky.example:${local.port}/`]) {
      const r = await proxyGet(gw, url)
      t.equal(r.status, 502, url)
      t.equal(r.headers['x-nightjar-egress'], 'refused')
    }
    const c = await proxyConnect(gw, `127.0.0.1:${local.port}`)
    t.notOk(c.tunnel)
    t.equal(c.status, 502)
    t.match(gw.lastDecision('127.0.0.1', local.port), { outcome: 'refused', reason: 'local_address', netError: 'net::ERR_CONNECTION_REFUSED' })
    t.match(gw.lastDecision('sneaky.example', local.port), { outcome: 'refused' }, 'an alias to loopback is judged on the address')
    t.equal(local.connections(), 0, 'the loopback server never saw a connection')
  })

  // The fixed floor through real sockets is deny-floor.test.ts, in a loopback-only
  // namespace: from here a gap would send a packet off this machine.
  t.test('configured cluster ranges', async (t) => {
    const gw = await gateway(t, { hostAliases: aliases, denyCidrs: [`${web.ip}/32`] })
    const before = (await web.requests()).length
    const r = await proxyGet(gw, `http://${web.ip}/page2.html`)
    t.equal(r.status, 403, 'an address in a denied CIDR is denied')
    t.equal(r.headers['x-nightjar-egress'], 'denied')
    const c = await proxyConnect(gw, `${web.ip}:80`)
    t.equal(c.status, 403)
    t.match(gw.lastDecision(web.ip, 80), { outcome: 'denied', reason: 'deny_floor' })
    const n = await proxyGet(gw, 'http://example.com/page2.html')
    t.equal(n.status, 403, 'a name resolving into a denied CIDR is denied')
    t.equal((await web.requests()).length, before, 'nothing reached the server')
  })

  t.test('DNS is resolved once per connection, and that address is used', async (t) => {
    let lookups = 0
    const gw = new EgressGateway({ dns: async () => { lookups++; return { address: web.ip, family: 4 } } })
    await gw.listen()
    t.teardown(() => gw.close())
    gw.configure({ mode: 'platform', declaredHosts: [], denyCidrs: [], hostAliases: {} })
    const c = await proxyConnect(gw, 'www.example.org:80', 'www.example.org')
    t.equal(c.status, 200)
    t.equal(lookups, 1)
  })

  t.test('local: only declared hosts, through the tunnel', async (t) => {
    const local = await loopbackServer(t)
    const tunnel = fakeTunnel()
    const gw = await gateway(t, { mode: 'local', declaredHosts: [`localhost:${local.port}`], hostAliases: aliases, tunnel })
    const r = await proxyGet(gw, `http://localhost:${local.port}/`)
    t.equal(r.status, 200)
    t.match(r.body, /local server/)
    const c = await proxyConnect(gw, `localhost:${local.port}`)
    t.equal(c.status, 200)
    t.same(tunnel.dials, [`localhost:${local.port}`, `localhost:${local.port}`])
    t.match(gw.lastDecision('localhost', local.port), { outcome: 'allowed', route: 'tunnel' })

    const denied = await proxyGet(gw, 'http://example.com/page2.html')
    t.equal(denied.status, 403, 'public web is not reachable in local mode unless declared')
    t.match(gw.lastDecision('example.com', 80), { outcome: 'denied', reason: 'host_not_declared' })
    t.equal(tunnel.dials.length, 2, 'undeclared hosts are never dialed')
  })

  t.test('local: a dead target and a daemon-side "not declared" are typed', async (t) => {
    const tunnel: TunnelDialer = {
      dial: async (host) => {
        throw Object.assign(new Error('x'), { code: host === 'gone.local' ? 'refused' : 'not_declared' })
      },
    }
    const gw = await gateway(t, { mode: 'local', declaredHosts: ['gone.local', 'other.local'], tunnel })
    t.equal((await proxyGet(gw, 'http://gone.local/')).status, 502)
    t.match(gw.lastDecision('gone.local', 80), { outcome: 'failed', netError: 'net::ERR_CONNECTION_REFUSED' })
    t.equal((await proxyConnect(gw, 'other.local:443')).status, 403)
    t.match(gw.lastDecision('other.local', 443), { outcome: 'denied', reason: 'host_not_declared' })
  })

  t.test('local/split without a tunnel refuse local targets cleanly', async (t) => {
    const local = await loopbackServer(t)
    for (const mode of ['local', 'split'] as const) {
      const gw = await gateway(t, { mode, declaredHosts: [`localhost:${local.port}`] })
      const r = await proxyGet(gw, `http://localhost:${local.port}/`)
      t.equal(r.status, 502, mode)
      t.match(gw.lastDecision('localhost', local.port), { outcome: 'refused', reason: 'no_tunnel', netError: 'net::ERR_CONNECTION_REFUSED' })
    }
    t.equal(local.connections(), 0)
  })

  t.test('split: public direct, declared local through the tunnel, undeclared local denied', async (t) => {
    const local = await loopbackServer(t)
    const tunnel = fakeTunnel()
    const gw = await gateway(t, { mode: 'split', declaredHosts: [`localhost:${local.port}`], hostAliases: aliases, tunnel })
    t.equal((await proxyGet(gw, 'http://example.com/page2.html')).status, 200)
    t.match(gw.lastDecision('example.com', 80), { route: 'direct' })
    t.equal((await proxyGet(gw, `http://localhost:${local.port}/`)).status, 200)
    t.match(gw.lastDecision('localhost', local.port), { route: 'tunnel' })
    t.equal((await proxyGet(gw, `http://127.0.0.1:${local.port}/`)).status, 403)
    t.match(gw.lastDecision('127.0.0.1', local.port), { outcome: 'denied', reason: 'host_not_declared' })
    t.same(tunnel.dials, [`localhost:${local.port}`])
  })

  t.test('an upstream that refuses is recorded as ERR_CONNECTION_REFUSED', async (t) => {
    const gw = await gateway(t, { hostAliases: aliases })
    const r = await proxyGet(gw, 'http://example.com:81/')
    t.equal(r.status, 502)
    t.match(gw.lastDecision('example.com', 81), { outcome: 'failed', route: 'direct', netError: 'net::ERR_CONNECTION_REFUSED' })
  })
})

/**
 * An origin in its own namespace that closes every kept-alive connection as the next request
 * on it arrives (a reset, before any answer): what a request meets when it is sent on an idle
 * connection at the moment the origin's keep-alive timeout closes it. Each answer is the
 * number of the connection it came on.
 */
const CUTTING_ORIGIN = `
  const net = require('node:net')
  let connections = 0
  net.createServer((s) => {
    const n = ++connections
    let answered = 0, head = ''
    s.on('error', () => {})
    s.on('data', (d) => {
      head += d
      if (!head.includes('\\r\\n\\r\\n')) return
      head = ''
      if (answered++) return s.resetAndDestroy()
      s.write('HTTP/1.1 200 OK\\r\\nContent-Length: ' + String(n).length + '\\r\\nConnection: keep-alive\\r\\n\\r\\n' + n)
    })
  }).listen(80, process.env.LISTEN_IP, () => console.log('ready'))
`

t.test('a request cut by an origin closing its idle keep-alive connection is sent again on a new one, if it has no body (real sockets)', async (t) => {
  const space = await createNamespace(t)
  await waitForLine(space.spawn(process.execPath, ['-e', CUTTING_ORIGIN], { LISTEN_IP: space.ip }), 'ready', 15_000)
  const gw = await gateway(t, { hostAliases: { 'example.com': space.ip } })
  t.same(await proxyGet(gw, 'http://example.com/a').then((r) => [r.status, r.body]), [200, '1'], 'the first request opens a connection')
  t.same(await proxyGet(gw, 'http://example.com/b').then((r) => [r.status, r.body]), [200, '2'], 'the next, cut on the kept one, is answered on a new connection')
  t.match(gw.lastDecision('example.com', 80), { outcome: 'allowed' }, 'and is not recorded as failed')

  const post = await new Promise<number>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gw.port, method: 'POST', path: 'http://example.com/form', headers: { host: 'example.com' }, agent: false }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on('error', reject)
    req.end('name=value')
  })
  t.equal(post, 502, 'a request with a body is not sent twice: the page gets the failure')
  t.match(gw.lastDecision('example.com', 80), { outcome: 'failed', netError: 'net::ERR_CONNECTION_RESET' })
  t.same(await proxyGet(gw, 'http://example.com/c').then((r) => [r.status, r.body]), [200, '3'], 'the one after opens a new connection')
})
