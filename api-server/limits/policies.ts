// Two limiter policies over a LimitStore, on the injected service clock (tests advance time
// instead of sleeping): WindowLimit, at most `limit` events per key in a fixed window; and
// BackoffLock, which locks a key after `freeFailures` failures for `baseMs`, doubling up to
// `maxMs`. Attempts refused while locked neither grow nor extend the lock, so once an
// attacker stops, the key is free within `maxMs`.
import type { LimitRecord, LimitStore } from './store.ts'

export type Verdict = { allowed: true } | { allowed: false; retryAfterSecs: number }

const ALLOWED: Verdict = { allowed: true }
const secsUntil = (t: number, now: number) => Math.max(1, Math.ceil((t - now) / 1000))

export interface WindowRule {
  limit: number
  windowMs: number
}

export class WindowLimit {
  private readonly store: LimitStore
  private readonly name: string
  readonly rule: WindowRule
  private readonly now: () => number
  constructor(
    store: LimitStore,
    name: string,
    rule: WindowRule,
    now: () => number,
  ) {
    this.store = store
    this.name = name
    this.rule = rule
    this.now = now
  }

  private current(r: LimitRecord | null, t: number): LimitRecord {
    if (!r || t - r.start >= this.rule.windowMs || t < r.start) return { count: 0, start: t, until: 0, expiresAt: t + this.rule.windowMs }
    return r
  }

  /** Is `key` already at its limit? Counts nothing (for limits on failures: check before, hit after). */
  async check(key: string): Promise<Verdict> {
    const t = this.now()
    return this.store.update(`${this.name}:${key}`, t, (r) => {
      const w = this.current(r, t)
      return { next: r, result: w.count >= this.rule.limit ? { allowed: false, retryAfterSecs: secsUntil(w.start + this.rule.windowMs, t) } : ALLOWED }
    })
  }

  /** Counts one event; refused when it is beyond the limit. */
  async hit(key: string): Promise<Verdict> {
    const t = this.now()
    return this.store.update(`${this.name}:${key}`, t, (r) => {
      const w = this.current(r, t)
      w.count++
      const result: Verdict = w.count <= this.rule.limit ? ALLOWED : { allowed: false, retryAfterSecs: secsUntil(w.start + this.rule.windowMs, t) }
      return { next: w, result }
    })
  }
}

export interface BackoffRule {
  /** the failure that takes the first lock (5: four are free, the fifth locks) */
  freeFailures: number
  /** the first lock; each further failure doubles it */
  baseMs: number
  /** the longest lock */
  maxMs: number
  /** a failure streak is forgotten after this long without a failure (and on reset) */
  memoryMs: number
}

export class BackoffLock {
  private readonly store: LimitStore
  private readonly name: string
  readonly rule: BackoffRule
  private readonly now: () => number
  constructor(
    store: LimitStore,
    name: string,
    rule: BackoffRule,
    now: () => number,
  ) {
    this.store = store
    this.name = name
    this.rule = rule
    this.now = now
  }

  /** Is `key` locked now? */
  async check(key: string): Promise<Verdict> {
    const t = this.now()
    return this.store.update(`${this.name}:${key}`, t, (r) => ({
      next: r,
      result: r && r.until > t ? { allowed: false, retryAfterSecs: secsUntil(r.until, t) } : ALLOWED,
    }))
  }

  /** Records one failure; says whether the key is now locked, and for how long. */
  async fail(key: string): Promise<Verdict> {
    const t = this.now()
    const { freeFailures, baseMs, maxMs, memoryMs } = this.rule
    return this.store.update(`${this.name}:${key}`, t, (r) => {
      if (r && r.until > t) return { next: r, result: { allowed: false, retryAfterSecs: secsUntil(r.until, t) } } // refused attempts are not failures
      const count = (r?.count ?? 0) + 1
      const over = count - freeFailures + 1 // the freeFailures-th failure takes the first lock
      const until = over > 0 ? t + Math.min(maxMs, baseMs * 2 ** Math.min(over - 1, 30)) : 0
      const next: LimitRecord = { count, start: r?.start ?? t, until, expiresAt: Math.max(until, t) + memoryMs }
      return { next, result: until > t ? { allowed: false, retryAfterSecs: secsUntil(until, t) } : ALLOWED }
    })
  }

  /** A success clears the streak. */
  async reset(key: string): Promise<void> {
    await this.store.update(`${this.name}:${key}`, this.now(), () => ({ next: null, result: undefined }))
  }
}

/** The most restrictive of several verdicts (the longest wait). */
export function strictest(...verdicts: Verdict[]): Verdict {
  let worst: Verdict = ALLOWED
  for (const v of verdicts) if (!v.allowed && (worst.allowed || v.retryAfterSecs > worst.retryAfterSecs)) worst = v
  return worst
}
