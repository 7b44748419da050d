// The warm pool's policy, shared by both pod runtimes: how many unclaimed chromium pods to
// keep (a floor, growing with recent demand), when to refill after a claim, how long to
// back off while pool pods keep failing. Pure: each decision is a function of (settings,
// state, facts, now) that returns the new state and what to do; the runtime does the I/O
// and owns the timers. Design: docs/operator.md#the-warm-pool
import { backoffDelay, type BackoffOptions } from '../../watch/backoff.ts'

/** the pool's demand: the most starts asked for within any window this long */
export const DEMAND_BUCKET_MS = 10_000
/** a pool above its target retires one idle pod this often */
export const SHRINK_STEP_MS = 1000

export interface WarmPoolSettings {
  /** unclaimed pods kept ready at the least (0 = start on demand) */
  size: number
  /** the pool grows toward recent demand up to this many (size: a fixed pool) */
  max: number
  /** how long a burst of claims keeps the pool large */
  windowMs: number
  /** after a claim that leaves a warm pod, the refill waits this long (0: at once) */
  refillDelayMs: number
  /** pool pods launching at once */
  launchConcurrency: number
  /** the refill's backoff while pool pods keep failing */
  backoff: BackoffOptions
}

export interface WarmPoolState {
  /** when recent claims were asked for, ascending (the demand) */
  readonly claims: readonly number[]
  /** pool pods that failed since the last one came up */
  readonly failures: number
  /** warm claims whose configure is in flight (an empty pool waits for them before refilling) */
  readonly warmConfiguring: number
  /** a deferred refill is pending; the runtime holds its timer */
  readonly deferred: boolean
}

export const EMPTY_POOL: WarmPoolState = { claims: [], failures: 0, warmConfiguring: 0, deferred: false }

/** what the runtime does next about refilling */
export type RefillDecision =
  | { kind: 'refill' }
  /** start a timer of `ms`; when it fires, call deferredFired() */
  | { kind: 'defer'; ms: number }
  | { kind: 'none' }

const NONE: RefillDecision = { kind: 'none' }
const REFILL: RefillDecision = { kind: 'refill' }

export function warmPoolSettings(input: Partial<WarmPoolSettings> & { backoff: BackoffOptions }): WarmPoolSettings {
  const size = input.size ?? 2
  return {
    size,
    max: Math.max(size, input.max ?? size),
    windowMs: input.windowMs ?? 120_000,
    refillDelayMs: input.refillDelayMs ?? 1000,
    launchConcurrency: Math.max(1, input.launchConcurrency ?? Infinity),
    backoff: input.backoff,
  }
}

/** claims still inside the window */
function recentClaims(settings: WarmPoolSettings, state: WarmPoolState, now: number): readonly number[] {
  return state.claims.filter((t) => now - t < settings.windowMs)
}

/** how many pool pods recent demand asks for, between size and max */
export function poolTarget(settings: WarmPoolSettings, state: WarmPoolState, now: number): number {
  const claims = recentClaims(settings, state, now)
  let peak = 0
  for (let i = 0, j = 0; i < claims.length; i++) {
    while (claims[i] - claims[j] > DEMAND_BUCKET_MS) j++
    peak = Math.max(peak, i - j + 1)
  }
  return Math.min(settings.max, Math.max(settings.size, peak))
}

/**
 * A pod was claimed. A chromium claim asked for at `requestedAt` (never later than now)
 * counts toward demand, by when it was asked for (a burst that waited for launch slots
 * counts whole); a warm one is configured next, and an emptied pool waits for that.
 */
export function claimed(settings: WarmPoolSettings, state: WarmPoolState, claim: { warm: boolean; chromium: boolean; requestedAt?: number }, now: number): WarmPoolState {
  let claims = state.claims
  if (claim.chromium) {
    const at = Math.min(now, claim.requestedAt ?? now)
    const kept = [...recentClaims(settings, state, now)]
    let i = kept.length
    while (i > 0 && kept[i - 1] > at) i--
    kept.splice(i, 0, at)
    claims = kept
  }
  return { ...state, claims, warmConfiguring: state.warmConfiguring + (claim.warm ? 1 : 0) }
}

