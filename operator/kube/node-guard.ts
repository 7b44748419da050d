// The node guard of the kube pod runtime: browser pods on a node that looks lost and whose
// pod API stops answering are lost with it (a session's marked NodeLost, a warm one deleted
// with no grace); on a cordoned node a warm pod leaves at once and a session's ends with
// NodeDrained after the drain grace. Design: docs/nodes.md
import type { PodResource } from './pod-spec.ts'
import { POD_LABELS } from './pod-spec.ts'
import { endpointOfPod, podFailure, sessionOf } from './pod-state.ts'
import { answers, type NodeHealth } from './node-health.ts'
import { deleteUnclaimed, errText, forceDelete, markFailed, nodeOf, type PodRoomDeps } from './pod-writes.ts'

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

export interface NodeGuardOptions {
  nodes?: NodeHealth
  checks?: NodeCheckOptions
  /** a Warning event about the warm pool */
  poolEvent(reason: string, message: string): void
}

export class NodeGuard {
  private readonly deps: PodRoomDeps
  private readonly opts: NodeGuardOptions
  /** pod name → when its pod API first failed to answer while its node was suspect */
  private readonly unreachableSince = new Map<string, number>()
  /** pods found lost with their node: deleted with no grace (the kubelet would never confirm) */
  private readonly lostPods = new Set<string>()
  /** warm pods on cordoned nodes already sent away */
  private readonly drainedPool = new Set<string>()
  private timer?: NodeJS.Timeout
  private checking = false

  constructor(deps: PodRoomDeps, opts: NodeGuardOptions) {
    this.deps = deps
    this.opts = opts
  }

  async start(): Promise<void> {
    const nodes = this.opts.nodes
    if (!nodes) return
    await nodes.start()
    // a cordon is an event; a lease going stale is not: both are looked at on a timer too
    nodes.onChange(() => void this.checkNodes())
    this.timer = setInterval(() => void this.checkNodes(), this.opts.checks?.intervalMs ?? 2000)
    this.timer.unref()
  }

  stop(): void {
    this.opts.nodes?.stop()
    if (this.timer) clearInterval(this.timer)
  }

  /** not on a node that looks lost or is being drained */
  usable(pod: PodResource): boolean {
    const node = nodeOf(pod)
    const nodes = this.opts.nodes
    return !node || !nodes || (nodes.suspicion(node) === undefined && nodes.cordonedSince(node) === undefined)
  }

  /** nodes a new pod should not be scheduled on */
  avoidNodes(): string[] | undefined {
    const lost = this.opts.nodes?.suspectNodes()
    return lost?.length ? lost : undefined
  }

  /** found lost with its node: its delete cannot wait for the kubelet */
  isLost(name: string): boolean {
    return this.lostPods.has(name)
  }

  /** the pod is gone */
  forget(name: string): void {
    this.unreachableSince.delete(name)
    this.lostPods.delete(name)
    this.drainedPool.delete(name)
  }

  /**
   * one pass over the browser pods on suspect or cordoned nodes; it runs every 2 s and on
   * every Node change, so it copies only those pods (copying every pod made the operator's
   * CPU per session grow with the number of sessions: bench/README.md, "Scale")
   */
  async checkNodes(): Promise<void> {
    const nodes = this.opts.nodes
    if (!nodes || this.checking || this.deps.closed() || !this.deps.informer.hasSynced) return
    const healthy = nodes.healthyNodes()
    if (!healthy) return
    this.checking = true
    try {
      const troubled = this.deps.informer.list((pod) => {
        const node = nodeOf(pod)
        return !!node && !healthy.has(node)
      })
      const onSuspect = new Set<string>()
      await Promise.all(
        troubled.map(async (pod) => {
          const node = nodeOf(pod)!
          const suspicion = nodes.suspicion(node)
          if (suspicion !== undefined) {
            onSuspect.add(pod.metadata.name)
            return this.checkSuspect(pod, node, suspicion)
          }
          const cordoned = nodes.cordonedSince(node)
          if (cordoned !== undefined) await this.checkCordoned(pod, node, cordoned)
        }),
      )
      // a pod's unreachable clock stops once its node looks alive again
      for (const name of this.unreachableSince.keys()) if (!onSuspect.has(name)) this.unreachableSince.delete(name)
    } finally {
      this.checking = false
    }
  }

  /** a pod whose node looks lost is lost with it once its API has not answered for unreachableMs */
  private async checkSuspect(pod: PodResource, node: string, suspicion: string): Promise<void> {
    const name = pod.metadata.name
    if (this.lostPods.has(name) || pod.metadata.deletionTimestamp) {
      // lost already, or deleted gracefully on a node that will never confirm: no grace
      if (pod.metadata.deletionTimestamp || !sessionOf(pod)) await this.forceDeleteLogged(name)
      return
    }
    const checks = this.opts.checks ?? {}
    const endpoint = endpointOfPod(pod)
    // a probe that fails has had no answer since it was sent: the clock starts then, not when
    // its timeout ran out (two seconds of a stopped node's 30 s budget, bench/README.md "Scale")
    const asked = this.deps.now().getTime()
    const up = endpoint ? await answers(endpoint, checks.probeTimeoutMs ?? 2000) : false
    const now = this.deps.now().getTime()
    if (up) return void this.unreachableSince.delete(name)
    const since = this.unreachableSince.get(name) ?? asked
    this.unreachableSince.set(name, since)
    if (now - since >= (checks.unreachableMs ?? 6000)) await this.podLost(pod, node, `${suspicion}, and browser pod ${name} has not answered for ${Math.round((now - since) / 1000)} s`)
  }

  /** a warm pod leaves a cordoned node at once; a session's ends after the drain grace */
  private async checkCordoned(pod: PodResource, node: string, cordoned: number): Promise<void> {
    const name = pod.metadata.name
    if (pod.metadata.deletionTimestamp || podFailure(pod)) return
    if (!sessionOf(pod)) {
      if (pod.metadata.labels?.[POD_LABELS.pool] !== 'warm' || this.drainedPool.has(name)) return
      // a warm pod holds no session: it leaves the drained node at once, the pool refills elsewhere
      this.drainedPool.add(name)
      this.deps.log.info({ pod: name, node }, 'warm pod on a cordoned node; replacing it elsewhere')
      if (!(await deleteUnclaimed(this.deps, pod, 'a warm pod of a cordoned node'))) this.drainedPool.delete(name)
      return
    }
    const drainGraceMs = this.opts.checks?.drainGraceMs ?? 600_000
    if (this.deps.now().getTime() >= cordoned + drainGraceMs) {
      await markFailed(this.deps, pod, NODE_DRAINED, `node ${node} is being drained; the session was ended ${Math.round(drainGraceMs / 1000)} s after the node was cordoned (browserPods.drainGraceSeconds)`)
    }
  }

  private async podLost(pod: PodResource, node: string, why: string): Promise<void> {
    const name = pod.metadata.name
    this.lostPods.add(name)
    if (sessionOf(pod)) return markFailed(this.deps, pod, NODE_LOST, `browser pod ${name} was lost with its node: ${why}`)
    this.deps.log.warn({ pod: name, node }, 'warm pod lost with its node; replacing it')
    this.opts.poolEvent('PoolPodLost', `warm-pool browser pod ${name} was lost with its node: ${why}; replacing it on another node`)
    await this.forceDeleteLogged(name)
  }

  private forceDeleteLogged(name: string): Promise<void> {
    return forceDelete(this.deps, name).catch((err) => this.deps.log.warn({ pod: name, err: errText(err) }, 'could not force-delete a pod of a lost node'))
  }
}
