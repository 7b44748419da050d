// The egress gateway: an in-process HTTP forward proxy on 127.0.0.1 for every Chromium
// request. It asks egress-policy.ts once per connection and connects to exactly the
// address it checked (no DNS rebinding), remembering the last decision per host so
// navigate can name the right typed error. With an upstream proxy, direct connections go
// through it after the same checks; tunnelled targets are unchanged.
import http from 'node:http'
import net from 'node:net'
import { networkInterfaces } from 'node:os'
import { lookup } from 'node:dns/promises'
import type { Duplex } from 'node:stream'
import { formatProxyUrl, ProxyReach } from '../contracts/proxy.ts'
import { CompiledPolicy, decide, decideProxy, type Decision, type EgressPolicy, type Resolver } from './egress-policy.ts'
import { dialThroughProxy, ProxyError, type UpstreamProxy } from './upstream-proxy.ts'

export type { EgressPolicy, TunnelDialer, EgressMode } from './egress-policy.ts'

export type EgressOutcome = 'allowed' | 'denied' | 'refused' | 'failed'

export interface EgressRecord {
  seq: number
  host: string
  port: number
  outcome: EgressOutcome
  route?: 'direct' | 'tunnel' | 'proxy'
  /** deny/refuse reason, e.g. deny_floor, host_not_declared, local_address, no_tunnel */
  reason?: string
  /** the session's upstream proxy could not be used (route proxy): one error to the caller */
  proxyFailed?: boolean
  /** why, value-free, for the pod's log and tests only: never in an answer */
  proxyDetail?: string
  /** Chromium-style error name for refused/failed connections, e.g. net::ERR_CONNECTION_REFUSED */
  netError?: string
  at: number
}

/** Header on every response the gateway itself synthesises (never on upstream responses). */
export const EGRESS_HEADER = 'x-nightjar-egress'

const MAX_RECORDS = 512
/** methods a request may be sent again with, when it was cut before any answer (onRequest) */
const REPLAYABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate',
  'te', 'trailer', 'transfer-encoding', 'upgrade',
])

/** Chromium-style name for a connect failure: socket errno codes, and the tunnel's
 * TunnelError codes (matched by value so browser-pod does not depend on tunnel/). */
export function netErrorFor(err: unknown): string {
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case 'ECONNREFUSED': case 'refused': case 'no_daemon': case 'closed': return 'net::ERR_CONNECTION_REFUSED'
    case 'timeout': return 'net::ERR_CONNECTION_TIMED_OUT'
    case 'unreachable': return 'net::ERR_ADDRESS_UNREACHABLE'
    case 'reset': return 'net::ERR_CONNECTION_RESET'
    case 'ENOTFOUND': case 'EAI_AGAIN': case 'EAI_NODATA': return 'net::ERR_NAME_NOT_RESOLVED'
    case 'ETIMEDOUT': return 'net::ERR_CONNECTION_TIMED_OUT'
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'net::ERR_ADDRESS_UNREACHABLE'
    case 'ECONNRESET': return 'net::ERR_CONNECTION_RESET'
    default: return 'net::ERR_CONNECTION_FAILED'
  }
}

/**
 * How long the gateway gives a session's proxy — its name's lookup, connecting, TLS and its
 * answer to CONNECT together — so that navigate answers within the documented 15 s: the
 * rest is Chromium's, the pod's and the api-server's time to report the failure.
 */
export const PROXY_DEADLINE_MS = 13_000

/** Every address of this machine's interfaces: a proxy there would be the pod (or, embedded, the api-server) itself. */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
}

export interface GatewayOptions {
  connectTimeoutMs?: number
  /** the one deadline of a dial through the session's proxy (default PROXY_DEADLINE_MS) */
  proxyDeadlineMs?: number
  /** where a proxy failure's detail is logged (default stderr); never a credential */
  log?: (line: string) => void
  /** this machine's addresses, refused as a proxy (default: its interfaces'); replaceable for tests */
  ownAddresses?: () => Iterable<string>
  /** DNS after hostAliases; replaceable for tests. Default: the OS resolver (dns.lookup). */
  dns?: Resolver
  /** extra CAs trusted for an https:// upstream proxy (tests); the system's otherwise */
  proxyCa?: string[]
  /** who may connect (loopback-peer.ts): embedded, only the pod's own uid; default anyone who reaches the port */
  admits?: (socket: net.Socket) => boolean
}

