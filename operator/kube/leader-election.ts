// Leader election on a coordination.k8s.io/v1 Lease with client-go's algorithm: full
// replaces carrying the read's resourceVersion, so two candidates never both lead; expiry
// judged on the candidate's own clock (another machine's may be skewed); a leader that
// cannot renew exits to restart as a clean follower. Design: docs/operator.md#leader-election
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node'
import { isConflict, isNotFound } from '../../ports/errors.ts'
import type { Logger } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import { withTimeout, type CallOptions } from './api-ops.ts'
import { toResourceError } from './errors.ts'

export interface LeaderElectorOptions {
  kc: KubeConfig
  namespace: string
  /** the Lease's name (the chart's RBAC pins exactly this name) */
  name: string
  /** this candidate, unique per replica (the pod name) */
  identity: string
  /** default 15 s */
  leaseDurationMs?: number
  /** default 10 s; must be below leaseDurationMs */
  renewDeadlineMs?: number
  /** default 2 s */
  retryPeriodMs?: number
  now?: () => number
  random?: () => number
  log?: Logger
  onStartedLeading: () => void | Promise<void>
  onStoppedLeading: () => void
  onNewLeader?: (identity: string) => void
}

interface LeaseRecord {
  holderIdentity?: string
  leaseDurationSeconds?: number
  acquireTime?: unknown
  renewTime?: unknown
  leaseTransitions?: number
}

export class LeaderElector {
  private readonly api: CoordinationV1Api
  private readonly now: () => Date
  private readonly random: () => number
  private readonly log: Logger
  private readonly leaseDurationMs: number
  private readonly renewDeadlineMs: number
  private readonly retryPeriodMs: number
  private observedRecord = ''
  private observedTime = 0
  private observedHolder = ''
  private lastRenew = 0
  private leading = false
  private running = false
  private timer?: NodeJS.Timeout
  private inFlight?: Promise<void>
  /** a lease request may take at most half the renew deadline, so a hung one still leaves time to step down */
  private readonly call: CallOptions

  private readonly opts: LeaderElectorOptions
  constructor(opts: LeaderElectorOptions) {
    this.opts = opts
    this.api = opts.kc.makeApiClient(CoordinationV1Api)
    const clock = opts.now ?? Date.now
    this.now = () => new Date(clock())
    this.random = opts.random ?? Math.random
    this.log = opts.log ?? silentLogger
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000
    if (this.renewDeadlineMs >= this.leaseDurationMs) throw new Error('renewDeadline must be shorter than leaseDuration')
    this.call = withTimeout(Math.max(500, Math.floor(this.renewDeadlineMs / 2)))
  }

  get isLeader(): boolean {
    return this.leading
  }

  /** the holder last seen on the lease ('' when free) */
  get leader(): string {
    return this.observedHolder
  }

  /** starts campaigning; returns at once */
  start(): void {
    if (this.running) return
    this.running = true
    this.schedule(0)
  }

  /**
   * Stop campaigning. With release (graceful shutdown), a leader hands the lease back so
   * a follower takes over at its next retry instead of waiting out the lease.
   */
  async stop({ release = true }: { release?: boolean } = {}): Promise<void> {
    this.running = false
    if (this.timer) clearTimeout(this.timer)
    await this.inFlight?.catch(() => {}) // only waiting it out: the renew reports its own failure
    const wasLeading = this.leading
    this.leading = false
    if (wasLeading && release) await this.release().catch((err) => this.log.warn({ err: String(err) }, 'could not release the leader lease'))
    if (wasLeading) this.opts.onStoppedLeading()
  }

  private schedule(delayMs: number): void {
    if (!this.running) return
    this.timer = setTimeout(() => {
      this.inFlight = this.tick().finally(() => (this.inFlight = undefined))
    }, delayMs)
  }

  private async tick(): Promise<void> {
    let ok = false
    try {
      ok = await this.tryAcquireOrRenew()
    } catch (err) {
      this.log.warn({ lease: this.opts.name, err: String(err) }, 'leader election: lease request failed')
    }
    if (!this.running) return
    const t = this.now().getTime()
    if (ok) {
      this.lastRenew = t
      if (!this.leading) {
        this.leading = true
        this.log.info({ lease: this.opts.name, identity: this.opts.identity }, 'became leader')
        // Not awaited: starting the controllers (listing everything) may take longer than
        // the renew deadline, and the lease must keep being renewed meanwhile.
        void Promise.resolve()
          .then(() => this.opts.onStartedLeading())
          .catch(async (err) => {
            if (!this.leading) return
            this.log.error({ err: String(err) }, 'onStartedLeading failed; giving up the lease')
            this.running = false
            this.leading = false
            if (this.timer) clearTimeout(this.timer)
            await this.inFlight?.catch(() => {}) // only waiting it out: the renew reports its own failure
            await this.release().catch(() => {}) // the lease expires on its own (leaseDuration); a failed release only delays the next leader
            this.opts.onStoppedLeading()
          })
      }
    } else if (this.leading && t - this.lastRenew >= this.renewDeadlineMs) {
      this.leading = false
      this.running = false
      this.log.warn({ lease: this.opts.name, identity: this.opts.identity }, 'lost the leader lease (could not renew in time)')
      this.opts.onStoppedLeading()
      return
    }
    // followers retry with jitter (client-go's JitterFactor 1.2), so candidates spread out
    this.schedule(this.leading ? this.retryPeriodMs : this.retryPeriodMs * (1 + 0.2 * this.random()))
  }

