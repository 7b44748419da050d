// The browser pod's way into the tunnel: the pod's egress gateway opens one WebSocket per
// local connection to /ws/egress with its pod token; the relay checks the token and the
// target against the session's launch-time declared hosts, then dials through a daemon
// (forwarded to the replica holding one, if not this one) and pipes bytes both ways.
// Outcome on the socket: "open" then raw bytes, or a 44xx/45xx close (tunnel/ws-dial.ts).
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import type { SessionPlane } from '../sessions/plane.ts'
import type { TunnelBroker } from '../tunnel-broker/broker.ts'
import { hostAllowed } from '../../contracts/hosts.ts'
import { safeEqual } from '../../contracts/ids.ts'
import { isTunnelError } from '../../tunnel/errors.ts'
import { acceptDial, DialError, refuseDial } from '../../tunnel/ws-dial.ts'
import { upgradeErrors, upgradeRefusal } from '../../contracts/errors.ts'
import { forwardDial } from '../replicas/channel.ts'
import type { PeerReplica } from '../replicas/registry.ts'

export const EGRESS_PATH = '/ws/egress'

/** Forwarding to the replica that holds a network's daemon (absent: one replica, never forwards). */
export interface DialForwarding {
  /** the live replica holding the network's newest online daemon, when it is not this one */
  ownerOf(networkId: string): Promise<PeerReplica | undefined>
  secret: string
  timeoutMs?: number
}

export class EgressRelay {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })

  private readonly deps: { plane: SessionPlane; broker: Pick<TunnelBroker, 'dial'>; forwarding?: DialForwarding }
  constructor(deps: { plane: SessionPlane; broker: Pick<TunnelBroker, 'dial'>; forwarding?: DialForwarding }) {
    this.deps = deps
  }

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
    const access = sessionId ? await this.deps.plane.pods.lookup(sessionId).catch(() => undefined) : undefined
    if (!access || !token || !safeEqual(access.token, token) || !host || !Number.isInteger(port) || port < 1 || port > 65535) {
      socket.end(upgradeRefusal(upgradeErrors.egressUnauthorized()))
      return
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      // the session lookup failing (the cluster API, say) closes this one stream with an error code: never an unhandled rejection
      this.relay(ws, sessionId, host, port).catch(() => refuseDial(ws, 'error'))
    })
  }

  private async relay(ws: WebSocket, sessionId: string, host: string, port: number) {
    const session = await this.deps.plane.sessions.get(sessionId)
    const networkId = session?.spec.networkRef?.name
    if (!session || !networkId) return refuseDial(ws, 'no_network')
    // the launch-time list, exactly as the pod was configured with it
    if (!hostAllowed(host, port, session.spec.declaredHosts)) return refuseDial(ws, 'not_declared')
    let stream
    try {
      stream = await this.dial(networkId, host, port)
    } catch (e) {
      return refuseDial(ws, isTunnelError(e) || e instanceof DialError ? e.code : 'error')
    }
    acceptDial(ws, stream)
  }

  /** through a daemon held here; else through the replica holding one; else no_daemon */
  private async dial(networkId: string, host: string, port: number) {
    try {
      return await this.deps.broker.dial(networkId, host, port)
    } catch (e) {
      const fwd = this.deps.forwarding
      if (!fwd || !isTunnelError(e, 'no_daemon')) throw e
      const owner = await fwd.ownerOf(networkId)
      if (!owner) throw e
      return forwardDial(owner, fwd.secret, { networkId, host, port, timeoutMs: fwd.timeoutMs ?? 15_000 })
    }
  }

  close(): void {
    for (const c of this.wss.clients) c.terminate()
    this.wss.close()
  }
}
