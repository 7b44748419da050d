// Exponential backoff with a cap and optional jitter — shared by the workqueue's per-key
// retry delays and the informer's reconnects.

export interface BackoffOptions {
  /** delay of the first retry (default 5 ms — client-go's per-item default) */
  initialMs?: number
  /** the delay never exceeds this (default 60 s) */
  maxMs?: number
  /** 0..1: the delay is multiplied by (1 + jitter * random) to spread reconnect storms */
  jitter?: number
  random?: () => number
}

/** delay for the nth consecutive failure (n = 0 for the first) */
export function backoffDelay(n: number, opts: BackoffOptions = {}): number {
  const initial = opts.initialMs ?? 5
  const max = opts.maxMs ?? 60_000
  const base = Math.min(max, initial * 2 ** Math.min(n, 52))
  const jitter = opts.jitter ?? 0
  if (!jitter) return base
  return Math.min(max, base * (1 + jitter * (opts.random ?? Math.random)()))
}
