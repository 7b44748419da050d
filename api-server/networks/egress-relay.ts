// The browser pod's way into the tunnel. A pod's egress gateway opens one
// WebSocket per local connection to /ws/egress?session=…&host=…&port=…, with its
// per-session node token as Bearer. The relay checks the token against the node
// directory, the target against the session's launch-time declared hosts, then
// dials through a daemon of the session's network and pipes bytes both ways.
//
// Outcome on the socket: a text frame "open" then raw bytes; or a close with
// 4403 not_declared, 4404 no network, 4502 refused/unreachable/error,
// 4503 no daemon online, 4504 timeout.
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, createWebSocketStream, type WebSocket } from 'ws'
import type { SessionPlane } from '../sessions/plane.ts'
import type { TunnelBroker } from '../control/broker.ts'
import { hostAllowed } from '../../contracts/hosts.ts'
import { safeEqual } from '../../contracts/ids.ts'
import { isTunnelError } from '../../tunnel/errors.ts'
import { upgradeErrors, upgradeRefusal } from '../../contracts/errors.ts'

export const EGRESS_PATH = '/ws/egress'

export const EGRESS_CLOSE = {
  not_declared: 4403,
  no_network: 4404,
  refused: 4502,
  unreachable: 4502,
  error: 4502,
  reset: 4502,
  closed: 4502,
  no_daemon: 4503,
  timeout: 4504,
} as const

export class EgressRelay {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })

  constructor(private readonly deps: { plane: SessionPlane; broker: TunnelBroker }) {}

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname !== EGRESS_PATH) return false
    void this.admit(req, socket, head, url)
    return true
  }

  private async admit(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) {
    const sessionId = url.searchParams.get('session') ?? ''
    const host = (url.searchParams.get('host') ?? '').toLowerCase()
    const port = Number(url.searchParams.get('port'))
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
    // a lookup that fails reads as no pod: the pod gets the same 401 and its gateway retries
    const access = sessionId ? await this.deps.plane.nodes.lookup(sessionId).catch(() => undefined) : undefined
    if (!access || !token || !safeEqual(access.token, token) || !host || !Number.isInteger(port) || port < 1 || port > 65535) {
      socket.end(upgradeRefusal(upgradeErrors.egressUnauthorized()))
      return
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      // the session lookup failing (the cluster API, say) closes this one stream with an error code: never an unhandled rejection
      this.relay(ws, sessionId, host, port).catch(() => ws.close(EGRESS_CLOSE.error, 'error'))
    })
  }

  private async relay(ws: WebSocket, sessionId: string, host: string, port: number) {
    const session = await this.deps.plane.sessions.get(sessionId)
    const networkId = session?.spec.networkRef?.name
    if (!session || !networkId) return ws.close(EGRESS_CLOSE.no_network, 'no network')
    // the launch-time list, exactly as the pod was configured with it
    if (!hostAllowed(host, port, session.spec.declaredHosts)) return ws.close(EGRESS_CLOSE.not_declared, 'not_declared')
    let stream
    try {
      stream = await this.deps.broker.dial(networkId, host, port)
    } catch (e) {
      const code = isTunnelError(e) ? e.code : 'error'
      return ws.close(EGRESS_CLOSE[code as keyof typeof EGRESS_CLOSE] ?? 4502, code)
    }
    if (ws.readyState !== ws.OPEN) return stream.destroy()
    ws.send('open')
    const local = createWebSocketStream(ws)
    local.on('error', () => stream.destroy())
    stream.on('error', () => local.destroy())
    local.pipe(stream)
    stream.pipe(local)
  }

  close(): void {
    for (const c of this.wss.clients) c.terminate()
    this.wss.close()
  }
}