export class EgressGateway {
  private policy: CompiledPolicy | null = null
  private readonly server: http.Server
  private readonly records = new Map<string, EgressRecord>()
  private readonly sockets = new Set<net.Socket | Duplex>()
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  private readonly connectTimeoutMs: number
  private readonly proxyDeadlineMs: number
  private readonly dns: Resolver
  private readonly proxyCa?: string[]
  private readonly log: (line: string) => void
  private readonly ownAddresses: () => Iterable<string>
  private proxyReach: ProxyReach | null = null
  private upstreamProxy: UpstreamProxy | null = null
  private counter = 0

  constructor(opts: GatewayOptions = {}) {
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 15_000
    this.proxyDeadlineMs = opts.proxyDeadlineMs ?? PROXY_DEADLINE_MS
    this.proxyCa = opts.proxyCa
    this.log = opts.log ?? ((line) => process.stderr.write(line + '\n'))
    this.ownAddresses = opts.ownAddresses ?? interfaceAddresses
    this.dns = opts.dns ?? (async (host) => {
      const r = await lookup(host)
      return { address: r.address, family: r.family === 6 ? 6 : 4 }
    })
    // A request the gateway cannot handle costs that request, never the pod (an
    // unhandled rejection would end the process).
    this.server = http.createServer((req, res) => { this.onRequest(req, res).catch(() => res.destroy()) })
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      this.onConnect(req, socket, head).catch(() => socket.destroy())
    })
    // synchronous: a refused socket is gone before the HTTP parser reads a byte of it
    const admits = opts.admits
    this.server.on('connection', (s: net.Socket) => (admits && !admits(s) ? s.destroy() : this.track(s)))
    this.server.on('clientError', (_e, socket) => socket.destroy())
  }

  /** Binds 127.0.0.1:0. Until configure() every target is denied (not_configured). */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(0, '127.0.0.1', () => resolve())
    })
    return this.port
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port
  }

  get proxyServer(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Set once per session (launch-time declared hosts); throws on an invalid CIDR or alias. */
  configure(policy: EgressPolicy): void {
    this.policy = new CompiledPolicy(policy)
    this.proxyReach = new ProxyReach({ denyCidrs: policy.denyCidrs, ownAddresses: this.ownAddresses })
  }

  /**
   * The session's upstream proxy (after configure); its credentials stay in this object's
   * memory only, never in a record, a log line or an answer to Chromium.
   */
  setProxy(proxy: UpstreamProxy | null): void {
    this.upstreamProxy = proxy ? { ...proxy } : null
  }

  /** The proxy without its credentials, for health and tests. */
  get proxy(): { scheme: string; host: string; port: number; authenticated: boolean } | null {
    const p = this.upstreamProxy
    return p ? { scheme: p.scheme, host: p.host, port: p.port, authenticated: p.username !== undefined } : null
  }

  get mode(): string | undefined {
    return this.policy?.mode
  }

  /** Sequence number of the newest record; pair with recordsSince() around one navigation. */
  get seq(): number {
    return this.counter
  }

  lastDecision(host: string, port: number): EgressRecord | undefined {
    return this.records.get(key(normalizeHost(host), port))
  }

  recordsSince(seq: number): EgressRecord[] {
    return [...this.records.values()].filter((r) => r.seq > seq).sort((a, b) => a.seq - b.seq)
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    this.agent.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  // --- internals -----------------------------------------------------------------

  private track(s: net.Socket | Duplex): void {
    this.sockets.add(s)
    s.once('close', () => this.sockets.delete(s))
  }

  private record(host: string, port: number, outcome: EgressOutcome, extra: Partial<EgressRecord> = {}): EgressRecord {
    const k = key(host, port)
    const r: EgressRecord = { seq: ++this.counter, host, port, outcome, at: Date.now(), ...extra }
    this.records.delete(k) // re-insert keeps Map order = recency, so the oldest is evicted first
    this.records.set(k, r)
    if (this.records.size > MAX_RECORDS) this.records.delete(this.records.keys().next().value as string)
    return r
  }

  /** Runs the policy; a DNS failure becomes a 'failed' record like any connect error. */
  private async judge(host: string, port: number): Promise<Decision | { action: 'error'; err: unknown }> {
    try {
      return await decide(this.policy, host, port, this.dns)
    } catch (err) {
      return { action: 'error', err }
    }
  }

  /** Records a non-connecting decision; returns the HTTP status to answer with, or null when allowed. */
  private recordBlock(host: string, port: number, d: Decision | { action: 'error'; err: unknown }): number | null {
    if (d.action === 'deny') { this.record(host, port, 'denied', { reason: d.reason }); return 403 }
    if (d.action === 'refuse') {
      this.record(host, port, 'refused', { reason: d.reason, netError: 'net::ERR_CONNECTION_REFUSED' })
      return 502
    }
    if (d.action === 'error') { this.record(host, port, 'failed', { netError: netErrorFor(d.err) }); return 502 }
    return null
  }

  /** The daemon re-checks declared hosts; its "not declared" is a policy denial, not a failure. */
  private recordDialFailure(host: string, port: number, route: 'direct' | 'tunnel' | 'proxy', err: unknown): number {
    if (err instanceof ProxyError) {
      // one answer whatever the cause (upstream-proxy.ts ProxyError); the cause goes to the log
      const p = this.upstreamProxy
      if (p) this.log(`egress gateway: the session's proxy ${formatProxyUrl(p)} could not be used: ${err.detail}`)
      this.record(host, port, 'failed', { route, proxyFailed: true, proxyDetail: err.detail, netError: 'net::ERR_TUNNEL_CONNECTION_FAILED' })
      return 502
    }
    if ((err as { code?: unknown } | undefined)?.code === 'not_declared') {
      this.record(host, port, 'denied', { route, reason: 'host_not_declared' })
      return 403
    }
    this.record(host, port, 'failed', { route, netError: netErrorFor(err) })
    return 502
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let target: URL
    try {
      target = new URL(req.url ?? '')
    } catch {
      return synth(res, 400, 'bad request', 'not a proxy request')
    }
    if (target.protocol !== 'http:') return synth(res, 400, 'bad request', 'unsupported scheme')
    const host = normalizeHost(target.hostname)
    const port = Number(target.port || 80)
    const d = await this.judge(host, port)
    const blocked = this.recordBlock(host, port, d)
    if (blocked !== null) return synth(res, blocked, blocked === 403 ? 'denied' : 'refused', `${host}:${port}`)
    if (d.action !== 'direct' && d.action !== 'tunnel') return

    const headers: string[] = []
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (!HOP_BY_HOP.has(req.rawHeaders[i].toLowerCase())) headers.push(req.rawHeaders[i], req.rawHeaders[i + 1])
    }
    const options: http.RequestOptions = { method: req.method, path: target.pathname + target.search, headers, setHost: false }
    const route = d.action === 'direct' && this.upstreamProxy ? 'proxy' : d.action
    if (route === 'direct' && d.action === 'direct') {
      Object.assign(options, { host: d.address, port, family: d.family, agent: this.agent })
    } else {
      // a daemon stream, or a tunnel through the session's proxy (one per request: no keep-alive across the proxy)
      let stream: Duplex
      try {
        stream = d.action === 'direct' ? await this.dialProxy(d.address, port) : await this.policy!.tunnel!.dial(host, port)
      } catch (err) {
        const status = this.recordDialFailure(host, port, route, err)
        return synth(res, status, status === 403 ? 'denied' : 'refused', `${host}:${port}`)
      }
      this.track(stream)
      options.createConnection = () => stream as net.Socket
    }
    this.record(host, port, 'allowed', { route })

    // a request without a body that an origin's idle keep-alive close may cut (below) can be sent again
    const replayable = REPLAYABLE_METHODS.has(req.method ?? '') && !req.headers['transfer-encoding'] && (req.headers['content-length'] ?? '0') === '0'
    let upstream: http.ClientRequest
    const send = (mayRetry: boolean): void => {
      upstream = http.request(options, (up) => {
        const out: string[] = []
        for (let i = 0; i < up.rawHeaders.length; i += 2) {
          const name = up.rawHeaders[i].toLowerCase()
          // an origin cannot pose as the gateway: its copy of our header is dropped
          if (!HOP_BY_HOP.has(name) && name !== EGRESS_HEADER) out.push(up.rawHeaders[i], up.rawHeaders[i + 1])
        }
        res.writeHead(up.statusCode ?? 502, up.statusMessage, out)
        up.pipe(res)
        up.on('error', () => res.destroy())
      })
      const sent = upstream
      sent.on('socket', (s) => {
        // Bound only the connect; a slow response body is the page's business.
        if (!(s instanceof net.Socket) || !s.connecting) return
        const timer = setTimeout(() => sent.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), this.connectTimeoutMs)
        s.once('connect', () => clearTimeout(timer))
        s.once('close', () => clearTimeout(timer))
      })
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (res.headersSent) return void res.destroy()
        // An origin closes an idle kept-alive connection when its own timeout runs out (Node's
        // 5 s, nginx's 75 s); a request sent on it in that moment meets a reset before any
        // answer, and never reached the origin. Chromium sends such a request again on a new
        // connection rather than fail the page; so does the gateway, once, for one without a
        // body (nothing to replay but the line and the headers).
        if (mayRetry && sent.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) return send(false)
        this.record(host, port, 'failed', { route, netError: netErrorFor(err) })
        synth(res, 502, 'failed', `${host}:${port}`)
      })
      if (replayable) sent.end()
      else req.pipe(sent)
    }
    res.on('close', () => { if (!res.writableFinished) upstream.destroy() })
    send(replayable)
  }

  private async onConnect(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy())
    const authority = parseAuthority(req.url ?? '')
    // eslint-disable-next-line no-restricted-syntax -- the proxy's answer to Chromium, not a service error; callers see reachabilityDenied / navigationFailed
    if (!authority) return void client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
    const { host, port } = authority
    const d = await this.judge(host, port)
    const blocked = this.recordBlock(host, port, d)
    if (blocked !== null) return refuseTunnel(client, blocked)
    if (d.action !== 'direct' && d.action !== 'tunnel') return

    const route = d.action === 'direct' && this.upstreamProxy ? 'proxy' : d.action
    let upstream: Duplex
    try {
      upstream = d.action === 'tunnel'
        ? await this.policy!.tunnel!.dial(host, port)
        : route === 'proxy' ? await this.dialProxy(d.address, port) : await this.connectDirect(d.address, port)
    } catch (err) {
      return refuseTunnel(client, this.recordDialFailure(host, port, route, err))
    }
    this.track(upstream)
    this.record(host, port, 'allowed', { route })
    if (client.destroyed) return void upstream.destroy()
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (head.length) upstream.write(head)
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    upstream.pipe(client)
    client.pipe(upstream)
  }

  /**
   * Through the session's proxy to the address the policy checked. The proxy's own address
   * is judged first by the platform's rule (decideProxy), then dialled; the lookup of its
   * name and the dial share one deadline. The credentials go nowhere the rule refused.
   */
  private async dialProxy(address: string, port: number): Promise<net.Socket> {
    const proxy = this.upstreamProxy!
    const deadline = Date.now() + this.proxyDeadlineMs
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new ProxyError('timed out resolving the proxy')), this.proxyDeadlineMs)
    })
    let judged
    try {
      judged = await Promise.race([decideProxy(this.policy!, this.proxyReach!, proxy, this.dns), expired])
    } catch (err) {
      throw err instanceof ProxyError ? err : new ProxyError(errnoName(err))
    } finally {
      clearTimeout(timer)
    }
    if (judged.action === 'deny') throw new ProxyError('refused by the platform: the proxy\'s address is internal or denied')
    return dialThroughProxy({ proxy, proxyAddress: judged.address, address, port, deadline, ca: this.proxyCa })
  }

  private connectDirect(address: string, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: address, port })
      s.setTimeout(this.connectTimeoutMs, () => s.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })))
      s.once('connect', () => { s.setTimeout(0); s.removeListener('error', reject); resolve(s) })
      s.once('error', reject)
    })
  }
}

