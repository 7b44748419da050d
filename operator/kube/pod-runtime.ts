// PodRuntime over real Pods: one single-use pod per session, from the warm pool
// (pod-pool.ts) or created for it, handed over by the configure handshake
// (pod-handover.ts), followed through an informer (pod-tracker.ts), and watched for node
// trouble (node-guard.ts). This file wires those rooms to the PodRuntime port.
// Design: docs/operator.md#pods-on-kubernetes
import type { KubeConfig } from '@kubernetes/client-node'
import { LABELS } from '../../crds/types.ts'
import { isNotFound } from '../../ports/errors.ts'
import type { EventRecorder, EventSubject, Logger, OwnerReference, PodLaunchConfig, PodObservation, PodRuntime } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import type { BackoffOptions } from '../../watch/backoff.ts'
import { Informer } from '../../watch/informer.ts'
import { podOps } from './api-ops.ts'
import { kubeName } from './names.ts'
import { NODE_LOST, NodeGuard, type NodeCheckOptions } from './node-guard.ts'
import type { NodeHealth } from './node-health.ts'
import { PodHandover, type LaunchAnnotation } from './pod-handover.ts'
import { PodPool, stripNamespace } from './pod-pool.ts'
import { BROWSER_POD_SELECTOR, POD_ANNOTATIONS, browserPodManifest, keptBrowserPod, type BrowserPodOptions, type PodResource } from './pod-spec.ts'
import { CLAIMED_AT, isConfigured, isUp, podFailure, sessionOf } from './pod-state.ts'
import { PodTracker, sessionPodName } from './pod-tracker.ts'
import { forceDelete, type PodRoomDeps } from './pod-writes.ts'
import { KubeResourceClient } from './resource-client.ts'
import { TokenSecrets, newToken, tokenSecretName } from './token-secrets.ts'

export { NODE_DRAINED, NODE_LOST, type NodeCheckOptions } from './node-guard.ts'
export { sessionPodName } from './pod-tracker.ts'

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

export class KubePodRuntime implements PodRuntime {
  readonly informer: Informer<PodResource>
  private readonly pods: KubeResourceClient<PodResource>
  private readonly secrets: TokenSecrets
  private readonly log: Logger
  private readonly deps: PodRoomDeps
  private readonly tracker: PodTracker
  private readonly pool: PodPool
  private readonly handover: PodHandover
  private readonly guard: NodeGuard
  private started = false
  private closed = false

  private readonly opts: KubePodRuntimeOptions
  constructor(opts: KubePodRuntimeOptions) {
    this.opts = opts
    this.log = opts.log ?? silentLogger
    const clock = opts.now ?? Date.now
    const podApi = podOps(opts.kc, opts.namespace)
    this.pods = new KubeResourceClient<PodResource>({ kc: opts.kc, ops: podApi, watchTimeoutSeconds: opts.watchTimeoutSeconds, keep: keptBrowserPod })
    this.secrets = new TokenSecrets(opts.kc, opts.namespace)
    this.informer = new Informer(this.pods, { labelSelector: BROWSER_POD_SELECTOR, backoff: opts.informerBackoff, log: this.log, resyncMs: 0 })
    this.deps = { informer: this.informer, pods: this.pods, podApi, log: this.log, now: () => new Date(clock()), closed: () => this.closed }
    const startTimeoutMs = opts.startTimeoutMs ?? 5 * 60_000
    this.handover = new PodHandover(this.deps, this.secrets, opts.configureTimeoutMs ?? 30_000)
    this.guard = new NodeGuard(this.deps, { nodes: opts.nodes, checks: opts.nodeChecks, poolEvent: (reason, message) => this.pool.poolEvent(reason, message) })
    this.pool = new PodPool(this.deps, {
      namespace: opts.namespace,
      pod: opts.pod,
      size: opts.poolSize ?? 2,
      refillDelayMs: opts.poolRefillDelayMs,
      startTimeoutMs,
      secrets: this.secrets,
      events: opts.events,
      poolEventSubject: opts.poolEventSubject,
      nodeUsable: (pod) => this.guard.usable(pod),
      avoidNodes: () => this.guard.avoidNodes(),
      tokens: this.handover,
    })
    this.tracker = new PodTracker(this.deps, { startTimeoutMs, deleteTimeoutMs: opts.deleteTimeoutMs ?? 60_000, poolMayHoldClaims: () => this.pool.mayHoldClaims() })
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
    await this.guard.start()
    await this.informer.start()
    this.pool.start()
  }

  /** stop watching and timers; pods stay (the next leader adopts them) */
  stop(): void {
    this.closed = true
    this.informer.stop()
    this.guard.stop()
    this.pool.stop()
    this.tracker.stop()
  }

  // --- PodRuntime ------------------------------------------------------------------------

