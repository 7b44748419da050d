// Server side of local reach: daemons join a network over /ws/control and the broker opens
// tunnel streams through them. It holds no database handle: everything durable goes
// through injected hooks. The join token travels only in the upgrade's Authorization
// header (never the URL, so never an access log). Design: docs/TUNNEL.md#join-and-auth-contract
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import { newId } from '../../contracts/ids.ts'
import { MAX_FRAME, type HelloInfo } from '../../tunnel/frames.ts'
import { TunnelSession } from '../../tunnel/session.ts'
import { TunnelError } from '../../tunnel/errors.ts'
import { upgradeErrors, upgradeRefusal, type ErrorReply } from '../../contracts/errors.ts'
import type { TunnelStream } from '../../tunnel/stream.ts'
import { boundedLabel, tunnelStreams } from '../metrics/product.ts'

export const TUNNEL_PATH = '/ws/control'

export interface NetworkAuth {
  networkId: string
  orgId: string
}

export interface DaemonRegistration {
  networkId: string
  orgId: string
  daemonId: string
  host: string
  version: string
  connectedSince: string // ISO timestamp
}

export interface DaemonDisconnect extends DaemonRegistration {
  reason: string
}

/** A daemon entry as the spec's daemons listing shows it. */
export interface DaemonEntry {
  id: string
  host: string
  version: string
  connectedSince: string
  reachable: boolean
}

/**
 * Throttles join attempts per peer (limits/ builds it from the configuration). check()
 * runs first, before any token lookup: a refused peer gets 429 with Retry-After, so a
 * correct token from a throttled address is refused too until the window ends (the
 * daemon retries with backoff). rejected() counts each join refused as unauthorized.
 */
export type JoinVerdict = { allowed: true } | { allowed: false; retryAfterSecs: number }

export interface JoinGate {
  /** before any token lookup: may this address try at all? */
  check(peerAddress: string): Promise<JoinVerdict>
  /**
   * A wrong token was presented: count it for the address and for the network. A network
   * over its limit answers wrong tokens with 429 instead of 401 — a correct token is never
   * refused for its network's sake (that would let anyone lock a daemon out).
   */
  rejected(peerAddress: string, network: string): Promise<JoinVerdict>
}

export interface BrokerOptions {
  /** Checks the join token for the network named in ?network=. null → 401. Never log the token. */
  authenticate(networkNameOrSlug: string, token: string): Promise<NetworkAuth | null>
  /** Awaited before WELCOME: when the daemon prints "registered", the registry row exists. */
  onRegister?(reg: DaemonRegistration): void | Promise<void>
  onDisconnect?(d: DaemonDisconnect): void | Promise<void>
  /** Declared hosts pushed at registration (source of truth, e.g. the networks table). */
  loadDeclaredHosts?(networkId: string): string[] | Promise<string[]>
  log?(level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>): void
  heartbeatMs?: number // PING interval (default 10 s)
  heartbeatTimeoutMs?: number // silence after which a daemon is dead (default 3 × interval)
  helloTimeoutMs?: number // time allowed between upgrade and HELLO (default 5 s)
  dialTimeoutMs?: number // time allowed for OPEN_OK (default 10 s)
  window?: number // per-stream receive window (default 256 KiB)
  joinGate?: JoinGate
  /** the client address an upgrade comes from (through trusted proxies); the TCP peer by default */
  clientAddress?(req: IncomingMessage): string
}

interface Daemon {
  reg: DaemonRegistration
  session: TunnelSession
  /** onRegister was queued: only then does a disconnect get reported */
  announced: boolean
  /** WELCOME sent: the daemon may be listed and dialled */
  ready: boolean
}

const key = (networkId: string, daemonId: string) => `${networkId}\u0000${daemonId}`

export class TunnelBroker {
  private readonly opts: BrokerOptions
  private readonly wss: WebSocketServer
  private readonly daemons = new Map<string, Daemon>() // networkId\0daemonId → daemon
  private readonly declared = new Map<string, string[]>()
  private readonly hookChains = new Map<string, Promise<void>>()
  private readonly pushSeq = new Map<string, number>() // per network: pushes so far
  private readonly heartbeatMs: number
  private readonly heartbeatTimeoutMs: number
  private closed = false
  /** every tunnel connection (hello or not), and the bytes of those that closed (metrics) */
  private readonly connections = new Set<TunnelSession>()
  private readonly closedBytes = { in: 0, out: 0 }
  private closing: Promise<void> | undefined
  private readonly joinGate?: JoinGate

