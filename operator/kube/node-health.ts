// What the operator knows about the nodes browser pods run on: which look lost and which are
// being drained. Read from two informers, Nodes (Ready, spec.unschedulable) and the kubelets'
// heartbeat Leases in kube-node-lease: one watch each, not a poll per pod. A node is only
// suspect here; the pod runtime calls a pod lost when its API stops answering too, as
// either signal alone misfires (a kubelet restart stops the Lease while containers serve).
// Design: docs/nodes.md#a-lost-node-nodelost
import http from 'node:http'
import type { KubeConfig } from '@kubernetes/client-node'
import { podRoutes } from '../../contracts/pod-api.ts'
import { Informer } from '../../watch/informer.ts'
import type { BackoffOptions } from '../../watch/backoff.ts'
import type { Logger, Resource } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import { nodeLeaseOps, nodeOps } from './api-ops.ts'
import { KubeResourceClient } from './resource-client.ts'

export type NodeResource = Resource<
  { unschedulable?: boolean; taints?: { key: string; effect?: string; timeAdded?: string }[] },
  { conditions?: { type: string; status: string; reason?: string }[] }
>
export type NodeLeaseResource = Resource<{ holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number }, Record<string, never>>

/**
 * a Node as this informer keeps it: its metadata, cordon and Ready condition. A real Node's
 * status lists every image on it and its addresses, capacity and daemon endpoints: tens of
 * kilobytes a node, none of it read here.
 */
export function keptNode(node: NodeResource): NodeResource {
  return {
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: node.metadata,
    spec: {
      ...(node.spec?.unschedulable ? { unschedulable: true } : {}),
      ...(node.spec?.taints ? { taints: node.spec.taints.map((t) => ({ key: t.key, effect: t.effect, timeAdded: t.timeAdded })) } : {}),
    },
    status: { conditions: node.status?.conditions?.map((c) => ({ type: c.type, status: c.status, reason: c.reason })) },
  }
}

/** the taint the api-server adds to a cordoned node; its timeAdded dates the cordon */
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable'

export interface NodeHealthOptions {
  kc: KubeConfig
  /** a node Lease unrenewed this long makes its node suspect (default 15 s; kubelets renew every 10 s) */
  suspectAfterMs?: number
  leaseNamespace?: string
  watchTimeoutSeconds?: number
  informerBackoff?: BackoffOptions
  log?: Logger
  now?: () => number
}

export class NodeHealth {
  readonly nodes: Informer<NodeResource>
  readonly leases: Informer<NodeLeaseResource>
  private readonly suspectAfterMs: number
  private readonly now: () => number
  /** node → when this process first saw it cordoned (when its taint carries no time) */
  private readonly cordonSeen = new Map<string, number>()
  private readonly listeners = new Set<() => void>()

  constructor(opts: NodeHealthOptions) {
    this.suspectAfterMs = opts.suspectAfterMs ?? 15_000
    this.now = opts.now ?? Date.now
    const log = opts.log ?? silentLogger
    const common = { kc: opts.kc, watchTimeoutSeconds: opts.watchTimeoutSeconds }
    this.nodes = new Informer(new KubeResourceClient<NodeResource>({ ...common, ops: nodeOps(opts.kc), keep: keptNode }), { backoff: opts.informerBackoff, log, resyncMs: 0 })
    this.leases = new Informer(new KubeResourceClient<NodeLeaseResource>({ ...common, ops: nodeLeaseOps(opts.kc, opts.leaseNamespace) }), { backoff: opts.informerBackoff, log, resyncMs: 0 })
    const changed = () => {
      for (const l of this.listeners) l()
    }
    this.nodes.addHandler({ onAdd: changed, onUpdate: changed, onDelete: changed })
  }

  async start(): Promise<void> {
    await Promise.all([this.nodes.start(), this.leases.start()])
  }

  stop(): void {
    this.nodes.stop()
    this.leases.stop()
    this.listeners.clear()
  }

  /** called when a Node changes (cordoned, uncordoned, its Ready condition) */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * the nodes that look alive and are schedulable now, or undefined before the first list:
   * one look per node for a pass over every pod (a pod on a node not in it needs a closer look)
   */
  healthyNodes(): Set<string> | undefined {
    if (!this.nodes.hasSynced) return undefined
    const healthy = new Set<string>()
    for (const name of this.nodes.names()) {
      if (!this.nodes.peek(name)?.spec?.unschedulable && this.suspicion(name) === undefined) healthy.add(name)
    }
    return healthy
  }

  /** why the node may be lost, or undefined while it looks alive */
  suspicion(nodeName: string): string | undefined {
    if (!this.nodes.hasSynced) return undefined
    const node = this.nodes.peek(nodeName)
    if (!node) return `node ${nodeName} was deleted`
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')
    if (ready && ready.status !== 'True') return `node ${nodeName} is Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ''}`
    const renewed = Date.parse(this.leases.peek(nodeName)?.spec?.renewTime ?? '')
    const age = this.now() - renewed
    if (Number.isFinite(renewed) && age > this.suspectAfterMs) return `node ${nodeName}'s kubelet has not renewed its lease for ${Math.round(age / 1000)} s`
    return undefined
  }

  /** every node that looks lost now: new browser pods are kept off them */
  suspectNodes(): string[] {
    return this.nodes.names().filter((n) => this.suspicion(n) !== undefined)
  }

  /** when the node was cordoned (kubectl cordon/drain), or undefined if it is schedulable */
  cordonedSince(nodeName: string): number | undefined {
    const node = this.nodes.peek(nodeName)
    if (!node?.spec?.unschedulable) {
      this.cordonSeen.delete(nodeName)
      return undefined
    }
    const added = Date.parse(node.spec.taints?.find((t) => t.key === UNSCHEDULABLE_TAINT)?.timeAdded ?? '')
    if (Number.isFinite(added)) return added
    let seen = this.cordonSeen.get(nodeName)
    if (seen === undefined) this.cordonSeen.set(nodeName, (seen = this.now()))
    return seen
  }
}

/** does the pod's API answer GET /healthz within the timeout (any HTTP answer counts: it is alive) */
export function answers(endpoint: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(new URL(podRoutes.health.path, endpoint), { timeout: timeoutMs, agent: false }, (res) => {
      res.resume()
      resolve(true)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', () => resolve(false))
  })
}
