// The warm pool on Kubernetes: started, unclaimed chromium pods, each claimed by one merge
// patch with a resourceVersion precondition (of two racing claimers exactly one wins).
// Its policy — size, refill after a claim, backoff — is operator/runtime/warm-pool.ts;
// this room creates, claims, times out and replaces the pods. Design: docs/operator.md#pods-on-kubernetes
import { randomBytes } from 'node:crypto'
import { LABELS } from '../../crds/types.ts'
import { isConflict, isNotFound } from '../../ports/errors.ts'
import type { EventRecorder, EventSubject, OwnerReference, PodLaunchConfig } from '../../ports/ports.ts'
import { warmPoolSettings } from '../runtime/warm-pool.ts'
import { WarmPoolDriver } from '../runtime/warm-pool-driver.ts'
import type { LaunchAnnotation } from './pod-handover.ts'
import { POD_ANNOTATIONS, POD_LABELS, browserPodManifest, podTemplateHash, type BrowserPodOptions, type PodResource } from './pod-spec.ts'
import { CLAIMED_AT, isUp, podFailure, sessionOf, startDeadline } from './pod-state.ts'
import { base32 } from './pod-tracker.ts'
import { deleteUnclaimed, dropTimer, errText, markFailed, type PodRoomDeps } from './pod-writes.ts'
import { newToken, tokenSecretName, type TokenSecrets } from './token-secrets.ts'

export interface PodPoolOptions {
  namespace: string
  pod: BrowserPodOptions
  size: number
  refillDelayMs?: number
  startTimeoutMs: number
  secrets: TokenSecrets
  events?: EventRecorder
  poolEventSubject?: EventSubject
  /** not on a node that looks lost or is being drained (the node guard) */
  nodeUsable(pod: PodResource): boolean
  avoidNodes(): string[] | undefined
  /** where a new pod's token is kept in memory for its configure */
  tokens: { rememberToken(podName: string, token: string): void; forgetToken(podName: string): void }
}

export class PodPool {
  private readonly deps: PodRoomDeps
  private readonly opts: PodPoolOptions
  private readonly policy: WarmPoolDriver
  /** unclaimed pool pods, from the informer */
  private readonly names = new Set<string>()
  /** pool pods created but not yet seen by the informer */
  private readonly creating = new Set<string>()
  /** pool pod name → its start deadline: a pool pod that never comes up is replaced */
  private readonly deadlines = new Map<string, NodeJS.Timeout>()
  /** warm-pool claims since start (metrics) */
  private readonly claims = { hits: 0, misses: 0 }
  private refillTimer?: NodeJS.Timeout
  private toppingUp = false
  private topUpAgain = false
  private started = false
  private templateHash: string | undefined

  constructor(deps: PodRoomDeps, opts: PodPoolOptions) {
    this.deps = deps
    this.opts = opts
    // a fixed pool (max = size), its launches one after another
    const settings = warmPoolSettings({ size: opts.size, refillDelayMs: opts.refillDelayMs, backoff: { initialMs: 1000, maxMs: 60_000, jitter: 0.2 } })
    this.policy = new WarmPoolDriver(settings, () => this.refill())
  }

  start(): void {
    this.started = true
    this.refill()
  }

  stop(): void {
    if (this.refillTimer) clearTimeout(this.refillTimer)
    this.policy.stop()
    for (const t of this.deadlines.values()) clearTimeout(t)
    this.deadlines.clear()
  }

  /** the warm pool for metrics: unclaimed current pool pods (up or starting), and claims since this runtime started */
  stats(): { size: number; hits: number; misses: number } {
    let size = 0
    for (const n of this.names) {
      const p = this.deps.informer.get(n)
      if (p && p.metadata.labels?.[POD_LABELS.pool] === 'warm' && !podFailure(p) && this.isCurrent(p)) size++
    }
    return { size, ...this.claims }
  }

  /** could a pool pod have been claimed for a session without the cache showing it yet? */
  mayHoldClaims(): boolean {
    return this.opts.size > 0 || this.names.size > 0
  }

  /** a claimed pool pod for this chromium session, preferring one that is up; throws when a claim's outcome is unknown */
  async claim(config: PodLaunchConfig, owner: OwnerReference, launch: LaunchAnnotation): Promise<PodResource | undefined> {
    const candidates = [...this.names]
      .map((n) => this.deps.informer.get(n))
      .filter((p): p is PodResource => !!p && p.metadata.labels?.[POD_LABELS.pool] === 'warm' && p.metadata.labels?.[POD_LABELS.browserKind] === config.browserKind && this.countsInPool(p))
      .sort((a, b) => Number(isUp(b)) - Number(isUp(a)))
    let pod: PodResource | undefined
    for (const candidate of candidates) if ((pod = await this.claimOne(candidate, config, owner, launch))) break
    // the pool serves chromium: only its claims are hits or misses
    if (config.browserKind === 'chromium') this.claims[pod ? 'hits' : 'misses']++
    return pod
  }