  constructor(opts: BrokerOptions) {
    this.opts = opts
    this.joinGate = opts.joinGate
    this.heartbeatMs = opts.heartbeatMs ?? 10_000
    this.heartbeatTimeoutMs = opts.heartbeatTimeoutMs ?? this.heartbeatMs * 3
    // noServer: the api-server's http server hands us its 'upgrade' events.
    // No compression: tunnel bytes are mostly already compressed or tiny, and
    // compression of attacker-influenced data next to secrets invites oracles.
    this.wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_FRAME })
  }

  /**
   * Handle an http 'upgrade'. Returns false when the path is not /ws/control, so the
   * caller may route the socket elsewhere (or destroy it).
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname !== TUNNEL_PATH) return false
    socket.on('error', () => {}) // a peer vanishing mid-handshake must not crash us
    void this.admit(req, socket, head, url.searchParams.get('network') ?? '')
    return true
  }

  private async admit(req: IncomingMessage, socket: Duplex, head: Buffer, network: string): Promise<void> {
    if (this.closed) return refuseUpgrade(socket, upgradeErrors.tunnelUnavailable())
    const peer = this.opts.clientAddress?.(req) ?? req.socket.remoteAddress ?? ''
    const gate = this.joinGate
    if (gate) {
      let verdict: Awaited<ReturnType<JoinGate['check']>> = { allowed: true }
      try {
        verdict = await gate.check(peer)
      } catch (e) {
        // the throttle's store failing must not take local reach down: fail open, loudly
        this.log('warn', 'daemon join: throttle unavailable', { error: (e as Error).message })
      }
      if (!verdict.allowed) {
        this.log('info', 'daemon join refused: too many failed joins from this address', { network: network.slice(0, 200) })
        return refuseUpgrade(socket, upgradeErrors.joinThrottled(verdict.retryAfterSecs))
      }
    }
    if (!network || network.length > 200) return refuseUpgrade(socket, upgradeErrors.joinNetworkMissing())
    const m = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '')
    const token = m?.[1]
    let auth: NetworkAuth | null = null
    if (token && token.startsWith('njt_')) {
      try {
        auth = await this.opts.authenticate(network, token)
      } catch (e) {
        this.log('warn', 'daemon join: authenticate failed', { error: (e as Error).message })
        return refuseUpgrade(socket, upgradeErrors.tunnelUnavailable())
      }
    }
    if (!auth) {
      // counting a failure must never turn a refusal into an admission: if the limit store
      // fails, the 401 goes out (at worst one failure is not counted)
      let verdict: JoinVerdict = { allowed: true }
      if (gate) verdict = await gate.rejected(peer, network).catch(() => verdict)
      if (!verdict.allowed) {
        this.log('info', 'daemon join refused: too many failed joins for this network', { network })
        return refuseUpgrade(socket, upgradeErrors.joinThrottled(verdict.retryAfterSecs))
      }
      this.log('info', 'daemon join rejected: unauthorized', { network })
      return refuseUpgrade(socket, upgradeErrors.joinUnauthorized())
    }
    if (socket.destroyed || this.closed) {
      socket.destroy()
      return
    }
    const a = auth
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, a))
  }

  private attach(ws: WebSocket, auth: NetworkAuth): void {
    const session = new TunnelSession(ws, { role: 'broker', window: this.opts.window, openTimeoutMs: this.opts.dialTimeoutMs })
    this.connections.add(session)
    const helloTimer = setTimeout(() => session.close(1008, 'no HELLO'), this.opts.helloTimeoutMs ?? 5000)
    const slot: { daemon: Daemon | null } = { daemon: null }
    session.once('hello', (hello) => {
      clearTimeout(helloTimer)
      void this.register(session, auth, hello, slot)
    })
    session.on('close', (err) => {
      clearTimeout(helloTimer)
      this.connections.delete(session)
      this.closedBytes.in += session.bytesIn
      this.closedBytes.out += session.bytesOut
      if (err && err.name === 'ProtocolError') this.log('warn', 'daemon dropped: ' + err.message, { networkId: auth.networkId })
      const d = slot.daemon
      if (d) this.unlist(d, err?.message ?? 'closed')
    })
  }

  /** Remove a daemon from the registry once (a same-id reconnect may have replaced it already). */
  private unlist(d: Daemon, reason: string): void {
    const k = key(d.reg.networkId, d.reg.daemonId)
    if (this.daemons.get(k) !== d) return
    this.daemons.delete(k)
    if (d.announced) void this.chain(k, () => this.opts.onDisconnect?.({ ...d.reg, reason })) // chain logs a failed hook
  }

  private async register(session: TunnelSession, auth: NetworkAuth, hello: HelloInfo, slot: { daemon: Daemon | null }): Promise<void> {
    const reg: DaemonRegistration = {
      networkId: auth.networkId,
      orgId: auth.orgId,
      daemonId: hello.daemonId ?? newId('ndmn_'),
      host: hello.host || 'unknown',
      version: hello.version,
      connectedSince: new Date().toISOString(),
    }
    const k = key(reg.networkId, reg.daemonId)
    const daemon: Daemon = { reg, session, announced: false, ready: false }
    slot.daemon = daemon
    // Same id reconnecting while the old socket is not yet known dead: the new one wins.
    const old = this.daemons.get(k)
    this.daemons.set(k, daemon)
    if (old) {
      if (old.announced) void this.chain(k, () => this.opts.onDisconnect?.({ ...old.reg, reason: 'replaced by a new connection' })) // chain logs a failed hook
      old.session.close(4000, 'replaced by a new connection')
    }
    try {
      if (this.opts.loadDeclaredHosts) {
        // a push that lands while we load is newer than what we loaded: keep the push
        const seq = this.pushSeq.get(reg.networkId) ?? 0
        const loaded = await this.opts.loadDeclaredHosts(reg.networkId)
        if (seq === (this.pushSeq.get(reg.networkId) ?? 0)) this.declared.set(reg.networkId, [...loaded])
      }
      // Gone already (closed, or replaced by a same-id reconnect): no onRegister at all, so
      // the hooks never see register after disconnect.
      if (this.daemons.get(k) !== daemon) return
      daemon.announced = true
      await this.chain(k, () => this.opts.onRegister?.(reg))
      if (!session.isOpen) return // the close handler has queued onDisconnect after onRegister
      session.sendWelcome({ daemonId: reg.daemonId, heartbeatMs: this.heartbeatMs })
      // read the list only now: a push during onRegister skipped this not-yet-ready daemon
      session.sendDeclaredHosts(this.declared.get(reg.networkId) ?? [])
      session.startHeartbeat(this.heartbeatMs, this.heartbeatTimeoutMs, true)
      daemon.ready = true
      this.log('info', 'daemon registered', { networkId: reg.networkId, daemonId: reg.daemonId, host: reg.host })
    } catch (e) {
      this.log('warn', 'daemon registration failed: ' + (e as Error).message, { networkId: reg.networkId })
      this.unlist(daemon, 'registration failed')
      session.close(1011, 'registration failed')
    }
  }

  /** Hooks for one daemon id run in order, so "disconnect old" never lands after "register new". */
  private chain(k: string, fn: () => void | Promise<void>): Promise<void> {
    const prev = this.hookChains.get(k) ?? Promise.resolve()
    const run = prev.then(fn)
    const settled = run.catch((e) => this.log('warn', 'daemon hook failed: ' + (e as Error).message))
    this.hookChains.set(k, settled)
    void settled.then(() => {
      if (this.hookChains.get(k) === settled) this.hookChains.delete(k)
    })
    return run
  }

  /** Online daemons of a network, newest first. */
  listDaemons(networkId: string): DaemonEntry[] {
    const now = Date.now()
    return this.online(networkId).map(({ reg, session }) => ({
      id: reg.daemonId,
      host: reg.host,
      version: reg.version,
      connectedSince: reg.connectedSince,
      reachable: session.isOpen && now - session.lastSeen <= this.heartbeatMs * 2,
    }))
  }

  private online(networkId: string): Daemon[] {
    return [...this.daemons.values()]
      .filter((d) => d.reg.networkId === networkId && d.ready && d.session.isOpen)
      .sort((a, b) => b.reg.connectedSince.localeCompare(a.reg.connectedSince))
  }

  /** Networks with at least one daemon connected here. */
  networksHeld(): string[] {
    return [...new Set([...this.daemons.values()].map((d) => d.reg.networkId))]
  }

  /** This replica's tunnel counters (metrics): bytes both ways since start, open streams, daemons. */
  totals(): { bytesIn: number; bytesOut: number; streamsOpen: number; daemons: number } {
    let bytesIn = this.closedBytes.in, bytesOut = this.closedBytes.out, streamsOpen = 0
    for (const c of this.connections) {
      bytesIn += c.bytesIn
      bytesOut += c.bytesOut
      streamsOpen += c.stats().streams
    }
    return { bytesIn, bytesOut, streamsOpen, daemons: this.daemons.size }
  }

  /** Per-daemon tunnel counters (metrics, tests): open streams and bytes queued on the socket. */
  sessionStats(networkId: string): Array<{ daemonId: string; streams: number; pendingOpens: number; bufferedOut: number }> {
    return this.online(networkId).map((d) => ({ daemonId: d.reg.daemonId, ...d.session.stats() }))
  }

  /** Replace the network's declared-host list on every daemon of the network (they re-check it). */
  pushDeclaredHosts(networkId: string, hosts: readonly string[]): void {
    const list = [...hosts]
    this.pushSeq.set(networkId, (this.pushSeq.get(networkId) ?? 0) + 1)
    this.declared.set(networkId, list)
    for (const d of this.online(networkId)) d.session.sendDeclaredHosts(list)
  }

  /**
   * Open a TCP stream to host:port as seen from the daemon's machine. Uses the most
   * recently connected daemon of the network (a restarted daemon takes over at once).
   * Rejects with TunnelError: no_daemon, refused, timeout, not_declared, unreachable, error.
   */
  async dial(networkId: string, host: string, port: number, opts: { timeoutMs?: number } = {}): Promise<TunnelStream> {
    const h = host.replace(/^\[(.*)\]$/, '$1')
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new TunnelError('error', 'bad port')
    if (!/^[\x21-\x7e]{1,255}$/.test(h)) throw new TunnelError('error', 'bad host')
    const d = this.online(networkId)[0]
    if (!d) {
      tunnelStreams.inc({ outcome: 'no_daemon' })
      throw new TunnelError('no_daemon')
    }
    try {
      const stream = await d.session.open(h, port, opts)
      tunnelStreams.inc({ outcome: 'opened' })
      return stream
    } catch (e) {
      // the TunnelError's code (refused, timeout, not_declared, unreachable …): a fixed word
      tunnelStreams.inc({ outcome: boundedLabel(e instanceof TunnelError ? e.code : 'error') })
      throw e
    }
  }

  /** Close every daemon of a network (token rotated): they must rejoin, meeting `authenticate` again. */
  disconnectNetwork(networkId: string, reason = 'network access revoked'): void {
    for (const d of [...this.daemons.values()]) if (d.reg.networkId === networkId) d.session.close(4001, reason)
  }

  /** Network deleted: disconnect its daemons and drop what the broker remembers of it. */
  forgetNetwork(networkId: string): void {
    this.disconnectNetwork(networkId, 'network deleted')
    this.declared.delete(networkId)
    this.pushSeq.delete(networkId)
  }

  /** Stop accepting daemons and close every connection. */
  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true
      for (const d of [...this.daemons.values()]) d.session.close(1001, 'server shutting down')
      for (const ws of this.wss.clients) ws.terminate()
      await Promise.allSettled([...this.hookChains.values()])
      await new Promise<void>((r) => this.wss.close(() => r()))
    })()
    return this.closing
  }

  private log(level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>): void {
    this.opts.log?.(level, msg, fields)
  }
}

/** A plain HTTP refusal before any WebSocket exists (the catalogue's upgrade errors). */
function refuseUpgrade(socket: Duplex, e: ErrorReply): void {
  if (socket.destroyed) return
  socket.end(upgradeRefusal(e))
}
