// Metrics hooks of the controller runtime: a small interface rather than prom-client, so
// the runtime stays dependency-free and tests can record. operator/kube/metrics.ts maps
// them onto controller-runtime's familiar series, and podFailed onto
// nightjar_browser_pod_failures_total (docs/observability.md).

export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after'

export interface OperatorMetrics {
  reconcileTotal(controller: string, result: ReconcileResult): void
  reconcileError(controller: string): void
  reconcileDuration(controller: string, seconds: number): void
  queueDepth(controller: string, depth: number): void
  retry(controller: string): void
  /** a session failed because of its browser pod; `reason` is the specific cause (OOMKilled, PodLost, StartTimeout, a Kubernetes reason …) */
  podFailed(reason: string): void
}

export const noopMetrics: OperatorMetrics = {
  reconcileTotal() {},
  reconcileError() {},
  reconcileDuration() {},
  queueDepth() {},
  retry() {},
  podFailed() {},
}

/** In-memory metrics, for tests and for `nightjar operator status`-style introspection. */
export class RecordingMetrics implements OperatorMetrics {
  readonly totals = new Map<string, number>() // `${controller}/${result}`
  readonly errors = new Map<string, number>()
  readonly retries = new Map<string, number>()
  readonly depth = new Map<string, number>()
  readonly durations: { controller: string; seconds: number }[] = []
  readonly podFailures = new Map<string, number>()

  reconcileTotal(controller: string, result: ReconcileResult): void {
    const k = `${controller}/${result}`
    this.totals.set(k, (this.totals.get(k) ?? 0) + 1)
  }
  reconcileError(controller: string): void {
    this.errors.set(controller, (this.errors.get(controller) ?? 0) + 1)
  }
  reconcileDuration(controller: string, seconds: number): void {
    this.durations.push({ controller, seconds })
    if (this.durations.length > 1000) this.durations.shift()
  }
  queueDepth(controller: string, depth: number): void {
    this.depth.set(controller, depth)
  }
  retry(controller: string): void {
    this.retries.set(controller, (this.retries.get(controller) ?? 0) + 1)
  }
  podFailed(reason: string): void {
    this.podFailures.set(reason, (this.podFailures.get(reason) ?? 0) + 1)
  }
  /** reconciles of a controller, all results */
  count(controller: string): number {
    let n = 0
    for (const [k, v] of this.totals) if (k.startsWith(controller + '/')) n += v
    return n
  }
}
