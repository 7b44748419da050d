// The api-server calls a ResourceClient needs, for custom resources and Pods. Every call
// sends a merge patch explicitly (the generated client would pick JSON Patch), carries a
// deadline (a half-open connection would hold a worker or the lease renewal forever), and
// reuses a keep-alive agent built from client-node's own TLS options (a handshake per call
// cost most of the CPU at a burst). Design: docs/operator.md#talking-to-the-api-server
import { createHash } from 'node:crypto'
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent, type AgentOptions } from 'node:https'
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type V1DeleteOptions, type V1Pod } from '@kubernetes/client-node'
// the generated client's own Observable stub: its middleware chain expects these
import { of } from '@kubernetes/client-node/dist/gen/rxjsStub.js'

export type CallOptions = ReturnType<typeof setHeaderOptions>

export const REQUEST_TIMEOUT_MS = 30_000

/** TLS options of an agent that decide what a connection may be shared for */
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'secureProtocol', 'secureOptions', 'crl'] as const
const MAX_POOLED_AGENTS = 8
const pooledAgents = new Map<string, HttpAgent>()

/** a shared keep-alive agent equivalent to the per-request agent client-node made */
export function keepAliveAgent(agent: unknown): unknown {
  const isHttps = agent instanceof HttpsAgent && agent.constructor === HttpsAgent
  if (!isHttps && !(agent instanceof HttpAgent && agent.constructor === HttpAgent)) return agent
  const options = (agent as HttpAgent & { options?: AgentOptions }).options ?? {}
  const picked: Record<string, unknown> = {}
  const hash = createHash('sha256').update(isHttps ? 'https' : 'http')
  for (const k of TLS_KEYS) {
    const v = options[k]
    if (v === undefined) continue
    picked[k] = v
    hash.update(`\0${k}=`)
    for (const part of Array.isArray(v) ? v : [v]) hash.update(Buffer.isBuffer(part) ? part : String(part)).update('\0')
  }
  const key = hash.digest('hex')
  let shared = pooledAgents.get(key)
  if (!shared) {
    const opts = { ...picked, keepAlive: true, maxFreeSockets: 64, scheduling: 'lifo' as const }
    shared = isHttps ? new HttpsAgent(opts) : new HttpAgent(opts)
    pooledAgents.set(key, shared)
    if (pooledAgents.size > MAX_POOLED_AGENTS) {
      const [oldest, agentToDrop] = pooledAgents.entries().next().value!
      pooledAgents.delete(oldest)
      agentToDrop.destroy()
    }
  }
  return shared
}

/** per-call options that abort the request after `ms`, on a kept-alive connection */
export function withTimeout(ms: number = REQUEST_TIMEOUT_MS): CallOptions {
  return {
    middleware: [
      {
        pre: (ctx) => {
          ctx.setSignal(AbortSignal.timeout(ms))
          const agent = ctx.getAgent()
          if (agent) ctx.setAgent(keepAliveAgent(agent) as typeof agent)
          return of(ctx)
        },
        post: (res) => of(res),
      },
    ],
    middlewareMergeStrategy: 'append',
  }
}

/** a JSON merge patch call (explicit Content-Type), with the default deadline */
export const MERGE_PATCH: CallOptions = setHeaderOptions('Content-Type', PatchStrategy.MergePatch, withTimeout())
export const DEFAULT_CALL: CallOptions = withTimeout()

export interface ListPage {
  items: unknown[]
  metadata?: { resourceVersion?: string; continue?: string }
}

export interface ListQuery {
  labelSelector?: string
  limit?: number
  continueToken?: string
  resourceVersion?: string
  resourceVersionMatch?: 'NotOlderThan'
}

export interface ResourceOps {
  /** the collection URL path, for watches */
  readonly path: string
  readonly apiVersion: string
  readonly kind: string
  get(name: string): Promise<unknown>
  /** one page; with resourceVersion (NotOlderThan) and no limit, the api-server's watch cache answers */
  list(q: ListQuery): Promise<ListPage>
  create(body: object): Promise<unknown>
  patch(name: string, body: object): Promise<unknown>
  patchStatus(name: string, body: object): Promise<unknown>
  delete(name: string, body: V1DeleteOptions): Promise<unknown>
}

export interface CustomResourceRef {
  group: string
  version: string
  plural: string
  kind: string
  namespace: string
}

