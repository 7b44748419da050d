// PodRuntime over real Pods: one single-use pod per session, a warm pool claimed by one
// merge patch with a resourceVersion precondition (of two racing claimers exactly one
// wins), and the configure handshake with each pod's API. Reads come from an
// informer, with a fresh read where a stale cache could make a new pod look gone.
// Design: docs/operator.md#pods-on-kubernetes
import { createHash, randomBytes } from 'node:crypto'
import type { KubeConfig } from '@kubernetes/client-node'
import { EGRESS_MODES, LABELS, type EgressMode, type Viewport } from '../../crds/types.ts'
import { isConflict, isNotFound } from '../../ports/errors.ts'
import type { EventRecorder, EventSubject, Logger, OwnerReference, PodLaunchConfig, PodObservation, PodPhase, PodRuntime, StorageState } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import { backoffDelay, type BackoffOptions } from '../../watch/backoff.ts'
import { configurePod, type ConfigureInput } from '../pod-client.ts'
import { inContext, tracedContext, type Context } from '../../telemetry/tracing.ts'
import { Informer } from '../../watch/informer.ts'
import { podOps, type ResourceOps } from './api-ops.ts'
import { toResourceError } from './errors.ts'
import { answers, type NodeHealth } from './node-health.ts'
import { kubeName } from './names.ts'
import {
  BROWSER_POD_SELECTOR,
  POD_ANNOTATIONS,
  POD_LABELS,
  browserPodManifest,
  podTemplateHash,
  type BrowserPodOptions,
  type PodResource,
} from './pod-spec.ts'
import { CLAIMED_AT, endpointOfPod, isConfigured, isUp, podFailure, podObservation, sessionOf, startDeadline } from './pod-state.ts'
import { KubeResourceClient } from './resource-client.ts'
import { TokenSecrets, newToken, tokenSecretName } from './token-secrets.ts'

export interface KubePodRuntimeOptions {
  kc: KubeConfig
  /** where browser pods and their token Secrets live (the sessions namespace) */
  namespace: string
  pod: BrowserPodOptions
  /** started, unclaimed chromium pods kept ready (default 2; 0 = start on demand) */
  poolSize?: number
  /**
   * After a claim that leaves a warm pod in the pool, the refill waits this long (default
   * 1 s, as the embedded runtime): a new pod's sandbox, network and Chromium launch take
   * the node's cores for a second or more, while the session just claimed is in its first,
   * latency-critical steps. A claim that empties the pool refills as soon as the warm
   * claims in flight are configured.
   */
  poolRefillDelayMs?: number
  configureTimeoutMs?: number
  /** a session pod not Ready this long after creation/claim fails with StartTimeout (default 5 min) */
  startTimeoutMs?: number
  /** how long delete() waits for a pod object to disappear (default 60 s) */
  deleteTimeoutMs?: number
  watchTimeoutSeconds?: number
  informerBackoff?: BackoffOptions
  log?: Logger
  now?: () => number
  /** Warning events when the warm pool cannot fill, recorded on poolEventSubject (the operator's own pod) */
  events?: EventRecorder
  poolEventSubject?: EventSubject
  /** node health (node-health.ts): lost nodes fail their sessions with NodeLost, drained ones with NodeDrained */
  nodes?: NodeHealth
  nodeChecks?: NodeCheckOptions
}

export interface NodeCheckOptions {
  /** how often pods on suspect and cordoned nodes are looked at (default 2 s) */
  intervalMs?: number
  /** a pod on a suspect node whose API has not answered this long is lost (default 6 s) */
  unreachableMs?: number
  /** one health probe's deadline (default 2 s) */
  probeTimeoutMs?: number
  /** a live session on a cordoned node runs this long after the cordon, then ends with NodeDrained (default 600 s) */
  drainGraceMs?: number
}

/** pod failure reasons node trouble gives (the reconciler keeps them as the session's failureReason) */
export const NODE_LOST = 'NodeLost'
export const NODE_DRAINED = 'NodeDrained'

/** the non-secret part of the launch config, kept on the pod as an annotation */
interface LaunchAnnotation {
  sessionId: string
  egress: { mode: EgressMode; declaredHosts: string[] }
  viewport?: Viewport
  /** the launch carried an auth-state (held in memory only) */
  storageState?: boolean
}

const CONFIGURE_ATTEMPTS = 4
/** the api-server having no pod for a session stands for this long (observe() then ensure() in one reconcile) */
const MISS_REUSE_MS = 1000