/**
 * After a claim the session just claimed takes its first, latency-critical steps on free
 * cores: with a warm pod left the refill waits refillDelayMs; an emptied pool refills once
 * no warm claim is being configured (configured() asks again then).
 */
export function refillAfterClaim(settings: WarmPoolSettings, state: WarmPoolState, facts: { warmLeft: boolean }): { state: WarmPoolState; decision: RefillDecision } {
  if (settings.refillDelayMs <= 0) return { state, decision: REFILL }
  if (!facts.warmLeft) return { state, decision: state.warmConfiguring === 0 ? REFILL : NONE }
  if (state.deferred) return { state, decision: NONE }
  return { state: { ...state, deferred: true }, decision: { kind: 'defer', ms: settings.refillDelayMs } }
}

/** a warm claim's configure ended: the last one in flight lets an emptied pool refill */
export function configured(settings: WarmPoolSettings, state: WarmPoolState, facts: { warmLeft: boolean }): { state: WarmPoolState; decision: RefillDecision } {
  const next = { ...state, warmConfiguring: Math.max(0, state.warmConfiguring - 1) }
  if (next.warmConfiguring > 0) return { state: next, decision: NONE }
  return refillAfterClaim(settings, next, facts)
}

/** the deferred refill's timer fired */
export function deferredFired(state: WarmPoolState): { state: WarmPoolState; decision: RefillDecision } {
  return { state: { ...state, deferred: false }, decision: REFILL }
}

/** an unclaimed pool pod failed (died, or could not be created): the refill backs off */
export function poolPodFailed(state: WarmPoolState): WarmPoolState {
  return { ...state, failures: state.failures + 1 }
}

/** an unclaimed pool pod came up: any backoff ends */
export function poolPodUp(state: WarmPoolState): WarmPoolState {
  return state.failures === 0 ? state : { ...state, failures: 0 }
}

/** how long the next refill waits: nothing, or the backoff while pool pods keep failing */
export function refillDelay(settings: WarmPoolSettings, state: WarmPoolState): number {
  return state.failures ? backoffDelay(state.failures - 1, settings.backoff) : 0
}

/** the pool as the runtime sees it when it tops up */
export interface PoolCounts {
  /** unclaimed pool pods, up or starting (or being created) */
  pool: number
  /** pods launching right now (every kind, claimed or not): launch slots in use */
  launching: number
  /** unclaimed pool pods that are up and could be retired */
  idle: number
}

export interface TopUpPlan {
  /** pool pods to launch now */
  launch: number
  /** retire one idle pod: the pool is above its target */
  retire: boolean
  /** look again after this long (the pool shrinks a pod at a time; demand ages out without an event) */
  lookAgainMs?: number
}

/**
 * One top-up: launch toward the target within the free launch slots; above the target,
 * retire one idle pod per pass, gently.
 */
export function topUpPlan(settings: WarmPoolSettings, state: WarmPoolState, counts: PoolCounts, now: number): TopUpPlan {
  const target = poolTarget(settings, state, now)
  const slots = Math.max(0, settings.launchConcurrency - counts.launching)
  const launch = Math.max(0, Math.min(target - counts.pool, slots))
  let retire = false
  let lookAgainMs: number | undefined
  if (counts.pool > target) {
    retire = counts.idle > 0
    if (counts.pool - 1 > target) lookAgainMs = SHRINK_STEP_MS
  }
  const claims = recentClaims(settings, state, now)
  if (lookAgainMs === undefined && claims.length) lookAgainMs = Math.max(SHRINK_STEP_MS, claims[0] + settings.windowMs - now)
  return { launch, retire, ...(lookAgainMs !== undefined ? { lookAgainMs } : {}) }
}
