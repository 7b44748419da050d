// A fixed-window counter per key (the source IP). In-process on purpose: it runs on
// the service clock (services.now()), so tests can open a new window by advancing
// time instead of waiting, and it needs no shared store. With several replicas each
// enforces its own window, so the effective limit is per replica.
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Counts one attempt; says whether it is allowed and, if not, when to retry. */
  hit(key: string): { allowed: true } | { allowed: false; retryAfterSecs: number } {
    const t = this.now()
    if (this.windows.size > 10_000) this.prune(t)
    let w = this.windows.get(key)
    if (!w || t - w.start >= this.windowMs || t < w.start) {
      w = { start: t, count: 0 }
      this.windows.set(key, w)
    }
    w.count++
    if (w.count <= this.limit) return { allowed: true }
    return { allowed: false, retryAfterSecs: Math.max(1, Math.ceil((w.start + this.windowMs - t) / 1000)) }
  }

  private prune(t: number) {
    for (const [k, w] of this.windows) if (t - w.start >= this.windowMs) this.windows.delete(k)
  }
}