  private async claimOne(candidate: PodResource, config: PodLaunchConfig, owner: OwnerReference, launch: LaunchAnnotation): Promise<PodResource | undefined> {
    const name = candidate.metadata.name
    try {
      const pod = await this.deps.pods.patch(
        name,
        {
          metadata: {
            labels: { ...config.labels, [POD_LABELS.pool]: null },
            annotations: { [POD_ANNOTATIONS.launch]: JSON.stringify(launch), [CLAIMED_AT]: this.deps.now().toISOString() },
            ownerReferences: [owner],
          },
        },
        // the precondition that makes a claim exclusive
        { resourceVersion: candidate.metadata.resourceVersion },
      )
      this.names.delete(name)
      const secretName = candidate.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(name)
      // not awaited: the start does not wait on a write it does not need, and the Secret is
      // still owned by its pod until this lands, so it is collected with it either way
      void this.opts.secrets
        .setOwner(secretName, owner, { [LABELS.session]: config.sessionId })
        .catch((err) => this.deps.log.warn({ pod: name, err: errText(err) }, 'could not hand the token secret to the session'))
      return pod
    } catch (err) {
      // otherwise the patch may have landed (a timeout, a lost connection): the caller looks with a list next time
      if (!isConflict(err) && !isNotFound(err)) throw err
      this.deps.log.debug({ pod: name, session: config.sessionId }, 'pool pod taken or gone; trying the next')
      return undefined
    }
  }

  /** a start was served (`warm`: by a pool pod already up) */
  claimed(config: PodLaunchConfig, warm: boolean): void {
    const chromium = config.browserKind === 'chromium'
    this.policy.claimed({ warm, chromium, requestedAt: config.requestedAt }, this.deps.now().getTime(), this.warmLeft())
  }

  /** a warm claim's configure ended */
  warmConfigured(): void {
    this.policy.configured(this.warmLeft())
  }

  private warmLeft(): boolean {
    return [...this.names].some((n) => {
      const p = this.deps.informer.get(n)
      return this.countsInPool(p) && isUp(p)
    })
  }

