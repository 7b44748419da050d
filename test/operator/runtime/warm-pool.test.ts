import t from 'tap'
import {
  EMPTY_POOL,
  SHRINK_STEP_MS,
  claimed,
  configured,
  deferredFired,
  poolPodFailed,
  poolPodUp,
  poolTarget,
  refillAfterClaim,
  refillDelay,
  topUpPlan,
  warmPoolSettings,
  type WarmPoolState,
} from '../../../operator/runtime/warm-pool.ts'

const NOW = 1_000_000
const fixed = warmPoolSettings({ size: 2, backoff: { initialMs: 1000, maxMs: 60_000 } })
const growing = warmPoolSettings({ size: 1, max: 4, windowMs: 90_000, backoff: { initialMs: 200, maxMs: 30_000 }, launchConcurrency: 2 })

function claimAll(settings = growing, times: number[], state: WarmPoolState = EMPTY_POOL, now = NOW): WarmPoolState {
  for (const at of times) state = claimed(settings, state, { warm: false, chromium: true, requestedAt: at }, now)
  return state
}

t.test('[ISSUE-48] the target is the floor, grows with the busiest ten seconds of demand up to the most, and shrinks back as it ages out', async (t) => {
  t.equal(poolTarget(fixed, EMPTY_POOL, NOW), 2, 'no demand: the floor')
  const burst = claimAll(growing, [NOW - 3000, NOW - 2000, NOW - 1000])
  t.equal(poolTarget(growing, burst, NOW), 3, 'three claims within ten seconds ask for three')
  const spread = claimAll(growing, [NOW - 40_000, NOW - 20_000], burst)
  t.equal(poolTarget(growing, spread, NOW), 3, 'claims spread out do not add to the burst')
  t.equal(poolTarget(growing, claimAll(growing, [NOW, NOW, NOW, NOW, NOW, NOW]), NOW), 4, 'never above the most')
  t.equal(poolTarget(growing, burst, NOW + 90_000), 1, 'out of the window: back to the floor')
  t.equal(poolTarget(fixed, claimAll(fixed, [NOW, NOW, NOW]), NOW), 2, 'a fixed pool stays at its size')
})

t.test('[ISSUE-48] demand counts a claim by when it was asked for, never later than now, and only chromium', async (t) => {
  let s = claimed(growing, EMPTY_POOL, { warm: false, chromium: true, requestedAt: NOW + 5000 }, NOW)
  t.same(s.claims, [NOW], 'a start asked for in the future counts now')
  s = claimed(growing, s, { warm: false, chromium: true, requestedAt: NOW - 500 }, NOW)
  t.same(s.claims, [NOW - 500, NOW], 'kept in order')
  s = claimed(growing, s, { warm: false, chromium: false }, NOW)
  t.same(s.claims, [NOW - 500, NOW], 'cloak is not pooled')
  s = claimed(growing, s, { warm: false, chromium: true }, NOW + 91_000)
  t.same(s.claims, [NOW + 91_000], 'claims out of the window are dropped as new ones come')
})

t.test('[ISSUE-48] after a claim that leaves a warm pod the refill is deferred once; an emptied pool waits for the warm configures', async (t) => {
  let s = claimed(fixed, EMPTY_POOL, { warm: true, chromium: true }, NOW)
  t.equal(s.warmConfiguring, 1)
  let r = refillAfterClaim(fixed, s, { warmLeft: true })
  t.same(r.decision, { kind: 'defer', ms: 1000 }, 'a warm pod left: wait the refill delay')
  s = r.state
  t.same(refillAfterClaim(fixed, s, { warmLeft: true }).decision, { kind: 'none' }, 'one deferred refill at a time')
  r = deferredFired(s)
  t.same(r.decision, { kind: 'refill' })
  t.equal(r.state.deferred, false)

  s = claimed(fixed, claimed(fixed, EMPTY_POOL, { warm: true, chromium: true }, NOW), { warm: true, chromium: true }, NOW)
  t.same(refillAfterClaim(fixed, s, { warmLeft: false }).decision, { kind: 'none' }, 'emptied, with warm claims configuring: wait')
  r = configured(fixed, s, { warmLeft: false })
  t.same(r.decision, { kind: 'none' }, 'one warm claim still configuring')
  r = configured(fixed, r.state, { warmLeft: false })
  t.same(r.decision, { kind: 'refill' }, 'the last one configured: refill at once')
  t.equal(r.state.warmConfiguring, 0)
  t.same(refillAfterClaim(fixed, EMPTY_POOL, { warmLeft: false }).decision, { kind: 'refill' }, 'a cold claim on an empty pool refills at once')

  const eager = warmPoolSettings({ size: 2, refillDelayMs: 0, backoff: {} })
  t.same(refillAfterClaim(eager, s, { warmLeft: true }).decision, { kind: 'refill' }, 'no refill delay: always at once')
})

t.test('[ISSUE-48] pool pods that keep failing back the refill off; one that comes up ends the backoff', async (t) => {
  t.equal(refillDelay(fixed, EMPTY_POOL), 0)
  let s = poolPodFailed(EMPTY_POOL)
  t.equal(refillDelay(fixed, s), 1000)
  s = poolPodFailed(poolPodFailed(s))
  t.equal(refillDelay(fixed, s), 4000)
  for (let i = 0; i < 20; i++) s = poolPodFailed(s)
  t.equal(refillDelay(fixed, s), 60_000, 'capped')
  t.equal(refillDelay(fixed, poolPodUp(s)), 0)
  t.equal(poolPodUp(EMPTY_POOL), EMPTY_POOL, 'nothing to end: the same state')
})

t.test('[ISSUE-48] a top-up launches toward the target within the free launch slots, and retires one idle pod per pass above it', async (t) => {
  t.same(topUpPlan(fixed, EMPTY_POOL, { pool: 0, launching: 0, idle: 0 }, NOW), { launch: 2, retire: false }, 'an unbounded fill')
  t.same(topUpPlan(fixed, EMPTY_POOL, { pool: 2, launching: 0, idle: 2 }, NOW), { launch: 0, retire: false }, 'full')
  const burst = claimAll(growing, [NOW, NOW, NOW, NOW])
  t.same(topUpPlan(growing, burst, { pool: 0, launching: 1, idle: 0 }, NOW), { launch: 1, retire: false, lookAgainMs: 90_000 }, 'one slot of two free; look again when the demand ages out')
  const aged = NOW + 90_000
  t.same(topUpPlan(growing, burst, { pool: 4, launching: 0, idle: 3 }, aged), { launch: 0, retire: true, lookAgainMs: SHRINK_STEP_MS }, 'above the target: retire one, look again soon')
  t.same(topUpPlan(growing, burst, { pool: 2, launching: 0, idle: 2 }, aged), { launch: 0, retire: true }, 'the last one above the target')
  t.same(topUpPlan(growing, burst, { pool: 2, launching: 0, idle: 0 }, aged), { launch: 0, retire: false }, 'none idle: nothing to retire')
  const ageing = claimAll(growing, [NOW - 89_500])
  t.equal(topUpPlan(growing, ageing, { pool: 1, launching: 0, idle: 1 }, NOW).lookAgainMs, SHRINK_STEP_MS, 'looks again no sooner than the shrink step')
})
