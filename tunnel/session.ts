// One tunnel connection: a WebSocket carrying control frames and multiplexed streams.
// The same class runs on both ends; `role` decides which frames it may receive
// (the broker opens streams, the daemon accepts them). See frames.ts for the wire rules.
import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import {
  DEFAULT_WINDOW,
  FrameType,
  MAX_AUTO_WINDOW,
  ProtocolError,
  decodeFrame,
  encodeData,
  encodeFrame,
  frameName,
  recycleHeadroom,
  type Frame,
  type HelloInfo,
  type OpenFailReason,
  type WelcomeInfo,
} from './frames.ts'
import { TunnelError } from './errors.ts'
import { TunnelStream, type StreamHost } from './stream.ts'

export type Role = 'broker' | 'daemon'

export interface SessionOptions {
  role: Role
  /** our receive window per stream (the credit we grant a new stream) */
  window?: number
  /** concurrent streams accepted (daemon) or opened (broker) */
  maxStreams?: number
  /** bytes handed to the WebSocket and not yet flushed to the kernel before DATA waits */
  congestionBytes?: number
  /** how long the broker waits for OPEN_OK / OPEN_FAIL */
  openTimeoutMs?: number
  /** per-stream ceiling for receive-window auto-tuning (default MAX_AUTO_WINDOW) */
  maxWindow?: number
  /** total extra window all streams of this connection may claim (default 32 MiB) */
  windowBudget?: number
}

/** An incoming OPEN on the daemon side. Exactly one of accept/reject must be called. */
export interface OpenRequest {
  streamId: number
  host: string
  port: number
  /** aborted if the broker gives up (RST) or the session closes before accept */
  signal: AbortSignal
  accept(): TunnelStream | null
  reject(reason: OpenFailReason): void
}

export interface SessionEvents {
  hello: [HelloInfo]
  welcome: [WelcomeInfo]
  declaredHosts: [string[]]
  open: [OpenRequest]
  close: [Error | null]
}

interface PendingOpen {
  host: string
  port: number
  resolve(s: TunnelStream): void
  reject(e: Error): void
  timer: NodeJS.Timeout
}

export class TunnelSession extends EventEmitter<SessionEvents> implements StreamHost {
  readonly role: Role
  readonly ws: WebSocket
  private readonly window: number
  private readonly maxStreams: number
  private readonly congestionBytes: number
  private readonly openTimeoutMs: number
  private readonly maxWindow: number
  private windowBudget: number
  private readonly streams = new Map<number, TunnelStream>()
  private readonly pendingOpens = new Map<number, PendingOpen>() // broker: OPEN sent, no answer yet
  private readonly pendingAccepts = new Map<number, AbortController>() // daemon: OPEN received, not accepted yet
  private nextStreamId = 1 // broker
  private lastPeerStreamId = 0 // daemon
  private inflight = 0
  private drainWaiters = new Set<TunnelStream>()
  private greeted = false
  private closeError: Error | null = null
  private done = false
  private heartbeat: NodeJS.Timeout | null = null
  /** ms timestamp of the last frame received (liveness) */
  lastSeen = Date.now()
  /** bytes received and sent on the WebSocket, frames included (metrics) */
  bytesIn = 0
  bytesOut = 0

