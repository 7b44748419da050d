// The handful of api-server calls a ResourceClient needs, for two families of resources:
// custom resources through CustomObjectsApi (BrowserSession, Network) and Pods through
// CoreV1Api. resource-client.ts layers the port's semantics on top, once for both.
//
// Patches are always JSON merge patches (RFC 7386, application/merge-patch+json). The
// generated client would otherwise pick the first content type of its list, which is
// application/json-patch+json — a different format that a merge-patch body would be
// rejected as (or worse, misread). client-node 1.x takes per-call ConfigurationOptions; a
// header middleware sets the content type explicitly (setHeaderOptions).
//
// Every call also carries a deadline: the generated client has none, and a request that
// never answers (a half-open connection) would otherwise hold a reconcile worker — or the
// leader's lease renewal — forever.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type V1DeleteOptions, type V1Pod } from '@kubernetes/client-node'
// the generated client's own Observable stub: its middleware chain expects these
import { of } from '@kubernetes/client-node/dist/gen/rxjsStub.js'

export type CallOptions = ReturnType<typeof setHeaderOptions>

export const REQUEST_TIMEOUT_MS = 30_000

/** per-call options that abort the request after `ms` */
export function withTimeout(ms: number = REQUEST_TIMEOUT_MS): CallOptions {
  return {
    middleware: [
      {
        pre: (ctx) => {
          ctx.setSignal(AbortSignal.timeout(ms))
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

export interface ResourceOps {
  /** the collection URL path, for watches */
  readonly path: string
  readonly apiVersion: string
  readonly kind: string
  get(name: string): Promise<unknown>
  list(q: { labelSelector?: string; limit: number; continueToken?: string }): Promise<ListPage>
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
    list: (q) => api.listNamespacedCustomObject({ ...base, labelSelector: q.labelSelector, limit: q.limit, _continue: q.continueToken }, DEFAULT_CALL),
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
    list: (q) => api.listNamespacedPod({ namespace, labelSelector: q.labelSelector, limit: q.limit, _continue: q.continueToken }, DEFAULT_CALL),
    create: (body) => api.createNamespacedPod({ namespace, body: body as V1Pod }, DEFAULT_CALL),
    patch: (name, body) => api.patchNamespacedPod({ name, namespace, body }, MERGE_PATCH),
    patchStatus: (name, body) => api.patchNamespacedPodStatus({ name, namespace, body }, MERGE_PATCH),
    delete: (name, body) => api.deleteNamespacedPod({ name, namespace, body }, DEFAULT_CALL),
  }
}