function errnoName(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && /^[A-Z_0-9]{2,40}$/.test(code) ? code : 'DNS lookup failed'
}

function key(host: string, port: number): string {
  return `${host}|${port}`
}

function normalizeHost(h: string): string {
  return h.toLowerCase().replace(/^\[|\]$/g, '')
}

/** `host:port` or `[v6]:port` from a CONNECT request line; the port is required. */
export function parseAuthority(a: string): { host: string; port: number } | null {
  const m = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(a) ?? /^([^:\[\]\s/]+):(\d{1,5})$/.exec(a)
  if (!m) return null
  const port = Number(m[2])
  if (port < 1 || port > 65535) return null
  return { host: normalizeHost(m[1]), port }
}

function synth(res: http.ServerResponse, status: number, kind: string, what: string): void {
  if (res.headersSent) return void res.destroy()
  const body = `nightjar egress gateway: ${what} ${kind}\n`
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    [EGRESS_HEADER]: kind,
  })
  res.end(body)
}

function refuseTunnel(client: Duplex, status: number): void {
  const text = status === 403 ? 'Forbidden' : 'Bad Gateway'
  client.end(`HTTP/1.1 ${status} ${text}\r\n${EGRESS_HEADER}: ${status === 403 ? 'denied' : 'refused'}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
}