  constructor(ws: WebSocket, opts: SessionOptions) {
    super()
    this.ws = ws
    this.role = opts.role
    this.window = opts.window ?? DEFAULT_WINDOW
    this.maxStreams = opts.maxStreams ?? 4096
    this.congestionBytes = opts.congestionBytes ?? 1024 * 1024
    this.openTimeoutMs = opts.openTimeoutMs ?? 10_000
    this.maxWindow = Math.max(this.window, opts.maxWindow ?? MAX_AUTO_WINDOW)
    this.windowBudget = opts.windowBudget ?? 32 * 1024 * 1024
    ws.binaryType = 'nodebuffer'
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary))
    ws.on('close', (code, reason) => this.finish(new TunnelError('closed', `tunnel connection closed (${code}${reason.length ? ' ' + reason.toString() : ''})`)))
    ws.on('error', (err) => this.finish(new TunnelError('closed', `tunnel connection failed: ${err.message}`)))
  }

  get isOpen(): boolean {
    return !this.done && this.ws.readyState === WebSocket.OPEN
  }
  get congested(): boolean {
    return this.inflight >= this.congestionBytes
  }
  /** The reason the session ended (a ProtocolError when we dropped the peer). */
  get error(): Error | null {
    return this.closeError
  }
  stats(): { streams: number; pendingOpens: number; bufferedOut: number } {
    return { streams: this.streams.size, pendingOpens: this.pendingOpens.size, bufferedOut: this.inflight }
  }
  stream(id: number): TunnelStream | undefined {
    return this.streams.get(id)
  }

  // ---- sending ----

  /** Send one encoded frame (streams use it for zero-copy DATA; `recycle`: see allocWithHeadroom). */
  sendFrame(buf: Buffer, recycle = false): void {
    if (!this.isOpen) return
    this.inflight += buf.length
    this.bytesOut += buf.length
    // The callback fires once ws has flushed the bytes to the socket: our own, exact
    // view of the WebSocket's bufferedAmount, which paces DATA (see congested).
    this.ws.send(buf, { binary: true }, (err) => {
      this.inflight -= buf.length
      if (recycle && !err) recycleHeadroom(buf)
      if (this.drainWaiters.size > 0 && !this.congested) this.releaseWaiters()
    })
  }

  private releaseWaiters(): void {
    const waiters = [...this.drainWaiters]
    this.drainWaiters.clear()
    for (const s of waiters) s.pump()
  }

  sendData(id: number, chunk: Buffer): void {
    this.sendFrame(encodeData(id, chunk))
  }
  sendWindowUpdate(id: number, increment: number): void {
    this.sendFrame(encodeFrame({ type: FrameType.WINDOW_UPDATE, streamId: id, increment }))
  }
  sendFin(id: number): void {
    this.sendFrame(encodeFrame({ type: FrameType.FIN, streamId: id }))
  }
  sendRst(id: number): void {
    this.sendFrame(encodeFrame({ type: FrameType.RST, streamId: id }))
  }
  claimWindow(want: number): number {
    const n = Math.max(0, Math.min(want, this.windowBudget))
    this.windowBudget -= n
    return n
  }
  releaseWindow(bytes: number): void {
    this.windowBudget += bytes
  }
  waitForDrain(stream: TunnelStream): void {
    this.drainWaiters.add(stream)
  }
  forget(id: number): void {
    const s = this.streams.get(id)
    if (s) this.drainWaiters.delete(s)
    this.streams.delete(id)
  }

  sendHello(hello: HelloInfo): void {
    this.sendFrame(encodeFrame({ type: FrameType.HELLO, streamId: 0, hello }))
  }
  sendWelcome(welcome: WelcomeInfo): void {
    this.sendFrame(encodeFrame({ type: FrameType.WELCOME, streamId: 0, welcome }))
  }
  sendDeclaredHosts(hosts: string[]): void {
    this.sendFrame(encodeFrame({ type: FrameType.DECLARED_HOSTS, streamId: 0, hosts }))
  }
  ping(): void {
    this.sendFrame(encodeFrame({ type: FrameType.PING, streamId: 0, nonce: randomBytes(8) }))
  }

  /**
   * Liveness: every `intervalMs`, drop the connection if nothing arrived for `timeoutMs`;
   * with `ping`, also send a PING (any frame counts as a sign of life, PONG included).
   */
  startHeartbeat(intervalMs: number, timeoutMs: number, ping: boolean): void {
    this.stopHeartbeat()
    this.lastSeen = Date.now()
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastSeen > timeoutMs) {
        this.finish(new TunnelError('closed', `heartbeat timeout: nothing received for ${timeoutMs} ms`))
        this.ws.terminate()
      } else if (ping) this.ping()
    }, intervalMs)
    this.heartbeat.unref()
  }
  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat)
    this.heartbeat = null
  }

  /** Broker: open a stream to host:port on the daemon's machine. */
  open(host: string, port: number, { timeoutMs = this.openTimeoutMs }: { timeoutMs?: number } = {}): Promise<TunnelStream> {
    if (this.role !== 'broker') return Promise.reject(new Error('only the broker opens streams'))
    if (!this.isOpen) return Promise.reject(new TunnelError('closed'))
    if (this.streams.size + this.pendingOpens.size >= this.maxStreams) return Promise.reject(new TunnelError('error', 'too many open streams on this daemon'))
    if (this.nextStreamId > 0xffffffff) return Promise.reject(new TunnelError('error', 'stream ids exhausted; reconnect the daemon'))
    const id = this.nextStreamId++
    return new Promise<TunnelStream>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingOpens.delete(id)
        this.sendRst(id) // the daemon stops connecting; a late OPEN_OK for this id is ignored
        reject(new TunnelError('timeout', `no answer from the daemon within ${timeoutMs} ms`))
      }, timeoutMs)
      this.pendingOpens.set(id, { host, port, resolve, reject, timer })
      this.sendFrame(encodeFrame({ type: FrameType.OPEN, streamId: id, window: this.window, host, port }))
    })
  }

  // ---- receiving ----

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.done) return
    this.lastSeen = Date.now()
    this.bytesIn += data.length
    try {
      if (!isBinary) throw new ProtocolError('text message')
      this.dispatch(decodeFrame(data))
    } catch (e) {
      // only protocol errors are the peer's fault; anything else is ours and must surface
      if (!(e instanceof ProtocolError)) throw e
      this.drop(e)
    }
  }

  /** Drop the peer for a protocol error: close 1002 now, cut the socket if it lingers. */
  drop(err: ProtocolError): void {
    if (this.done) return
    this.finish(err)
    try {
      this.ws.close(1002, err.message.slice(0, 120))
    } catch {
      this.ws.terminate()
    }
    setTimeout(() => this.ws.terminate(), 1000).unref()
  }

  /** Close the connection on purpose (shutdown, network deleted, token rotated). */
  close(code = 1000, reason = ''): void {
    if (this.done) return
    this.finish(new TunnelError('closed', `tunnel closed: ${reason || code}`))
    try {
      this.ws.close(code, reason.slice(0, 120))
    } catch {
      this.ws.terminate()
    }
    setTimeout(() => this.ws.terminate(), 1000).unref()
  }

  private expectFrom(frame: Frame, role: Role): void {
    // `role` is the side that may *receive* this frame
    if (this.role !== role) throw new ProtocolError(`${frameName(frame.type)} is not allowed towards the ${this.role}`)
  }

  /** Is `id` a stream that existed and has closed (late frames are ignored)? */
  private wasUsed(id: number): boolean {
    return this.role === 'broker' ? id < this.nextStreamId : id <= this.lastPeerStreamId
  }

  private dispatch(f: Frame): void {
    // the broker hears HELLO first, the daemon WELCOME; each exactly once
    const greeting = this.role === 'broker' ? FrameType.HELLO : FrameType.WELCOME
    if (!this.greeted && f.type !== greeting) throw new ProtocolError(`${frameName(f.type)} before ${frameName(greeting)}`)
    switch (f.type) {
      case FrameType.HELLO:
      case FrameType.WELCOME:
        if (f.type !== greeting) throw new ProtocolError(`${frameName(f.type)} is not allowed towards the ${this.role}`)
        if (this.greeted) throw new ProtocolError(`second ${frameName(f.type)}`)
        this.greeted = true
        if (f.type === FrameType.HELLO) this.emit('hello', f.hello)
        else this.emit('welcome', f.welcome)
        return
      case FrameType.DECLARED_HOSTS:
        this.expectFrom(f, 'daemon')
        this.emit('declaredHosts', f.hosts)
        return
      case FrameType.PING:
        this.sendFrame(encodeFrame({ type: FrameType.PONG, streamId: 0, nonce: f.nonce }))
        return
      case FrameType.PONG:
        return
      case FrameType.OPEN:
        this.expectFrom(f, 'daemon')
        return this.onOpen(f.streamId, f.host, f.port, f.window)
      case FrameType.OPEN_OK:
      case FrameType.OPEN_FAIL: {
        this.expectFrom(f, 'broker')
        const p = this.pendingOpens.get(f.streamId)
        if (!p) {
          if (this.streams.has(f.streamId)) throw new ProtocolError(`second answer to OPEN on stream ${f.streamId}`)
          if (this.wasUsed(f.streamId)) return // we gave up on it (timeout) and sent RST
          throw new ProtocolError(`answer to OPEN on unknown stream ${f.streamId}`)
        }
        clearTimeout(p.timer)
        this.pendingOpens.delete(f.streamId)
        if (f.type === FrameType.OPEN_FAIL) return p.reject(new TunnelError(f.reason))
        const s = new TunnelStream(this, { id: f.streamId, host: p.host, port: p.port, sendWindow: f.window, recvWindow: this.window, maxWindow: this.maxWindow })
        this.streams.set(f.streamId, s)
        return p.resolve(s)
      }
      case FrameType.DATA:
      case FrameType.WINDOW_UPDATE:
      case FrameType.FIN:
      case FrameType.RST: {
        const s = this.streams.get(f.streamId)
        if (!s) {
          const accepting = this.pendingAccepts.get(f.streamId)
          if (accepting && f.type === FrameType.RST) {
            this.pendingAccepts.delete(f.streamId)
            accepting.abort()
            return
          }
          if (accepting || this.pendingOpens.has(f.streamId)) throw new ProtocolError(`${frameName(f.type)} before OPEN_OK on stream ${f.streamId}`)
          if (this.wasUsed(f.streamId)) return
          throw new ProtocolError(`${frameName(f.type)} on unknown stream ${f.streamId}`)
        }
        if (f.type === FrameType.DATA) s.onData(f.data)
        else if (f.type === FrameType.WINDOW_UPDATE) s.onWindowUpdate(f.increment)
        else if (f.type === FrameType.FIN) s.onFin()
        else s.onRst()
        return
      }
    }
  }

  private onOpen(id: number, host: string, port: number, peerWindow: number): void {
    if (id <= this.lastPeerStreamId) throw new ProtocolError(`OPEN reuses stream id ${id}`)
    this.lastPeerStreamId = id
    const answer = (reason: OpenFailReason) => this.sendFrame(encodeFrame({ type: FrameType.OPEN_FAIL, streamId: id, reason }))
    if (this.streams.size + this.pendingAccepts.size >= this.maxStreams || this.listenerCount('open') === 0) return answer('error')
    const ac = new AbortController()
    this.pendingAccepts.set(id, ac)
    let answered = false
    this.emit('open', {
      streamId: id,
      host,
      port,
      signal: ac.signal,
      accept: () => {
        if (answered || ac.signal.aborted || !this.isOpen) return null
        answered = true
        this.pendingAccepts.delete(id)
        const s = new TunnelStream(this, { id, host, port, sendWindow: peerWindow, recvWindow: this.window, maxWindow: this.maxWindow })
        this.streams.set(id, s)
        this.sendFrame(encodeFrame({ type: FrameType.OPEN_OK, streamId: id, window: this.window }))
        return s
      },
      reject: (reason) => {
        if (answered || ac.signal.aborted) return
        answered = true
        this.pendingAccepts.delete(id)
        answer(reason)
      },
    })
  }

  /** Tear down local state once; every stream and pending open fails with `err`. */
  private finish(err: Error): void {
    if (this.done) return
    this.done = true
    this.closeError = err
    this.stopHeartbeat()
    this.drainWaiters.clear()
    for (const p of this.pendingOpens.values()) {
      clearTimeout(p.timer)
      p.reject(new TunnelError('closed', err.message))
    }
    this.pendingOpens.clear()
    for (const ac of this.pendingAccepts.values()) ac.abort()
    this.pendingAccepts.clear()
    const streamErr = err instanceof TunnelError ? err : new TunnelError('closed', err.message)
    for (const s of [...this.streams.values()]) s.onSessionClosed(streamErr)
    this.streams.clear()
    this.emit('close', err)
  }
}