  /** keep the pool's size of unclaimed chromium pods; back off while pool pods keep failing */
  private refill(): void {
    if (!this.started || this.deps.closed() || this.opts.size <= 0 || this.refillTimer) return
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined
      void this.topUp()
    }, this.policy.refillDelay())
  }

  private async topUp(): Promise<void> {
    if (this.toppingUp) {
      this.topUpAgain = true
      return
    }
    this.toppingUp = true
    try {
      do {
        this.topUpAgain = false
        const healthy = [...this.names].filter((n) => this.countsInPool(this.deps.informer.get(n))).length
        // a fixed pool never retires pods, and launches one at a time
        const { launch } = this.policy.plan({ pool: healthy + this.creating.size, launching: 0, idle: 0 }, this.deps.now().getTime())
        for (let i = 0; i < launch && !this.deps.closed(); i++) await this.createPoolPod()
      } while (this.topUpAgain && !this.deps.closed())
    } catch (err) {
      this.policy.podFailed()
      this.deps.log.warn({ err: errText(err), failures: this.policy.failures }, 'could not create a pool pod; retrying with backoff')
      this.poolEvent('PoolFillFailed', `could not create a warm-pool browser pod (${errText(err)}); retrying with backoff`)
      this.toppingUp = false
      this.refill()
      return
    }
    this.toppingUp = false
  }

  private async createPoolPod(): Promise<void> {
    const name = `nightjar-browser-${base32(randomBytes(10)).slice(0, 10)}`
    const secretName = tokenSecretName(name)
    const { secrets } = this.opts
    this.creating.add(name)
    try {
      const token = await secrets.create({ name: secretName, podName: name, token: newToken() })
      this.opts.tokens.rememberToken(name, token)
      const manifest = browserPodManifest({ name, namespace: this.opts.namespace, browserKind: 'chromium', tokenSecretName: secretName, pool: true, avoidNodes: this.opts.avoidNodes() }, this.opts.pod)
      let pod: PodResource
      try {
        pod = await this.deps.pods.create({ metadata: stripNamespace(manifest.metadata), spec: manifest.spec })
      } catch (err) {
        // the pod never existed, so nothing owns this Secret; a failed delete is logged (its token opens nothing)
        await secrets.delete(secretName).catch((e) => this.deps.log.warn({ secret: secretName, err: errText(e) }, 'could not delete the token secret of a pod that was never created'))
        this.opts.tokens.forgetToken(name)
        throw err
      }
      // from now on the Secret goes wherever the pod goes
      // (a crash right before this leaves an ownerless Secret whose token opens nothing;
      // sweeping for those would need list/watch on Secrets, which the operator does not get)
      await secrets.setOwner(secretName, { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid }).catch((err) => {
        this.deps.log.warn({ pod: name, err: errText(err) }, 'could not attach the token secret to its pod')
      })
      this.deps.log.debug({ pod: name }, 'pool pod created')
    } catch (err) {
      this.creating.delete(name)
      throw err
    }
  }

  /** a pool pod that is (or will be) claimable: not failed, made under these settings, on a usable node */
  private countsInPool(p: PodResource | undefined): p is PodResource {
    return !!p && !podFailure(p) && this.isCurrent(p) && this.opts.nodeUsable(p)
  }

  /** made from the settings this operator runs with (podTemplateHash) */
  private isCurrent(pod: PodResource): boolean {
    this.templateHash ??= podTemplateHash(this.opts.pod)
    return pod.metadata.annotations?.[POD_ANNOTATIONS.template] === this.templateHash
  }

  poolEvent(reason: string, message: string): void {
    if (this.opts.events && this.opts.poolEventSubject) this.opts.events.record(this.opts.poolEventSubject, 'Warning', reason, message)
  }

  /** the informer saw a pod now claimed by a session: no longer the pool's */
  left(name: string): void {
    this.creating.delete(name)
    this.names.delete(name)
    dropTimer(this.deadlines, name)
  }

  /** the informer saw a pod with no session */
  tracked(pod: PodResource): void {
    const name = pod.metadata.name
    this.creating.delete(name)
    if (pod.metadata.labels?.[POD_LABELS.pool] !== 'warm') return
    this.names.add(name)
    const failure = podFailure(pod)
    if (failure && !pod.metadata.deletionTimestamp) {
      // a pool pod that died before anyone claimed it: replace it, with backoff if it keeps happening
      this.policy.podFailed()
      this.deps.log.warn({ pod: name, reason: failure.reason }, 'pool pod failed; replacing')
      this.poolEvent('PoolPodFailed', `warm-pool browser pod ${name} failed: ${failure.message}; replacing it`)
      // the informer sees the pod again if the delete failed, and this path retries it
      void deleteUnclaimed(this.deps, pod, 'a failed pool pod')
      this.refill()
    } else if (!this.isCurrent(pod) && !pod.metadata.deletionTimestamp) {
      // made under other settings (an upgrade changed them): a session must not get it
      this.deps.log.info({ pod: name }, 'pool pod made under earlier settings; replacing')
      void deleteUnclaimed(this.deps, pod, 'an outdated pool pod')
      this.refill()
    } else if (isUp(pod)) {
      this.policy.podUp()
      dropTimer(this.deadlines, name)
    } else if (!failure) this.armDeadline(pod)
  }

  /** the informer saw a pod deleted */
  untracked(name: string): void {
    this.creating.delete(name)
    dropTimer(this.deadlines, name)
    if (this.names.delete(name)) this.refill()
  }

  /**
   * A pool pod not up by its start deadline (browserPods.startTimeoutSeconds) is marked
   * StartTimeout, and so replaced like any pool pod that failed. A session's pod has its
   * own deadline (the tracker's); a pool pod's is this one, not a kubelet probe.
   */
  private armDeadline(pod: PodResource): void {
    const name = pod.metadata.name
    const { startTimeoutMs } = this.opts
    if (this.deadlines.has(name) || this.deps.closed()) return
    const delay = Math.max(0, startDeadline(pod, startTimeoutMs) - this.deps.now().getTime()) + 50
    const timer = setTimeout(() => {
      this.deadlines.delete(name)
      const p = this.deps.informer.get(name)
      if (!p || sessionOf(p) || isUp(p) || podFailure(p)) return
      void markFailed(this.deps, p, 'StartTimeout', `warm-pool browser pod ${name} was not ready within ${Math.round(startTimeoutMs / 1000)} s`)
    }, delay)
    timer.unref()
    this.deadlines.set(name, timer)
  }
}

export function stripNamespace(meta: PodResource['metadata']) {
  const { name, labels, annotations, ownerReferences } = meta
  return { name, labels, annotations, ...(ownerReferences ? { ownerReferences } : {}) }
}