export class KubePodRuntime implements PodRuntime {
  readonly informer: Informer<PodResource>
  private readonly pods: KubeResourceClient<PodResource>
  private readonly secrets: TokenSecrets
  private readonly log: Logger
  private readonly now: () => Date
  private readonly poolSize: number
  private readonly startTimeoutMs: number
  private readonly deleteTimeoutMs: number
  private readonly configureTimeoutMs: number
  /** session id → pod name, from the informer */
  private readonly bySession = new Map<string, string>()
  /** warm-pool claims since start (metrics) */
  private readonly poolClaims = { hits: 0, misses: 0 }
  /** unclaimed pool pods, from the informer */
  private readonly poolNames = new Set<string>()
  /** pool pods created but not yet seen by the informer */
  private readonly creating = new Set<string>()
  /** pod name → pod token; in memory only */
  private readonly tokens = new Map<string, string>()
  /** session id → auth-state awaiting configure; in memory only */
  private readonly storageStates = new Map<string, StorageState>()
  /** the start's trace, per session, for a cold pod configured later from a watch event (only while tracing) */
  private readonly startTraces = new Map<string, Context>()
  private readonly configuring = new Map<string, Promise<PodResource | undefined>>()
  private readonly lastPhase = new Map<string, PodPhase>()
  private readonly deadlines = new Map<string, NodeJS.Timeout>()
  /** pool pod name → its start deadline: a pool pod that never comes up is replaced */
  private readonly poolDeadlines = new Map<string, NodeJS.Timeout>()
  private readonly goneWaiters = new Map<string, Set<() => void>>()
  private readonly listeners = new Set<(sessionId: string) => void>()
  /** session id → when the api-server had no pod for it (findPod) */
  private readonly freshMisses = new Map<string, number>()
  /** sessions whose pool claim failed without a known outcome (a claim patch may have landed) */
  private readonly uncertainClaims = new Set<string>()
  /** pod name → when its pod API first failed to answer while its node was suspect */
  private readonly unreachableSince = new Map<string, number>()
  /** pods found lost with their node: deleted with no grace (the kubelet would never confirm) */
  private readonly lostPods = new Set<string>()
  /** warm pods on cordoned nodes already sent away */
  private readonly drainedPool = new Set<string>()
  private readonly podApi: ResourceOps
  private nodeTimer?: NodeJS.Timeout
  private checkingNodes = false
  private poolFailures = 0
  private refillTimer?: NodeJS.Timeout
  private deferredRefill?: NodeJS.Timeout
  /** warm claims whose configure is in flight (an empty pool waits for them before refilling) */
  private warmConfiguring = 0
  private toppingUp = false
  private topUpAgain = false
  private started = false
  private closed = false

  private readonly opts: KubePodRuntimeOptions
  constructor(opts: KubePodRuntimeOptions) {
    this.opts = opts
    this.log = opts.log ?? silentLogger
    const clock = opts.now ?? Date.now
    this.now = () => new Date(clock())
    this.poolSize = opts.poolSize ?? 2
    this.startTimeoutMs = opts.startTimeoutMs ?? 5 * 60_000
    this.deleteTimeoutMs = opts.deleteTimeoutMs ?? 60_000
    this.configureTimeoutMs = opts.configureTimeoutMs ?? 30_000
    this.podApi = podOps(opts.kc, opts.namespace)
    this.pods = new KubeResourceClient<PodResource>({ kc: opts.kc, ops: this.podApi, watchTimeoutSeconds: opts.watchTimeoutSeconds })
    this.secrets = new TokenSecrets(opts.kc, opts.namespace)
    this.informer = new Informer(this.pods, { labelSelector: BROWSER_POD_SELECTOR, backoff: opts.informerBackoff, log: this.log, resyncMs: 0 })
    this.informer.addHandler({
      onAdd: (p) => this.track(p),
      onUpdate: (_old, p) => this.track(p),
      onDelete: (p) => this.untrack(p),
    })
  }

