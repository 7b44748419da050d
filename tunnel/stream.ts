// One multiplexed TCP stream as a node Duplex, with credit-based flow control: only
// bytes handed to the consumer are granted back, so a stream's memory is bounded by its
// window and a slow consumer stalls only its own stream. The window doubles while the
// consumer keeps up; the write callback fires only once a chunk is on the wire, so
// write() returning false is real backpressure.
// Design: docs/TUNNEL.md#flow-control-and-memory
import { Duplex } from 'node:stream'
import { MAX_DATA, MAX_WINDOW, ProtocolError, encodeDataInPlace } from './frames.ts'
import { TunnelError } from './errors.ts'

/** What a stream needs from its session (kept narrow so the session owns the socket). */
export interface StreamHost {
  readonly isOpen: boolean
  readonly congested: boolean
  sendData(id: number, chunk: Buffer): void
  /** `recycle`: the frame is the last use of its headroom buffer, reusable once flushed */
  sendFrame(frame: Buffer, recycle?: boolean): void
  /** Ask for up to `want` bytes of extra receive window; returns what the budget allows. */
  claimWindow(want: number): number
  releaseWindow(bytes: number): void
  sendWindowUpdate(id: number, increment: number): void
  sendFin(id: number): void
  sendRst(id: number): void
  waitForDrain(stream: TunnelStream): void
  forget(id: number): void
}

export interface StreamInit {
  id: number
  host: string
  port: number
  /** credit the peer granted us (its receive window) */
  sendWindow: number
  /** credit we granted the peer (our receive window) */
  recvWindow: number
  /** ceiling for auto-tuning (default: recvWindow, i.e. no growth) */
  maxWindow?: number
}

interface WriteJob {
  chunk: Buffer
  off: number
  cb: (err?: Error | null) => void
}

export class TunnelStream extends Duplex {
  readonly id: number
  readonly remoteHost: string
  readonly remotePort: number
  private readonly host: StreamHost
  private sendCredit: number
  private recvCredit: number
  private grantThreshold: number
  private windowSize: number // current receive window
  private readonly maxWindow: number
  private claimed = 0 // window beyond the initial one, taken from the session budget
  private unacked = 0 // consumed bytes not yet granted back
  private pending: Buffer[] = []
  private pendingBytes = 0
  private readWanted = false
  private deliverQueued = false
  private remoteFin = false
  private endPushed = false
  private localFin = false
  private resetByPeer = false
  private sessionGone = false
  private job: WriteJob | null = null
  private idleMs = 0
  private idleTimer: NodeJS.Timeout | null = null

  constructor(host: StreamHost, init: StreamInit) {
    // one DATA frame fits the Readable's buffer, so a reader asks once per frame
    super({ allowHalfOpen: true, readableHighWaterMark: MAX_DATA })
    this.host = host
    this.id = init.id
    this.remoteHost = init.host
    this.remotePort = init.port
    this.sendCredit = init.sendWindow
    this.recvCredit = init.recvWindow
    this.windowSize = init.recvWindow
    this.maxWindow = Math.max(init.recvWindow, init.maxWindow ?? init.recvWindow)
    // grant in batches (a quarter window) so tiny reads do not each cost a frame,
    // but always well before the peer runs dry
    this.grantThreshold = Math.max(1, Math.floor(init.recvWindow / 4))
  }

  /** Bytes received and not yet handed to the consumer (bounded by the window). */
  get bufferedIn(): number {
    return this.pendingBytes
  }
  /** Current receive window (grows while the consumer keeps up). */
  get receiveWindow(): number {
    return this.windowSize
  }
  /** Credit we may still send with. */
  get sendWindow(): number {
    return this.sendCredit
  }

  // ---- frames from the session ----

  /** @internal */ onData(data: Buffer): void {
    if (this.remoteFin) throw new ProtocolError(`DATA after FIN on stream ${this.id}`)
    if (data.length > this.recvCredit) throw new ProtocolError(`window overflow on stream ${this.id}`)
    this.recvCredit -= data.length
    this.touch()
    if (this.destroyed) return
    this.pending.push(data)
    this.pendingBytes += data.length
    this.deliver()
  }

  /** @internal */ onWindowUpdate(increment: number): void {
    if (this.sendCredit + increment > MAX_WINDOW) throw new ProtocolError(`send window overflow on stream ${this.id}`)
    this.sendCredit += increment
    this.pump()
  }

  /** @internal */ onFin(): void {
    if (this.remoteFin) throw new ProtocolError(`duplicate FIN on stream ${this.id}`)
    this.remoteFin = true
    this.deliver()
  }