export function customObjectOps(kc: KubeConfig, ref: CustomResourceRef): ResourceOps {
  const api = kc.makeApiClient(CustomObjectsApi)
  const base = { group: ref.group, version: ref.version, namespace: ref.namespace, plural: ref.plural }
  return {
    path: `/apis/${ref.group}/${ref.version}/namespaces/${encodeURIComponent(ref.namespace)}/${ref.plural}`,
    apiVersion: `${ref.group}/${ref.version}`,
    kind: ref.kind,
    get: (name) => api.getNamespacedCustomObject({ ...base, name }, DEFAULT_CALL),
    list: (q) => api.listNamespacedCustomObject({ ...base, ...listParams(q) }, DEFAULT_CALL),
    create: (body) => api.createNamespacedCustomObject({ ...base, body }, DEFAULT_CALL),
    patch: (name, body) => api.patchNamespacedCustomObject({ ...base, name, body }, MERGE_PATCH),
    patchStatus: (name, body) => api.patchNamespacedCustomObjectStatus({ ...base, name, body }, MERGE_PATCH),
    // Background: dependents (the session's pod and token Secret) are collected after
    // the owner is gone, without holding the owner's deletion up
    delete: (name, body) => api.deleteNamespacedCustomObject({ ...base, name, propagationPolicy: 'Background', body }, DEFAULT_CALL),
  }
}

export function podOps(kc: KubeConfig, namespace: string): ResourceOps {
  const api = kc.makeApiClient(CoreV1Api)
  return {
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
    apiVersion: 'v1',
    kind: 'Pod',
    get: (name) => api.readNamespacedPod({ name, namespace }, DEFAULT_CALL),
    list: (q) => api.listNamespacedPod({ namespace, ...listParams(q) }, DEFAULT_CALL).then(typedPage),
    create: (body) => api.createNamespacedPod({ namespace, body: body as V1Pod }, DEFAULT_CALL),
    patch: (name, body) => api.patchNamespacedPod({ name, namespace, body }, MERGE_PATCH),
    patchStatus: (name, body) => api.patchNamespacedPodStatus({ name, namespace, body }, MERGE_PATCH),
    delete: (name, body) => api.deleteNamespacedPod({ name, namespace, body }, DEFAULT_CALL),
  }
}

const readOnly = (kind: string) => () => Promise.reject(new Error(`${kind}s are read-only here`))

/** Nodes (cluster-scoped), read only: their Ready condition and whether they are cordoned */
export function nodeOps(kc: KubeConfig): ResourceOps {
  const api = kc.makeApiClient(CoreV1Api)
  return {
    path: '/api/v1/nodes',
    apiVersion: 'v1',
    kind: 'Node',
    get: (name) => api.readNode({ name }, DEFAULT_CALL),
    list: (q) => api.listNode({ ...listParams(q) }, DEFAULT_CALL).then(typedPage),
    create: readOnly('Node'),
    patch: readOnly('Node'),
    patchStatus: readOnly('Node'),
    delete: readOnly('Node'),
  }
}

/** the kubelets' heartbeats: one Lease per node in kube-node-lease, read only */
export function nodeLeaseOps(kc: KubeConfig, namespace = 'kube-node-lease'): ResourceOps {
  const api = kc.makeApiClient(CoordinationV1Api)
  return {
    path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    get: (name) => api.readNamespacedLease({ name, namespace }, DEFAULT_CALL),
    list: (q) => api.listNamespacedLease({ namespace, ...listParams(q) }, DEFAULT_CALL).then(typedPage),
    create: readOnly('Lease'),
    patch: readOnly('Lease'),
    patchStatus: readOnly('Lease'),
    delete: readOnly('Lease'),
  }
}

/**
 * A typed list (client-node's model classes) as a page: its ListMeta names the continue token
 * `_continue` (`continue` is a reserved word), where a custom-object list (plain JSON) has
 * `continue`. Read as `continue`, every typed list stopped after its first page: the operator's
 * pod informer held 500 of 10,000 pods, and its relist dropped the rest from its cache.
 */
function typedPage(list: { items: unknown[]; metadata?: { resourceVersion?: string; _continue?: string } }): ListPage {
  return { items: list.items, metadata: { resourceVersion: list.metadata?.resourceVersion, continue: list.metadata?._continue } }
}

/** a ListQuery as client-node's list parameters */
function listParams(q: ListQuery) {
  return { labelSelector: q.labelSelector, limit: q.limit, _continue: q.continueToken, resourceVersion: q.resourceVersion, resourceVersionMatch: q.resourceVersionMatch }
}
