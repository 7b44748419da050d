// The replica-to-replica channel: a daemon's WebSocket lives on one replica, a pod's egress
// dial may land on any, so that replica forwards the dial to the owner — one WebSocket per
// stream to /internal/tunnel/dial, authenticated with the replicas' shared secret, speaking
// /ws/egress's own wire, so the pod sees what a dial on the owner would give it and
// backpressure on both hops is the flow control. A forwarded dial is never forwarded again.
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import { safeEqual } from '../../contracts/ids.ts'
import { upgradeErrors, upgradeRefusal } from '../../contracts/errors.ts'
import { isTunnelError } from '../../tunnel/errors.ts'
import { acceptDial, dialWebSocket, refuseDial } from '../../tunnel/ws-dial.ts'
import type { TunnelBroker } from '../tunnel-broker/broker.ts'
import type { PeerReplica } from './registry.ts'

export const REPLICA_DIAL_PATH = '/internal/tunnel/dial'

/** The owner's side: dials forwarded by other replicas, opened through this replica's broker. */
export class ReplicaDialServer {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })

  private readonly deps: { secret?: string; broker: Pick<TunnelBroker, 'dial'> }
  constructor(deps: { secret?: string; broker: Pick<TunnelBroker, 'dial'> }) {
    this.deps = deps
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname !== REPLICA_DIAL_PATH) return false
    socket.on('error', () => {}) // a peer vanishing mid-handshake must not crash us
    const presented = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
    const secret = this.deps.secret
    const network = url.searchParams.get('network') ?? ''
    const host = url.searchParams.get('host') ?? ''
    const port = Number(url.searchParams.get('port'))
    if (!secret || !presented || !safeEqual(presented, secret) || !network || !host) {
      socket.end(upgradeRefusal(upgradeErrors.replicaUnauthorized()))
      return true
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => void this.open(ws, network, host, port))
    return true
  }

  private async open(ws: WebSocket, network: string, host: string, port: number): Promise<void> {
    try {
      acceptDial(ws, await this.deps.broker.dial(network, host, port))
    } catch (e) {
      refuseDial(ws, isTunnelError(e) ? e.code : 'error')
    }
  }

  close(): void {
    for (const c of this.wss.clients) c.terminate()
    this.wss.close()
  }
}

/** The forwarding side: open a stream to host:port through the daemon held by `owner`. */
export function forwardDial(owner: PeerReplica, secret: string, dial: { networkId: string; host: string; port: number; timeoutMs: number }): Promise<Duplex> {
  const url = new URL(REPLICA_DIAL_PATH, owner.address.replace(/^http/, 'ws'))
  url.searchParams.set('network', dial.networkId)
  url.searchParams.set('host', dial.host)
  url.searchParams.set('port', String(dial.port))
  return dialWebSocket(url, {
    headers: { authorization: `Bearer ${secret}` },
    timeoutMs: dial.timeoutMs,
    // replica to replica inside the cluster: no cleartext intermediary to protect (RFC 6455
    // §10.3), and JavaScript masking costs most of the throughput — the daemon does the same
    // on loopback and under TLS
    ws: { generateMask: (mask: Buffer) => void mask.fill(0) },
  })
}