  /** start watching pods and fill the pool. Call once this replica leads. */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    if (this.opts.nodes) {
      await this.opts.nodes.start()
      // a cordon is an event; a lease going stale is not: both are looked at on a timer too
      this.opts.nodes.onChange(() => void this.checkNodes())
      this.nodeTimer = setInterval(() => void this.checkNodes(), this.opts.nodeChecks?.intervalMs ?? 2000)
      this.nodeTimer.unref()
    }
    await this.informer.start()
    this.refillPool()
  }

  /** stop watching and timers; pods stay (the next leader adopts them) */
  stop(): void {
    this.closed = true
    this.informer.stop()
    this.opts.nodes?.stop()
    if (this.nodeTimer) clearInterval(this.nodeTimer)
    if (this.refillTimer) clearTimeout(this.refillTimer)
    if (this.deferredRefill) clearTimeout(this.deferredRefill)
    for (const t of this.deadlines.values()) clearTimeout(t)
    this.deadlines.clear()
    for (const t of this.poolDeadlines.values()) clearTimeout(t)
    this.poolDeadlines.clear()
    this.listeners.clear()
    for (const set of this.goneWaiters.values()) for (const w of set) w()
    this.goneWaiters.clear()
  }

  // --- PodRuntime ------------------------------------------------------------------------

  async ensure(config: PodLaunchConfig, sessionOwner: OwnerReference): Promise<PodObservation> {
    if (this.closed) throw new Error('pod runtime is stopped')
    // the reconciler names its owner by session id; the garbage collector needs the object
    // name (names.ts) — with the id it would find no owner and delete the pod at once
    const owner = { ...sessionOwner, name: kubeName(sessionOwner.name) }
    const sid = config.sessionId
    const existing = await this.findPod(sid)
    // a miss is only ever reused from observe() into this ensure()
    this.freshMisses.delete(sid)
    if (existing) return this.observation(sid, existing)

    if (config.storageState) this.storageStates.set(sid, config.storageState)
    const traced = tracedContext()
    if (traced) this.startTraces.set(sid, traced)
    const launch: LaunchAnnotation = {
      sessionId: sid,
      egress: { mode: config.egress.mode, declaredHosts: [...config.egress.declaredHosts] },
      ...(config.viewport ? { viewport: { ...config.viewport } } : {}),
      ...(config.storageState ? { storageState: true } : {}),
    }
    const pooled = config.browserKind === 'chromium' ? await this.claimFromPool(config, owner, launch) : undefined
    // the pool serves chromium: only its claims are hits or misses
    if (config.browserKind === 'chromium') this.poolClaims[pooled ? 'hits' : 'misses']++
    let pod = pooled ?? (await this.createSessionPod(config, owner, launch))
    this.bySession.set(sid, pod.metadata.name)
    const warm = !!pooled && isUp(pod)
    if (warm) this.warmConfiguring++
    this.refillAfterClaim()
    // a warm pod is configured right away, so the first reconcile can already say Live;
    // a starting one is configured when the informer sees it come up
    try {
      if (isUp(pod) && !isConfigured(pod)) {
        // the configured mark's own answer is the pod as it now stands: no read after it
        pod = (await this.configure(pod)) ?? (await this.pods.get(pod.metadata.name)) ?? pod
      }
    } finally {
      // the last warm claim in flight is configured: the refill an empty pool waited for may start
      if (warm && --this.warmConfiguring === 0) this.refillAfterClaim()
    }
    this.log.info({ session: sid, pod: pod.metadata.name, warm: pod.metadata.annotations?.[CLAIMED_AT] !== undefined }, 'browser pod assigned')
    return this.observation(sid, pod)
  }

  /** the warm pool for metrics: unclaimed current pool pods (up or starting), and claims since this runtime started */
  poolStats(): { size: number; hits: number; misses: number } {
    let size = 0
    for (const n of this.poolNames) {
      const p = this.informer.get(n)
      if (p && p.metadata.labels?.[POD_LABELS.pool] === 'warm' && !podFailure(p) && this.isCurrent(p)) size++
    }
    return { size, ...this.poolClaims }
  }

  async observe(sessionId: string): Promise<PodObservation> {
    return this.observation(sessionId, await this.findPod(sessionId))
  }

  async delete(sessionId: string): Promise<void> {
    const fromApi = await this.pods.list({ labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}=${sessionId}` })
    const pods = new Map(fromApi.items.map((p) => [p.metadata.name, p]))
    const cached = this.bySession.get(sessionId)
    this.storageStates.delete(sessionId)
    this.startTraces.delete(sessionId)
    this.clearDeadline(sessionId)
    this.uncertainClaims.delete(sessionId)
    this.freshMisses.delete(sessionId)
    if (!pods.size && !cached) return
    const names = new Set([...pods.keys(), ...(cached ? [cached] : [])])
    await Promise.all(
      [...names].map(async (name) => {
        const gone = this.waitGone(name)
        try {
          const pod = pods.get(name)
          if (this.lostPods.has(name) || (pod && podFailure(pod)?.reason === NODE_LOST)) await this.forceDelete(name)
          else await this.pods.delete(name)
          this.log.info({ session: sessionId, pod: name }, 'deleting browser pod')
        } catch (err) {
          if (!isNotFound(err)) {
            gone.cancel()
            throw err
          }
        }
        // the token must not outlive its pod, even while the session object stays around
        await this.secrets.delete(pods.get(name)?.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(name))
        this.tokens.delete(name)
        gone.confirm()
        await gone.promise
      }),
    )
    if (this.bySession.get(sessionId) && names.has(this.bySession.get(sessionId)!)) this.bySession.delete(sessionId)
  }

  async list(): Promise<PodObservation[]> {
    const { items } = await this.pods.list({ labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}` })
    return items.map((p) => this.observation(sessionOf(p)!, p))
  }

  subscribe(listener: (sessionId: string) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  // --- reading ---------------------------------------------------------------------------

  private observation(sessionId: string, pod: PodResource | undefined): PodObservation {
    return podObservation(sessionId, pod, { now: this.now(), startTimeoutMs: this.startTimeoutMs })
  }

  /**
   * The session's pod: from the cache, else from the api-server (never a false "Gone": a pod
   * created or claimed a moment ago may not have reached the informer yet). Reads are by name
   * where a name is known, because a label-selected list reads every pod of the namespace
   * (O(N²) for a burst); the list remains only where an unseen claim of ours may exist.
   * Within one reconcile, observe() and ensure() share a fresh look that found nothing.
   */
  private async findPod(sessionId: string): Promise<PodResource | undefined> {
    const name = this.bySession.get(sessionId)
    const cached = name ? this.informer.get(name) : undefined
    if (cached && sessionOf(cached) === sessionId) return cached
    const missed = this.freshMisses.get(sessionId)
    if (!name && missed !== undefined && !this.uncertainClaims.has(sessionId) && this.now().getTime() - missed < MISS_REUSE_MS) return undefined
    // the reads by name and the list run side by side: a start that finds nothing (the
    // common case) waits for one round trip, not two
    const byName = [...new Set([...(name ? [name] : []), sessionPodName(sessionId)])]
      .filter((candidate) => !this.informer.get(candidate)) // cached, and not this session's
      .map((candidate) => this.pods.get(candidate))
    const listed = this.claimsPossible(sessionId) ? this.pods.list({ labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}=${sessionId}` }) : undefined
    void listed?.catch(() => undefined) // awaited below unless a read by name answers first
    for (const pod of await Promise.all(byName)) if (pod && sessionOf(pod) === sessionId) return pod
    if (!listed) {
      this.rememberMiss(sessionId)
      return undefined
    }
    const { items } = await listed
    if (!items.length) this.rememberMiss(sessionId)
    // prefer a pod that is not on its way out
    return items.find((p) => !p.metadata.deletionTimestamp) ?? items[0]
  }

  /** could a pool pod have been claimed for this session without the cache showing it yet? */
  private claimsPossible(sessionId: string): boolean {
    return this.poolSize > 0 || this.poolNames.size > 0 || this.uncertainClaims.has(sessionId)
  }

  private rememberMiss(sessionId: string): void {
    this.freshMisses.set(sessionId, this.now().getTime())
    if (this.freshMisses.size > 10_000) this.freshMisses.delete(this.freshMisses.keys().next().value!)
  }

  // --- creating and claiming ---------------------------------------------------------------

  private async claimFromPool(config: PodLaunchConfig, owner: OwnerReference, launch: LaunchAnnotation): Promise<PodResource | undefined> {
    const candidates = [...this.poolNames]
      .map((n) => this.informer.get(n))
      .filter((p): p is PodResource => !!p && p.metadata.labels?.[POD_LABELS.pool] === 'warm' && p.metadata.labels?.[POD_LABELS.browserKind] === config.browserKind && !podFailure(p) && this.isCurrent(p) && this.nodeUsable(p))
      .sort((a, b) => Number(isUp(b)) - Number(isUp(a)))
    for (const candidate of candidates) {
      const name = candidate.metadata.name
      try {
        const pod = await this.pods.patch(
          name,
          {
            metadata: {
              labels: { ...config.labels, [POD_LABELS.pool]: null },
              annotations: { [POD_ANNOTATIONS.launch]: JSON.stringify(launch), [CLAIMED_AT]: this.now().toISOString() },
              ownerReferences: [owner],
            },
          },
          // the precondition that makes a claim exclusive
          { resourceVersion: candidate.metadata.resourceVersion },
        )
        this.poolNames.delete(name)
        const secretName = candidate.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(name)
        // not awaited: the start does not wait on a write it does not need, and the Secret is
        // still owned by its pod until this lands, so it is collected with it either way
        void this.secrets
          .setOwner(secretName, owner, { [LABELS.session]: config.sessionId })
          .catch((err) => this.log.warn({ pod: name, err: errText(err) }, 'could not hand the token secret to the session'))
        return pod
      } catch (err) {
        if (isConflict(err) || isNotFound(err)) {
          this.log.debug({ pod: name, session: config.sessionId }, 'pool pod taken or gone; trying the next')
          continue
        }
        // the patch may have landed (a timeout, a lost connection): look with a list next time
        this.uncertainClaims.add(config.sessionId)
        throw err
      }
    }
    return undefined
  }

  private async createSessionPod(config: PodLaunchConfig, owner: OwnerReference, launch: LaunchAnnotation): Promise<PodResource> {
    const name = sessionPodName(config.sessionId)
    const secretName = tokenSecretName(name)
    const token = await this.secrets.create({ name: secretName, podName: name, token: newToken(), labels: { [LABELS.session]: config.sessionId }, owner })
    this.tokens.set(name, token)
    const manifest = browserPodManifest(
      { name, namespace: this.opts.namespace, browserKind: config.browserKind, tokenSecretName: secretName, labels: config.labels, owner, launch, avoidNodes: this.avoidNodes() },
      this.opts.pod,
    )
    try {
      return await this.pods.create({ metadata: stripNamespace(manifest.metadata), spec: manifest.spec })
    } catch (err) {
      if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err
      const pod = await this.pods.get(name)
      if (!pod) throw err
      return pod
    }
  }

  private async createPoolPod(): Promise<void> {
    const name = `nightjar-browser-${randomName(10)}`
    const secretName = tokenSecretName(name)
    this.creating.add(name)
    try {
      const token = await this.secrets.create({ name: secretName, podName: name, token: newToken() })
      this.tokens.set(name, token)
      const manifest = browserPodManifest({ name, namespace: this.opts.namespace, browserKind: 'chromium', tokenSecretName: secretName, pool: true, avoidNodes: this.avoidNodes() }, this.opts.pod)
      let pod: PodResource
      try {
        pod = await this.pods.create({ metadata: stripNamespace(manifest.metadata), spec: manifest.spec })
      } catch (err) {
        // the pod never existed, so nothing owns this Secret; a failed delete is logged (its token opens nothing)
        await this.secrets.delete(secretName).catch((e) => this.log.warn({ secret: secretName, err: errText(e) }, 'could not delete the token secret of a pod that was never created'))
        this.tokens.delete(name)
        throw err
      }
      // from now on the Secret goes wherever the pod goes
      // (a crash right before this leaves an ownerless Secret whose token opens nothing;
      // sweeping for those would need list/watch on Secrets, which the operator does not get)
      await this.secrets.setOwner(secretName, { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid }).catch((err) => {
        this.log.warn({ pod: name, err: errText(err) }, 'could not attach the token secret to its pod')
      })
      this.log.debug({ pod: name }, 'pool pod created')
    } catch (err) {
      this.creating.delete(name)
      throw err
    }
  }

  // --- the pool ----------------------------------------------------------------------------

  /** a claim lets the session just claimed take its first steps on free cores (poolRefillDelayMs) */
  private refillAfterClaim(): void {
    const delayMs = this.opts.poolRefillDelayMs ?? 1000
    if (delayMs <= 0) return this.refillPool()
    const warmLeft = [...this.poolNames].some((n) => {
      const p = this.informer.get(n)
      return this.countsInPool(p) && isUp(p)
    })
    if (!warmLeft) return this.warmConfiguring === 0 ? this.refillPool() : undefined
    if (this.deferredRefill) return
    this.deferredRefill = setTimeout(() => {
      this.deferredRefill = undefined
      this.refillPool()
    }, delayMs)
    this.deferredRefill.unref()
  }

  /** keep poolSize unclaimed chromium pods; back off while pool pods keep failing */
  private refillPool(): void {
    if (!this.started || this.closed || this.poolSize <= 0 || this.refillTimer) return
    const delay = this.poolFailures ? backoffDelay(this.poolFailures - 1, { initialMs: 1000, maxMs: 60_000, jitter: 0.2 }) : 0
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined
      void this.topUp()
    }, delay)
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
        const healthy = [...this.poolNames].filter((n) => this.countsInPool(this.informer.get(n))).length
        for (let have = healthy + this.creating.size; have < this.poolSize && !this.closed; have++) await this.createPoolPod()
      } while (this.topUpAgain && !this.closed)
    } catch (err) {
      this.poolFailures++
      this.log.warn({ err: errText(err), failures: this.poolFailures }, 'could not create a pool pod; retrying with backoff')
      this.poolEvent('PoolFillFailed', `could not create a warm-pool browser pod (${errText(err)}); retrying with backoff`)
      this.toppingUp = false
      this.refillPool()
      return
    }
    this.toppingUp = false
  }

  /** a pool pod that is (or will be) claimable: not failed, made under these settings, on a usable node */
  private countsInPool(p: PodResource | undefined): p is PodResource {
    return !!p && !podFailure(p) && this.isCurrent(p) && this.nodeUsable(p)
  }

  private poolEvent(reason: string, message: string): void {
    if (this.opts.events && this.opts.poolEventSubject) this.opts.events.record(this.opts.poolEventSubject, 'Warning', reason, message)
  }

  // --- informer events -----------------------------------------------------------------

  private track(pod: PodResource): void {
    const name = pod.metadata.name
    this.creating.delete(name)
    const sid = sessionOf(pod)
    if (sid) {
      this.poolNames.delete(name)
      this.clearPoolDeadline(name)
      this.bySession.set(sid, name)
      this.uncertainClaims.delete(sid)
      this.freshMisses.delete(sid)
      if (isUp(pod) && !isConfigured(pod) && !podFailure(pod)) void this.configure(pod)
      this.phaseMaybeChanged(sid, pod)
      return
    }
    if (pod.metadata.labels?.[POD_LABELS.pool] !== 'warm') return
    this.poolNames.add(name)
    const failure = podFailure(pod)
    if (failure && !pod.metadata.deletionTimestamp) {
      // a pool pod that died before anyone claimed it: replace it, with backoff if it keeps happening
      this.poolFailures++
      this.log.warn({ pod: name, reason: failure.reason }, 'pool pod failed; replacing')
      this.poolEvent('PoolPodFailed', `warm-pool browser pod ${name} failed: ${failure.message}; replacing it`)
      // the informer sees the pod again if the delete failed, and this path retries it
      void this.deleteUnclaimed(pod, 'a failed pool pod')
      this.refillPool()
    } else if (!this.isCurrent(pod) && !pod.metadata.deletionTimestamp) {
      // made under other settings (an upgrade changed them): a session must not get it
      this.log.info({ pod: name }, 'pool pod made under earlier settings; replacing')
      void this.deleteUnclaimed(pod, 'an outdated pool pod')
      this.refillPool()
    } else if (isUp(pod)) {
      this.poolFailures = 0
      this.clearPoolDeadline(name)
    } else if (!failure) this.armPoolDeadline(pod)
  }

  /**
   * A pool pod not up by its start deadline (browserPods.startTimeoutSeconds) is marked
   * StartTimeout, and so replaced like any pool pod that failed. A session's pod has its
   * own deadline (armDeadline); a pool pod's is this one, not a kubelet probe.
   */
  private armPoolDeadline(pod: PodResource): void {
    const name = pod.metadata.name
    if (this.poolDeadlines.has(name) || this.closed) return
    const delay = Math.max(0, startDeadline(pod, this.startTimeoutMs) - this.now().getTime()) + 50
    const timer = setTimeout(() => {
      this.poolDeadlines.delete(name)
      const p = this.informer.get(name)
      if (!p || sessionOf(p) || isUp(p) || podFailure(p)) return
      void this.markFailed(p, 'StartTimeout', `warm-pool browser pod ${name} was not ready within ${Math.round(this.startTimeoutMs / 1000)} s`)
    }, delay)
    timer.unref()
    this.poolDeadlines.set(name, timer)
  }

  private clearPoolDeadline(name: string): void {
    dropTimer(this.poolDeadlines, name)
  }

  /**
   * Deletes a pool pod as this operator last saw it, unclaimed: the delete carries that
   * resourceVersion, so a claim that landed since (another replica's, or an operator handing
   * over leadership mid-claim) makes it fail, and the session keeps its pod. The informer
   * brings the newer pod back to the caller's path. True when the pod is gone or going.
   */
  private async deleteUnclaimed(pod: PodResource, what: string): Promise<boolean> {
    const name = pod.metadata.name
    try {
      await this.pods.delete(name, { resourceVersion: pod.metadata.resourceVersion })
      return true
    } catch (err) {
      if (isNotFound(err)) return true
      if (isConflict(err)) this.log.info({ pod: name }, `${what} changed before its delete (claimed, or its status moved on); looked at again`)
      else this.log.warn({ pod: name, err: errText(err) }, `could not delete ${what}`)
      return false
    }
  }

  private templateHash: string | undefined
  /** made from the settings this operator runs with (podTemplateHash) */
  private isCurrent(pod: PodResource): boolean {
    this.templateHash ??= podTemplateHash(this.opts.pod)
    return pod.metadata.annotations?.[POD_ANNOTATIONS.template] === this.templateHash
  }

  private untrack(pod: PodResource): void {
    const name = pod.metadata.name
    this.creating.delete(name)
    this.tokens.delete(name)
    this.unreachableSince.delete(name)
    this.lostPods.delete(name)
    this.drainedPool.delete(name)
    this.clearPoolDeadline(name)
    for (const w of this.goneWaiters.get(name) ?? []) w()
    this.goneWaiters.delete(name)
    if (this.poolNames.delete(name)) this.refillPool()
    const sid = sessionOf(pod)
    if (sid && this.bySession.get(sid) === name) {
      this.bySession.delete(sid)
      this.clearDeadline(sid)
      this.lastPhase.delete(sid)
      this.notify(sid)
    }
  }

  private phaseMaybeChanged(sid: string, pod: PodResource): void {
    const obs = this.observation(sid, pod)
    if (obs.phase === 'Pending' || obs.phase === 'Running') this.armDeadline(sid, pod)
    else this.clearDeadline(sid)
    if (this.lastPhase.get(sid) === obs.phase) return
    this.lastPhase.set(sid, obs.phase)
    this.notify(sid)
  }

  /** the start deadline is a change nobody writes: a timer brings the session back to be failed */
  private armDeadline(sid: string, pod: PodResource): void {
    if (this.deadlines.has(sid) || this.closed) return
    const delay = Math.max(0, startDeadline(pod, this.startTimeoutMs) - this.now().getTime()) + 50
    const timer = setTimeout(() => {
      this.deadlines.delete(sid)
      this.lastPhase.delete(sid)
      this.notify(sid)
    }, delay)
    timer.unref()
    this.deadlines.set(sid, timer)
  }

  private clearDeadline(sid: string): void {
    dropTimer(this.deadlines, sid)
  }

  private notify(sid: string): void {
    for (const l of this.listeners) {
      try {
        l(sid)
      } catch (err) {
        this.log.error({ err: errText(err) }, 'pod listener threw')
      }
    }
  }

  /** resolves when the informer reports the pod deleted, or confirm() finds it gone */
  private waitGone(name: string): { promise: Promise<void>; confirm(): void; cancel(): void } {
    let set = this.goneWaiters.get(name)
    if (!set) this.goneWaiters.set(name, (set = new Set()))
    const waiters = set
    let resolve!: () => void
    let reject!: (e: Error) => void
    const promise = new Promise<void>((res, rej) => {
      resolve = res
      reject = rej
    })
    const finish = () => {
      clearTimeout(timer)
      waiters.delete(finish)
      resolve()
    }
    const timer = setTimeout(() => {
      waiters.delete(finish)
      reject(new Error(`browser pod ${name} still terminating after ${this.deleteTimeoutMs} ms`))
    }, this.deleteTimeoutMs)
    waiters.add(finish)
    return {
      promise,
      cancel: finish,
      // the DELETED event may have passed before we started waiting: ask the api-server
      confirm: () =>
        void this.pods.get(name).then(
          (p) => {
            if (!p) finish()
          },
          () => {},
        ),
    }
  }

  // --- nodes (docs/nodes.md) ------------------------------------------------------------------

  /** not on a node that looks lost or is being drained */
  private nodeUsable(pod: PodResource): boolean {
    const node = nodeOf(pod)
    const nodes = this.opts.nodes
    return !node || !nodes || (nodes.suspicion(node) === undefined && nodes.cordonedSince(node) === undefined)
  }

  private avoidNodes(): string[] | undefined {
    const lost = this.opts.nodes?.suspectNodes()
    return lost?.length ? lost : undefined
  }

  /**
   * One pass over the browser pods on suspect or cordoned nodes: a pod whose node looks lost
   * and whose pod API has not answered for unreachableMs is lost with it (a session pod is
   * marked NodeLost, a warm one force-deleted); on a cordoned node a warm pod leaves at once
   * and a session pod is marked NodeDrained once the drain grace has passed since the cordon.
   */
  async checkNodes(): Promise<void> {
    const nodes = this.opts.nodes
    if (!nodes || this.checkingNodes || this.closed || !this.informer.hasSynced) return
    this.checkingNodes = true
    try {
      const checks = this.opts.nodeChecks ?? {}
      const unreachableMs = checks.unreachableMs ?? 6000
      const drainGraceMs = checks.drainGraceMs ?? 600_000
      await Promise.all(
        this.informer.list().map(async (pod) => {
          const name = pod.metadata.name
          const node = nodeOf(pod)
          if (!node) return
          const suspicion = nodes.suspicion(node)
          if (suspicion === undefined) this.unreachableSince.delete(name)
          else if (this.lostPods.has(name) || pod.metadata.deletionTimestamp) {
            // lost already, or deleted gracefully on a node that will never confirm: no grace
            if (pod.metadata.deletionTimestamp || !sessionOf(pod)) await this.forceDelete(name).catch((err) => this.log.warn({ pod: name, err: errText(err) }, 'could not force-delete a pod of a lost node'))
            return
          } else {
            const endpoint = endpointOfPod(pod)
            const up = endpoint ? await answers(endpoint, checks.probeTimeoutMs ?? 2000) : false
            const now = this.now().getTime()
            if (up) this.unreachableSince.delete(name)
            else {
              const since = this.unreachableSince.get(name) ?? now
              this.unreachableSince.set(name, since)
              if (now - since >= unreachableMs) await this.podLost(pod, node, `${suspicion}, and browser pod ${name} has not answered for ${Math.round((now - since) / 1000)} s`)
            }
            return
          }
          const cordoned = nodes.cordonedSince(node)
          if (cordoned === undefined || pod.metadata.deletionTimestamp || podFailure(pod)) return
          if (!sessionOf(pod)) {
            if (pod.metadata.labels?.[POD_LABELS.pool] !== 'warm' || this.drainedPool.has(name)) return
            // a warm pod holds no session: it leaves the drained node at once, the pool refills elsewhere
            this.drainedPool.add(name)
            this.log.info({ pod: name, node }, 'warm pod on a cordoned node; replacing it elsewhere')
            if (!(await this.deleteUnclaimed(pod, 'a warm pod of a cordoned node'))) this.drainedPool.delete(name)
            return
          }
          if (this.now().getTime() >= cordoned + drainGraceMs) {
            await this.markFailed(pod, NODE_DRAINED, `node ${node} is being drained; the session was ended ${Math.round(drainGraceMs / 1000)} s after the node was cordoned (browserPods.drainGraceSeconds)`)
          }
        }),
      )
    } finally {
      this.checkingNodes = false
    }
  }

  private async podLost(pod: PodResource, node: string, why: string): Promise<void> {
    const name = pod.metadata.name
    this.lostPods.add(name)
    if (sessionOf(pod)) return this.markFailed(pod, NODE_LOST, `browser pod ${name} was lost with its node: ${why}`)
    this.log.warn({ pod: name, node }, 'warm pod lost with its node; replacing it')
    this.poolEvent('PoolPodLost', `warm-pool browser pod ${name} was lost with its node: ${why}; replacing it on another node`)
    await this.forceDelete(name).catch((err) => this.log.warn({ pod: name, err: errText(err) }, 'could not force-delete a pod of a lost node'))
  }

  /** delete with gracePeriodSeconds 0: the object goes at once, without the (dead) kubelet's confirmation */
  private async forceDelete(name: string): Promise<void> {
    try {
      await this.podApi.delete(name, { gracePeriodSeconds: 0 })
    } catch (err) {
      const mapped = toResourceError(err, 'Pod', name)
      if (!isNotFound(mapped)) throw mapped
    }
  }

  // --- configure ----------------------------------------------------------------------------

  /** never rejects: a failure either marks the pod failed or is retried later; resolves with the pod marked configured, when it was */
  private configure(pod: PodResource, attempt = 0): Promise<PodResource | undefined> {
    const name = pod.metadata.name
    const running = this.configuring.get(name)
    if (running) return running
    // a cold pod comes up in a watch event: its configure joins the session start's trace
    const traced = this.startTraces.get(sessionOf(pod) ?? '')
    const p = (traced ? inContext(traced, () => this.doConfigure(pod)) : this.doConfigure(pod))
      .catch((err) => {
        // api-server trouble (reading the token, writing the annotation): try again later
        this.log.warn({ pod: name, err: errText(err) }, 'configure step failed; retrying')
        if (this.closed || attempt >= 5) return undefined
        const timer = setTimeout(() => {
          const fresh = this.informer.get(name)
          if (fresh && sessionOf(fresh) && isUp(fresh) && !isConfigured(fresh) && !podFailure(fresh)) void this.configure(fresh, attempt + 1)
        }, backoffDelay(attempt, { initialMs: 500, maxMs: 10_000, jitter: 0.3 }))
        timer.unref()
        return undefined
      })
      .finally(() => this.configuring.delete(name))
    this.configuring.set(name, p)
    return p
  }

  private async doConfigure(pod: PodResource): Promise<PodResource | undefined> {
    const name = pod.metadata.name
    const sid = sessionOf(pod)!
    const launch = parseLaunch(pod.metadata.annotations?.[POD_ANNOTATIONS.launch])
    if (!launch || launch.sessionId !== sid) return this.markFailed(pod, 'ConfigureFailed', 'browser pod has no launch settings for its session')
    const storageState = launch.storageState ? this.storageStates.get(sid) : undefined
    if (launch.storageState && !storageState) {
      return this.markFailed(pod, 'ConfigureFailed', 'the warm-resume auth-state is no longer available (the operator restarted before the pod was configured)')
    }
    const endpoint = endpointOfPod(pod)
    const token = this.tokens.get(name) ?? (await this.secrets.read(pod.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(name)))
    if (!endpoint || !token) return this.markFailed(pod, 'ConfigureFailed', 'browser pod has no address or no token')
    const body: ConfigureInput = { sessionId: sid, egress: launch.egress, ...(launch.viewport ? { viewport: launch.viewport } : {}), ...(storageState ? { storageState } : {}) }

    let outcome = await configurePod(endpoint, token, body, this.configureTimeoutMs)
    for (let attempt = 1; !outcome.ok && outcome.retryable && attempt < CONFIGURE_ATTEMPTS && !this.closed; attempt++) {
      await new Promise((r) => setTimeout(r, backoffDelay(attempt - 1, { initialMs: 250, maxMs: 5000, jitter: 0.3 })))
      outcome = await configurePod(endpoint, token, body, this.configureTimeoutMs)
    }
    if (!outcome.ok) return this.markFailed(pod, 'ConfigureFailed', `browser pod could not be configured: ${outcome.message}`)
    // the auth-state was only needed for this call
    this.storageStates.delete(sid)
    this.startTraces.delete(sid)
    try {
      const annotations: Record<string, string> = { [POD_ANNOTATIONS.configured]: 'true' }
      if (outcome.sandbox) annotations[POD_ANNOTATIONS.sandbox] = outcome.sandbox
      const marked = await this.pods.patch(name, { metadata: { annotations } })
      this.log.info({ session: sid, pod: name }, 'browser pod configured')
      return marked
    } catch (err) {
      // the next informer event retries; configure is idempotent through the 409 check
      this.log.warn({ session: sid, pod: name, err: errText(err) }, 'could not record the configured pod')
      return undefined
    }
  }

  /** resolves with nothing, as a configure that did not mark the pod configured does */
  private async markFailed(pod: PodResource, reason: string, message: string): Promise<undefined> {
    this.log.warn({ pod: pod.metadata.name, session: sessionOf(pod), reason }, message)
    await this.pods
      .patch(pod.metadata.name, { metadata: { annotations: { [POD_ANNOTATIONS.failureReason]: reason, [POD_ANNOTATIONS.failureMessage]: message } } })
      .catch((err) => this.log.warn({ pod: pod.metadata.name, err: errText(err) }, 'could not mark the pod failed'))
    return undefined
  }

}

/** a DNS-1123 name derived from the session id (which has upper case and '_'), stable across retries */
export function sessionPodName(sessionId: string): string {
  const digest = createHash('sha256').update(sessionId).digest()
  return `nightjar-browser-s${base32(digest).slice(0, 20)}`
}

function base32(buf: Buffer): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567'
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of buf) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return out
}

function randomName(n: number): string {
  return base32(randomBytes(n)).slice(0, n)
}

function parseLaunch(raw: string | undefined): LaunchAnnotation | undefined {
  if (!raw) return undefined
  try {
    const v = JSON.parse(raw) as LaunchAnnotation
    return typeof v?.sessionId === 'string' && EGRESS_MODES.includes(v.egress?.mode) && Array.isArray(v.egress.declaredHosts) ? v : undefined
  } catch {
    return undefined
  }
}

function nodeOf(pod: PodResource): string | undefined {
  return (pod.spec as { nodeName?: string } | undefined)?.nodeName
}

function stripNamespace(meta: PodResource['metadata']) {
  const { name, labels, annotations, ownerReferences } = meta
  return { name, labels, annotations, ...(ownerReferences ? { ownerReferences } : {}) }
}

function errText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err)
}

/** stops and forgets one timer of a map */
function dropTimer(timers: Map<string, NodeJS.Timeout>, key: string): void {
  const t = timers.get(key)
  if (t) clearTimeout(t)
  timers.delete(key)
}