  async ensure(config: PodLaunchConfig, sessionOwner: OwnerReference): Promise<PodObservation> {
    if (this.closed) throw new Error('pod runtime is stopped')
    // the reconciler names its owner by session id; the garbage collector needs the object
    // name (names.ts) — with the id it would find no owner and delete the pod at once
    const owner = { ...sessionOwner, name: kubeName(sessionOwner.name) }
    const sid = config.sessionId
    const existing = await this.tracker.findPod(sid)
    this.tracker.dropMiss(sid)
    if (existing) return this.tracker.observation(sid, existing)

    this.handover.begin(sid, config.storageState)
    const launch: LaunchAnnotation = {
      sessionId: sid,
      egress: { mode: config.egress.mode, declaredHosts: [...config.egress.declaredHosts] },
      ...(config.viewport ? { viewport: { ...config.viewport } } : {}),
      ...(config.storageState ? { storageState: true } : {}),
    }
    // the warm pool runs the headless shell: a session with extensions gets a pod of the full browser
    const pooled = config.browserKind === 'chromium' && !config.fullBrowser ? await this.claimFromPool(config, owner, launch) : undefined
    let pod = pooled ?? (await this.createSessionPod(config, owner, launch))
    this.tracker.assign(sid, pod.metadata.name)
    const warm = !!pooled && isUp(pod)
    this.pool.claimed(config, warm)
    // a warm pod is configured right away, so the first reconcile can already say Live;
    // a starting one is configured when the informer sees it come up
    try {
      if (isUp(pod) && !isConfigured(pod)) {
        // the configured mark's own answer is the pod as it now stands: no read after it
        pod = (await this.handover.configure(pod)) ?? (await this.pods.get(pod.metadata.name)) ?? pod
      }
    } finally {
      // the last warm claim in flight is configured: the refill an empty pool waited for may start
      if (warm) this.pool.warmConfigured()
    }
    this.log.info({ session: sid, pod: pod.metadata.name, warm: pod.metadata.annotations?.[CLAIMED_AT] !== undefined }, 'browser pod assigned')
    return this.tracker.observation(sid, pod)
  }

  /** the warm pool for metrics: unclaimed current pool pods (up or starting), and claims since this runtime started */
  poolStats(): { size: number; hits: number; misses: number } {
    return this.pool.stats()
  }

  async observe(sessionId: string): Promise<PodObservation> {
    return this.tracker.observation(sessionId, await this.tracker.findPod(sessionId))
  }

  async delete(sessionId: string): Promise<void> {
    const fromApi = await this.pods.list({ labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}=${sessionId}`, fresherThanOwnWrites: true })
    const pods = new Map(fromApi.items.map((p) => [p.metadata.name, p]))
    const cached = this.tracker.podNameOf(sessionId)
    this.handover.forgetSession(sessionId)
    this.tracker.forgetSession(sessionId)
    if (!pods.size && !cached) return
    const names = new Set([...pods.keys(), ...(cached ? [cached] : [])])
    await Promise.all([...names].map((name) => this.deletePod(sessionId, name, pods.get(name))))
    this.tracker.released(sessionId, names)
  }

  /** deletes one of a session's pods with its token Secret, and waits until it is gone */
  private async deletePod(sessionId: string, name: string, pod: PodResource | undefined): Promise<void> {
    const gone = this.tracker.waitGone(name)
    try {
      if (this.guard.isLost(name) || (pod && podFailure(pod)?.reason === NODE_LOST)) await forceDelete(this.deps, name)
      else await this.pods.delete(name)
      this.log.info({ session: sessionId, pod: name }, 'deleting browser pod')
    } catch (err) {
      if (!isNotFound(err)) {
        gone.cancel()
        throw err
      }
    }
    // the token must not outlive its pod, even while the session object stays around
    await this.secrets.delete(pod?.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(name))
    this.handover.forgetToken(name)
    gone.confirm()
    await gone.promise
  }

  async list(): Promise<PodObservation[]> {
    const { items } = await this.pods.list({ labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}` })
    return items.map((p) => this.tracker.observation(sessionOf(p)!, p))
  }

  subscribe(listener: (sessionId: string) => void): () => void {
    return this.tracker.subscribe(listener)
  }

  /** one pass of the node guard (tests call it rather than wait for its timer) */
  checkNodes(): Promise<void> {
    return this.guard.checkNodes()
  }

  // --- creating and claiming ---------------------------------------------------------------

  private async claimFromPool(config: PodLaunchConfig, owner: OwnerReference, launch: LaunchAnnotation): Promise<PodResource | undefined> {
    try {
      return await this.pool.claim(config, owner, launch)
    } catch (err) {
      // the patch may have landed (a timeout, a lost connection): look with a list next time
      this.tracker.claimUncertain(config.sessionId)
      throw err
    }
  }

  private async createSessionPod(config: PodLaunchConfig, owner: OwnerReference, launch: LaunchAnnotation): Promise<PodResource> {
    const name = sessionPodName(config.sessionId)
    const secretName = tokenSecretName(name)
    const token = await this.secrets.create({ name: secretName, podName: name, token: newToken(), labels: { [LABELS.session]: config.sessionId }, owner })
    this.handover.rememberToken(name, token)
    const manifest = browserPodManifest(
      {
        name, namespace: this.opts.namespace, browserKind: config.browserKind, tokenSecretName: secretName, labels: config.labels, owner, launch, avoidNodes: this.guard.avoidNodes(),
        ...(config.fullBrowser ? { fullBrowser: true } : {}),
      },
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

  // --- informer events -----------------------------------------------------------------

  private track(pod: PodResource): void {
    const sid = sessionOf(pod)
    if (!sid) return this.pool.tracked(pod)
    this.pool.left(pod.metadata.name)
    this.tracker.tracked(sid, pod)
    if (isUp(pod) && !isConfigured(pod) && !podFailure(pod)) void this.handover.configure(pod)
    this.tracker.phaseMaybeChanged(sid, pod)
  }

  private untrack(pod: PodResource): void {
    const name = pod.metadata.name
    this.handover.forgetToken(name)
    this.guard.forget(name)
    this.pool.untracked(name)
    this.tracker.untracked(pod)
  }
}