  /** @internal */ onRst(): void {
    this.resetByPeer = true
    this.destroy(new TunnelError('reset'))
  }

  /** @internal The session is gone: fail without trying to send anything. */
  onSessionClosed(err: Error): void {
    this.sessionGone = true
    this.destroy(err)
  }

  /** @internal Called by the session when the WebSocket drained below its high-water mark. */
  pump(): void {
    const job = this.job
    if (!job) return
    while (job.off < job.chunk.length) {
      if (this.destroyed || !this.host.isOpen) return
      if (this.sendCredit <= 0) return // resumes on WINDOW_UPDATE
      if (this.host.congested) {
        this.host.waitForDrain(this)
        return
      }
      const n = Math.min(this.sendCredit, MAX_DATA, job.chunk.length - job.off)
      const inPlace = job.off === 0 ? encodeDataInPlace(this.id, job.chunk, n) : null
      // a frame that carries the whole chunk is the chunk's last use (see allocWithHeadroom)
      if (inPlace) this.host.sendFrame(inPlace, n === job.chunk.length)
      else this.host.sendData(this.id, job.chunk.subarray(job.off, job.off + n))
      job.off += n
      this.sendCredit -= n
    }
    this.job = null
    this.touch()
    job.cb()
  }

  private deliver(): void {
    while (this.pending.length > 0 && this.readWanted) {
      const chunk = this.pending.shift()!
      this.pendingBytes -= chunk.length
      this.unacked += chunk.length
      this.readWanted = this.push(chunk)
    }
    if (this.remoteFin && this.pending.length === 0 && !this.endPushed) {
      this.endPushed = true
      this.push(null)
    }
    if (this.unacked >= this.grantThreshold && !this.remoteFin && this.host.isOpen && !this.destroyed) {
      let grant = this.unacked
      // a backlog under a quarter window means the reader keeps up: the window is the limit
      if (this.pendingBytes <= this.windowSize / 4 && this.windowSize < this.maxWindow) {
        const extra = this.host.claimWindow(Math.min(this.windowSize, this.maxWindow - this.windowSize))
        this.claimed += extra
        this.windowSize += extra
        this.grantThreshold = Math.floor(this.windowSize / 4)
        grant += extra
      }
      this.recvCredit += grant
      this.host.sendWindowUpdate(this.id, grant)
      this.unacked = 0
    }
  }

  // ---- Duplex implementation ----

  override _read(): void {
    this.readWanted = true
    // read() asks for more before it takes what is buffered: a chunk pushed now would be
    // concatenated (copied) with the one read() is about to return, so while the Readable
    // still holds data the next chunk follows on the next tick (as a socket's would)
    if (this.readableLength > 0) {
      if (!this.deliverQueued) {
        this.deliverQueued = true
        process.nextTick(() => {
          this.deliverQueued = false
          this.deliver()
        })
      }
      return
    }
    this.deliver()
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (!this.host.isOpen) return cb(new TunnelError('closed'))
    this.job = { chunk, off: 0, cb }
    this.pump()
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (!this.host.isOpen) return cb(new TunnelError('closed'))
    this.localFin = true
    this.host.sendFin(this.id)
    cb()
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    this.clearIdle()
    const clean = this.localFin && this.remoteFin
    if (!clean && !this.resetByPeer && !this.sessionGone && this.host.isOpen) this.host.sendRst(this.id)
    this.host.forget(this.id)
    this.host.releaseWindow(this.claimed)
    this.claimed = 0
    this.pending = []
    this.pendingBytes = 0
    const job = this.job
    this.job = null
    if (job) job.cb(err ?? new TunnelError('closed'))
    cb(err)
  }

  // ---- net.Socket look-alikes, so http clients/agents and proxies can use a stream ----

  setNoDelay(_noDelay?: boolean): this {
    return this
  }
  setKeepAlive(_enable?: boolean, _delay?: number): this {
    return this
  }
  ref(): this {
    return this
  }
  unref(): this {
    return this
  }
  /** Emits 'timeout' after `ms` without traffic (as net.Socket does); 0 disables. */
  setTimeout(ms: number, cb?: () => void): this {
    this.idleMs = ms
    this.clearIdle()
    if (cb) this.once('timeout', cb)
    this.touch()
    return this
  }

  private touch(): void {
    if (this.idleMs <= 0 || this.destroyed) return this.clearIdle()
    if (this.idleTimer) this.idleTimer.refresh() // cheap: no new timer per frame
    else {
      this.idleTimer = setTimeout(() => this.emit('timeout'), this.idleMs)
      this.idleTimer.unref()
    }
  }
  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = null
  }
}
