// Carries out the warm pool's decisions (warm-pool.ts) for a runtime: holds the policy's
// state and the one timer the policy asks for, the deferred refill; the runtime says what
// happened and does the refills. Design: docs/operator.md#the-warm-pool
import * as policy from './warm-pool.ts'

export class WarmPoolDriver {
  readonly settings: policy.WarmPoolSettings
  private state: policy.WarmPoolState = policy.EMPTY_POOL
  private readonly refill: () => void
  private deferred?: NodeJS.Timeout

  /** `refill` tops the pool up now (or after refillDelay(), as the runtime does it) */
  constructor(settings: policy.WarmPoolSettings, refill: () => void) {
    this.settings = settings
    this.refill = refill
  }

  stop(): void {
    if (this.deferred) clearTimeout(this.deferred)
  }

  get failures(): number {
    return this.state.failures
  }

  /** a start was served; `warmLeft`: an unclaimed pool pod is still up */
  claimed(claim: { warm: boolean; chromium: boolean; requestedAt?: number }, now: number, warmLeft: boolean): void {
    this.state = policy.claimed(this.settings, this.state, claim, now)
    this.apply(policy.refillAfterClaim(this.settings, this.state, { warmLeft }))
  }

  /** a warm claim's configure ended */
  configured(warmLeft: boolean): void {
    this.apply(policy.configured(this.settings, this.state, { warmLeft }))
  }

  podFailed(): void {
    this.state = policy.poolPodFailed(this.state)
  }

  podUp(): void {
    this.state = policy.poolPodUp(this.state)
  }

  refillDelay(): number {
    return policy.refillDelay(this.settings, this.state)
  }

  target(now: number): number {
    return policy.poolTarget(this.settings, this.state, now)
  }

  plan(counts: policy.PoolCounts, now: number): policy.TopUpPlan {
    return policy.topUpPlan(this.settings, this.state, counts, now)
  }

  private apply(step: { state: policy.WarmPoolState; decision: policy.RefillDecision }): void {
    this.state = step.state
    const { decision } = step
    if (decision.kind === 'refill') return this.refill()
    if (decision.kind === 'none') return
    this.deferred = setTimeout(() => {
      this.deferred = undefined
      this.apply(policy.deferredFired(this.state))
    }, decision.ms)
    this.deferred.unref()
  }
}
