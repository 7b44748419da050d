// A work queue of keys with client-go's guarantees, which make reconcilers level-triggered:
// a key added while queued is processed once; never by two workers at once (added while
// processing, it is queued again once, after done()); per-key capped exponential backoff;
// an optional token bucket; delayed adds keep the earliest.
import { backoffDelay, type BackoffOptions } from '../../watch/backoff.ts'

export interface WorkQueueOptions {
  /** per-key failure backoff (default 5 ms doubling, capped at 30 s) */
  backoff?: BackoffOptions
  /** overall rate limit on addRateLimited (off unless given) */
  rateLimit?: { qps: number; burst: number }
  /** called with the number of queued (not in-flight) keys whenever it changes */
  onDepth?: (depth: number) => void
}

export class WorkQueue {
  private readonly queue: string[] = []
  /** keys waiting to be processed (queued, or re-added while processing) */
  private readonly dirty = new Set<string>()
  private readonly processing = new Set<string>()
  private readonly waiters: ((key: string | undefined) => void)[] = []
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>()
  private readonly failures = new Map<string, number>()
  private readonly backoff: BackoffOptions
  private readonly bucket?: { qps: number; burst: number; tokens: number; last: number }
  private shuttingDown = false

  private readonly opts: WorkQueueOptions
  constructor(opts: WorkQueueOptions = {}) {
    this.opts = opts
    this.backoff = { initialMs: 5, maxMs: 30_000, ...opts.backoff }
    if (opts.rateLimit) this.bucket = { ...opts.rateLimit, tokens: opts.rateLimit.burst, last: Date.now() }
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return
    this.dirty.add(key)
    if (this.processing.has(key)) return // re-queued by done()
    const waiter = this.waiters.shift()
    if (waiter) this.hand(key, waiter)
    else {
      this.queue.push(key)
      this.depthChanged()
    }
  }

  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return
    if (delayMs <= 0) return this.add(key)
    const at = Date.now() + delayMs
    const existing = this.delayed.get(key)
    if (existing && existing.at <= at) return
    if (existing) clearTimeout(existing.timer)
    const timer = setTimeout(() => {
      this.delayed.delete(key)
      this.add(key)
    }, delayMs) // not unref'd: a pending retry is work; shutDown() clears it
    this.delayed.set(key, { at, timer })
  }

  /** re-add after this key's backoff (and the bucket, if any); counts a failure */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0
    this.failures.set(key, n + 1)
    const delay = Math.max(backoffDelay(n, this.backoff), this.reserveToken())
    this.addAfter(key, delay)
    return delay
  }

  /** the key succeeded: its next failure starts the backoff from the beginning */
  forget(key: string): void {
    this.failures.delete(key)
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0
  }

  /** next key to process; undefined once shut down. Call done(key) when finished. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift()
    if (key !== undefined) {
      this.depthChanged()
      this.dirty.delete(key)
      this.processing.add(key)
      return Promise.resolve(key)
    }
    if (this.shuttingDown) return Promise.resolve(undefined)
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  done(key: string): void {
    this.processing.delete(key)
    if (this.dirty.has(key) && !this.shuttingDown) {
      const waiter = this.waiters.shift()
      if (waiter) this.hand(key, waiter)
      else {
        this.queue.push(key)
        this.depthChanged()
      }
    }
  }

  len(): number {
    return this.queue.length
  }

  get inFlight(): number {
    return this.processing.size
  }

  /** stop accepting keys; pending get()s resolve undefined; queued keys are dropped */
  shutDown(): void {
    this.shuttingDown = true
    for (const { timer } of this.delayed.values()) clearTimeout(timer)
    this.delayed.clear()
    this.queue.length = 0
    this.dirty.clear()
    for (const w of this.waiters.splice(0)) w(undefined)
    this.depthChanged()
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown
  }

  private hand(key: string, waiter: (key: string) => void): void {
    this.dirty.delete(key)
    this.processing.add(key)
    waiter(key)
  }

  private reserveToken(): number {
    const b = this.bucket
    if (!b) return 0
    const now = Date.now()
    b.tokens = Math.min(b.burst, b.tokens + ((now - b.last) / 1000) * b.qps)
    b.last = now
    b.tokens -= 1
    return b.tokens >= 0 ? 0 : (-b.tokens / b.qps) * 1000
  }

  private depthChanged(): void {
    this.opts.onDepth?.(this.queue.length)
  }
}
