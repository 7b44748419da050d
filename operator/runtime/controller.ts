// A controller: a work queue of object names drained by a bounded number of workers
// that call one reconciler. Sources (informers, pod events, daemon counts) only enqueue
// names; the reconciler reads the current state itself. That is the whole trick of
// level-triggering: a burst of events collapses into one reconcile of the latest state,
// and a missed event is repaired by the next one (or by resync).
import { isConflict, isNotReady } from '../../ports/errors.ts'
import type { Logger } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import { noopMetrics, type OperatorMetrics } from './metrics.ts'
import { WorkQueue, type WorkQueueOptions } from './workqueue.ts'

export interface ReconcileOutcome {
  /** reconcile this key again after this long even if nothing changes */
  requeueAfterMs?: number
}

export interface Reconciler {
  /** Throwing means "retry with backoff". Must be idempotent. */
  reconcile(name: string): Promise<ReconcileOutcome | void>
}

export interface ControllerOptions {
  name: string
  reconciler: Reconciler
  /** workers; the same key is never reconciled twice at once (default 4) */
  concurrency?: number
  queue?: Omit<WorkQueueOptions, 'onDepth'>
  metrics?: OperatorMetrics
  log?: Logger
}

export class Controller {
  readonly name: string
  private readonly queue: WorkQueue
  private readonly metrics: OperatorMetrics
  private readonly log: Logger
  private workers: Promise<void>[] = []
  private started = false

  private readonly opts: ControllerOptions
  constructor(opts: ControllerOptions) {
    this.opts = opts
    this.name = opts.name
    this.metrics = opts.metrics ?? noopMetrics
    this.log = opts.log ?? silentLogger
    this.queue = new WorkQueue({ ...opts.queue, onDepth: (d) => this.metrics.queueDepth(this.name, d) })
  }

  enqueue(name: string): void {
    this.queue.add(name)
  }

  /** keys waiting (not in flight) */
  get depth(): number {
    return this.queue.len()
  }

  start(): void {
    if (this.started) return
    this.started = true
    const n = Math.max(1, this.opts.concurrency ?? 4)
    for (let i = 0; i < n; i++) this.workers.push(this.work())
  }

  /** stop taking keys and wait for in-flight reconciles to finish */
  async stop(): Promise<void> {
    this.queue.shutDown()
    await Promise.all(this.workers)
    this.workers = []
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get()
      if (key === undefined) return
      await this.process(key)
      this.queue.done(key)
    }
  }

  private async process(key: string): Promise<void> {
    const started = process.hrtime.bigint()
    try {
      const outcome = await this.opts.reconciler.reconcile(key)
      this.queue.forget(key)
      if (outcome?.requeueAfterMs !== undefined) {
        this.queue.addAfter(key, outcome.requeueAfterMs)
        this.metrics.reconcileTotal(this.name, 'requeue_after')
      } else this.metrics.reconcileTotal(this.name, 'success')
    } catch (err) {
      const delay = this.queue.addRateLimited(key)
      this.metrics.retry(this.name)
      if (isConflict(err)) {
        // a stale read lost an optimistic-concurrency race: routine, retry on fresh state
        this.metrics.reconcileTotal(this.name, 'requeue')
        this.log.debug({ controller: this.name, key, delayMs: delay }, 'conflict; requeued')
      } else if (isNotReady(err)) {
        // an input on its way (see NotReadyError): routine too, retried on the same backoff
        this.metrics.reconcileTotal(this.name, 'requeue')
        this.log.debug({ controller: this.name, key, delayMs: delay, reason: err.message }, 'waiting for an input; requeued')
      } else {
        this.metrics.reconcileTotal(this.name, 'error')
        this.metrics.reconcileError(this.name)
        this.log.warn({ controller: this.name, key, delayMs: delay, err: errorText(err) }, 'reconcile failed; retrying')
      }
    } finally {
      this.metrics.reconcileDuration(this.name, Number(process.hrtime.bigint() - started) / 1e9)
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err)
}
