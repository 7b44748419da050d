// fakeBrowsers mode of the test node (not a test file): browser pods without Chromium, for
// benchmarks of a thousand sessions. Such a pod gets no process and no network namespace:
// its pod IP is a /32 on the cluster bridge and one HTTP server in the node process answers
// the browser pod's node API on it, telling pods apart by the address a connection came in
// on. Like test/operator/kube/kubelet.ts: GET /healthz → {ok, configured}; every other route needs
// `Authorization: Bearer <token>` (the token the kubelet resolved from the container's
// NIGHTJAR_POD_TOKEN secretKeyRef, so a passing configure proves Secret → env → node);
// POST /v1/configure → 200 {ok, sessionId} once, 409 after; anything else 404.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import type { ClusterNetwork } from '../../devcluster/network.ts'
import { addBridgeAddress, removeBridgeAddress } from './node-services.ts'

/** what a test may look at (the token stays inside) */
export interface FakeBrowser {
  ip: string
  port: number
  /** the configure body, once configured */
  configured?: Record<string, unknown>
  configureCalls: number
}

interface Stub extends FakeBrowser {
  token: string
  listener: Server
  sockets: Set<Socket>
}

export class FakeBrowsers {
  private readonly byIp = new Map<string, Stub>()
  private readonly http = createHttpServer((req, res) => void this.handle(req, res))

  private readonly net: ClusterNetwork
  constructor(net: ClusterNetwork) {
    this.net = net
  }

  get(ip: string): FakeBrowser | undefined {
    const b = this.byIp.get(ip)
    return b && { ip: b.ip, port: b.port, configured: b.configured, configureCalls: b.configureCalls }
  }

  async add(ip: string, port: number, token: string): Promise<void> {
    await addBridgeAddress(this.net, ip)
    const sockets = new Set<Socket>()
    const listener = createServer((s) => {
      sockets.add(s)
      s.once('close', () => sockets.delete(s))
      this.http.emit('connection', s)
    })
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject)
      listener.listen(port, ip, () => { listener.off('error', reject); resolve() })
    })
    this.byIp.set(ip, { ip, port, token, configureCalls: 0, listener, sockets })
  }

  async remove(ip: string): Promise<void> {
    const b = this.byIp.get(ip)
    if (!b) return
    this.byIp.delete(ip)
    for (const s of b.sockets) s.destroy()
    await new Promise<void>((r) => b.listener.close(() => r()))
    await removeBridgeAddress(this.net, ip)
  }

  async stop(): Promise<void> {
    await Promise.all([...this.byIp.keys()].map((ip) => this.remove(ip)))
    this.http.closeAllConnections()
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const b = this.byIp.get(req.socket.localAddress?.replace(/^::ffff:/, '') ?? '')
    if (!b) return send(503, { error: { code: 'unavailable', message: 'pod is gone' } })
    const path = (req.url ?? '').split('?')[0]
    if (path === '/healthz' && req.method === 'GET') return send(200, { ok: true, configured: !!b.configured })
    if (req.headers.authorization !== `Bearer ${b.token}`) return send(401, { error: { code: 'unauthorized', message: 'bad token' } })
    if (path === '/v1/configure' && req.method === 'POST') {
      b.configureCalls++
      if (b.configured) return send(409, { error: { code: 'conflict', message: 'session already configured', reason: 'already_configured' } })
      let body: Record<string, unknown>
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch { return send(400, { error: { code: 'bad_request', message: 'invalid JSON' } }) }
      b.configured = body
      return send(200, { ok: true, sessionId: body.sessionId })
    }
    send(404, { error: { code: 'not_found', message: 'no route' } })
  }
}