  /** one round of client-go's tryAcquireOrRenew; true when we hold the lease afterwards */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now()
    const me = this.opts.identity
    let lease: V1Lease
    try {
      lease = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace }, this.call)
    } catch (err) {
      const mapped = toResourceError(err, 'Lease', this.opts.name)
      if (!isNotFound(mapped)) throw mapped
      return this.create(now)
    }
    const record = (lease.spec ?? {}) as LeaseRecord
    const key = JSON.stringify([record.holderIdentity, record.renewTime, record.acquireTime, record.leaseTransitions, record.leaseDurationSeconds])
    if (key !== this.observedRecord) {
      this.observedRecord = key
      this.observedTime = now.getTime()
      this.setHolder(record.holderIdentity ?? '')
    }
    const holder = record.holderIdentity ?? ''
    const durationMs = (record.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000)) * 1000
    if (holder && holder !== me && this.observedTime + durationMs > now.getTime()) return false

    const spec: LeaseRecord = {
      holderIdentity: me,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: holder === me && record.acquireTime ? record.acquireTime : new V1MicroTime(now.getTime()),
      renewTime: new V1MicroTime(now.getTime()),
      leaseTransitions: holder === me ? (record.leaseTransitions ?? 0) : (record.leaseTransitions ?? 0) + 1,
    }
    try {
      const updated = await this.api.replaceNamespacedLease({
        name: this.opts.name,
        namespace: this.opts.namespace,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...lease.metadata, name: this.opts.name, namespace: this.opts.namespace }, spec: spec as V1Lease['spec'] },
      }, this.call)
      this.observe(updated, now)
      return true
    } catch (err) {
      const mapped = toResourceError(err, 'Lease', this.opts.name)
      if (isConflict(mapped)) return false // somebody else wrote first
      throw mapped
    }
  }

  private async create(now: Date): Promise<boolean> {
    try {
      const created = await this.api.createNamespacedLease({
        namespace: this.opts.namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.opts.name, namespace: this.opts.namespace, labels: { 'app.kubernetes.io/name': 'nightjar', 'app.kubernetes.io/component': 'operator' } },
          spec: {
            holderIdentity: this.opts.identity,
            leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
            acquireTime: new V1MicroTime(now.getTime()),
            renewTime: new V1MicroTime(now.getTime()),
            leaseTransitions: 0,
          },
        },
      }, this.call)
      this.observe(created, now)
      return true
    } catch (err) {
      const mapped = toResourceError(err, 'Lease', this.opts.name)
      if (isConflict(mapped)) return false // another candidate created it first
      throw mapped
    }
  }

  private observe(lease: V1Lease, now: Date): void {
    const r = (lease.spec ?? {}) as LeaseRecord
    this.observedRecord = JSON.stringify([r.holderIdentity, r.renewTime, r.acquireTime, r.leaseTransitions, r.leaseDurationSeconds])
    this.observedTime = now.getTime()
    this.setHolder(r.holderIdentity ?? '')
  }

  private setHolder(holder: string): void {
    if (holder === this.observedHolder) return
    this.observedHolder = holder
    if (holder) this.opts.onNewLeader?.(holder)
  }

  /** hand the lease back: empty holder, 1 s duration (client-go's ReleaseOnCancel) */
  private async release(): Promise<void> {
    const lease = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace }, this.call)
    const record = (lease.spec ?? {}) as LeaseRecord
    if (record.holderIdentity !== this.opts.identity) return
    const now = this.now()
    await this.api.replaceNamespacedLease({
      name: this.opts.name,
      namespace: this.opts.namespace,
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { ...lease.metadata, name: this.opts.name, namespace: this.opts.namespace },
        spec: { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: new V1MicroTime(now.getTime()), renewTime: new V1MicroTime(now.getTime()), leaseTransitions: record.leaseTransitions ?? 0 },
      },
    }, this.call)
    this.log.info({ lease: this.opts.name }, 'released the leader lease')
  }
}
