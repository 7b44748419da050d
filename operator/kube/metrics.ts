// The controller runtime's metric hooks as Prometheus series under controller-runtime's
// names (controller_runtime_reconcile_total/_errors_total/_time_seconds, workqueue_depth,
// workqueue_retries_total, leader_election_master_status), so existing dashboards and
// alerts for kubebuilder operators work unchanged; and Nightjar's own pod-failure and
// warm-pool series (docs/observability.md). Both runtimes use this class.
import client from 'prom-client'
import type { OperatorMetrics, ReconcileResult } from '../runtime/metrics.ts'

/** what a pod runtime's warm pool reports: unclaimed pool pods now, and claims since start */
export interface WarmPoolStats {
  size: number
  hits: number
  misses: number
}

const RESULTS: ReconcileResult[] = ['success', 'error', 'requeue', 'requeue_after']

export class PromOperatorMetrics implements OperatorMetrics {
  readonly registry: client.Registry
  private readonly total: client.Counter<'controller' | 'result'>
  private readonly errors: client.Counter<'controller'>
  private readonly time: client.Histogram<'controller'>
  private readonly depth: client.Gauge<'name'>
  private readonly retries: client.Counter<'name'>
  private readonly leader: client.Gauge<'name'>
  private readonly podFailures: client.Counter<'reason'>
  private readonly seen = new Set<string>()
  private pool: () => WarmPoolStats | undefined = () => undefined

  constructor(registry = new client.Registry()) {
    this.registry = registry
    const registers = [registry]
    this.total = new client.Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', labelNames: ['controller', 'result'], registers })
    this.errors = new client.Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', labelNames: ['controller'], registers })
    this.time = new client.Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    })
    this.depth = new client.Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers })
    this.retries = new client.Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers })
    this.leader = new client.Gauge({ name: 'leader_election_master_status', help: 'Whether this replica currently holds the leader lease (1) or not (0)', labelNames: ['name'], registers })
    this.podFailures = new client.Counter({
      name: 'nightjar_browser_pod_failures_total',
      help: 'Sessions the operator failed, by specific cause (OOMKilled, PodLost, PodExited, StartTimeout, NodeLost, NodeDrained, a Kubernetes reason such as Evicted …)',
      labelNames: ['reason'],
      registers,
    })
    const pool = () => this.pool()
    new client.Gauge({
      name: 'nightjar_warm_pool_size',
      help: 'Unclaimed warm-pool browser pods, started or starting (the leader\'s view; absent on a follower)',
      registers,
      collect() {
        const p = pool()
        if (p) this.set(p.size)
        else this.reset()
      },
    })
    new client.Counter({
      name: 'nightjar_warm_pool_claims_total',
      help: 'Browser pods claimed for sessions: hit (a warm-pool pod) or miss (none free, a pod started cold)',
      labelNames: ['result'],
      registers,
      collect() {
        const p = pool()
        this.reset()
        if (!p) return
        this.inc({ result: 'hit' }, p.hits)
        this.inc({ result: 'miss' }, p.misses)
      },
    })
  }

  /** controller-runtime exports every series at 0 from the start, so rate() works from the first scrape */
  register(controller: string): void {
    if (this.seen.has(controller)) return
    this.seen.add(controller)
    for (const result of RESULTS) this.total.inc({ controller, result }, 0)
    this.errors.inc({ controller }, 0)
    this.retries.inc({ name: controller }, 0)
    this.depth.set({ name: controller }, 0)
  }

  reconcileTotal(controller: string, result: ReconcileResult): void {
    this.register(controller)
    this.total.inc({ controller, result })
  }
  reconcileError(controller: string): void {
    this.register(controller)
    this.errors.inc({ controller })
  }
  reconcileDuration(controller: string, seconds: number): void {
    this.time.observe({ controller }, seconds)
  }
  queueDepth(controller: string, depth: number): void {
    this.depth.set({ name: controller }, depth)
  }
  retry(controller: string): void {
    this.register(controller)
    this.retries.inc({ name: controller })
  }
  podFailed(reason: string): void {
    // a cause is a fixed word of the operator or of Kubernetes; anything else is `other`
    this.podFailures.inc({ reason: /^[A-Za-z][A-Za-z0-9_.]{0,47}$/.test(reason) ? reason : 'other' })
  }
  /** where the warm-pool series read from (the leader's pod runtime; none: not reported) */
  watchPool(source: () => WarmPoolStats | undefined): void {
    this.pool = source
  }
  setLeader(lease: string, leading: boolean): void {
    this.leader.set({ name: lease }, leading ? 1 : 0)
  }
}
