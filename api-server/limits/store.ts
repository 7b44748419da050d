// The limiter's state behind one small interface: one atomic read-modify-write of a small
// record per key. The app's store is Postgres (pg-store.ts), so every replica counts
// against one budget; MemoryLimitStore is for tests. Keys never hold secrets: a policy name
// plus an IP, an account (a hash of the e-mail) or a network reference.

/** What a policy keeps per key. Plain numbers (ms since the epoch) so any store can hold it. */
export interface LimitRecord {
  /** events counted in the current window, or failures so far for a backoff */
  count: number
  /** when the current window (or failure streak) began */
  start: number
  /** locked until (backoff policies), 0 when not locked */
  until: number
  /** the store may forget the record after this instant */
  expiresAt: number
}

export interface LimitStore {
  /**
   * Atomically: read the record under `key` (null when absent or expired at `now`),
   * let `fn` compute the next record (null deletes it) and a result, store, return the result.
   */
  update<T>(key: string, now: number, fn: (current: LimitRecord | null) => { next: LimitRecord | null; result: T }): Promise<T>
}

/** In-process store. `fn` runs synchronously, so each update is atomic within the process. */
export class MemoryLimitStore implements LimitStore {
  private readonly records = new Map<string, LimitRecord>()

  private readonly maxKeys: number
  constructor(maxKeys = 100_000) {
    this.maxKeys = maxKeys
  }

  async update<T>(key: string, now: number, fn: (current: LimitRecord | null) => { next: LimitRecord | null; result: T }): Promise<T> {
    const found = this.records.get(key)
    const current = found && found.expiresAt > now ? found : null
    const { next, result } = fn(current ? { ...current } : null)
    if (next) {
      if (!this.records.has(key) && this.records.size >= this.maxKeys) this.prune(now)
      this.records.set(key, next)
    } else {
      this.records.delete(key)
    }
    return result
  }

  /** Drops expired records; if that is not enough, the oldest (a flood of fresh keys cannot grow memory without bound). */
  private prune(now: number) {
    for (const [k, r] of this.records) if (r.expiresAt <= now) this.records.delete(k)
    if (this.records.size < this.maxKeys) return
    let drop = Math.ceil(this.maxKeys / 10)
    for (const k of this.records.keys()) {
      this.records.delete(k)
      if (--drop <= 0) break
    }
  }

  /** for tests and diagnostics */
  get size(): number {
    return this.records.size
  }
}
