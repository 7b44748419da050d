// Kubernetes-shaped object metadata (apimachinery's ObjectMeta, Condition, …): the
// leaf that the CRD types and the operator's ports both build on.

export interface OwnerReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  controller?: boolean
  blockOwnerDeletion?: boolean
}

export interface ObjectMeta {
  name: string
  namespace?: string
  /** set by the server at create, never changes */
  uid: string
  /** opaque to clients: only ever compared for equality or handed back (watch, precondition) */
  resourceVersion: string
  /** bumped by the server on every spec change (and when deletion starts), never on status writes */
  generation: number
  creationTimestamp: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  finalizers?: string[]
  /** set by delete() while finalizers remain; the object is removed once they are empty */
  deletionTimestamp?: string
  ownerReferences?: OwnerReference[]
}

export interface Resource<Spec = unknown, Status = unknown> {
  apiVersion: string
  kind: string
  metadata: ObjectMeta
  spec: Spec
  status?: Status
}

export type AnyResource = Resource<unknown, unknown>
export type SpecOf<T extends AnyResource> = T['spec']
export type StatusOf<T extends AnyResource> = NonNullable<T['status']>

/** metav1.Condition. Kept as a list with x-kubernetes-list-type=map keyed by `type`. */
export interface Condition {
  type: string
  status: 'True' | 'False' | 'Unknown'
  /** CamelCase machine-readable reason */
  reason: string
  message: string
  /** changes only when `status` changes */
  lastTransitionTime: string
  /** metadata.generation the condition was computed from */
  observedGeneration?: number
}

/** RFC 7386 JSON merge patch of T: every field optional, null deletes, arrays replace. */
export type MergePatch<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: MergePatch<T[K]> | null }
    : T

/** What create() accepts: a name and spec; the server fills uid, resourceVersion, generation, timestamps. */
export interface NewResource<T extends AnyResource> {
  metadata: {
    name: string
    labels?: Record<string, string>
    annotations?: Record<string, string>
    finalizers?: string[]
    ownerReferences?: OwnerReference[]
  }
  spec: SpecOf<T>
  // status is not accepted: with the status subresource enabled the server drops it on create.
}

/** What patch() may change: labels, annotations, finalizers, ownerReferences and spec. */
export interface ResourcePatch<T extends AnyResource> {
  metadata?: {
    labels?: Record<string, string | null> | null
    annotations?: Record<string, string | null> | null
    finalizers?: string[] | null
    ownerReferences?: OwnerReference[] | null
  }
  spec?: MergePatch<SpecOf<T>>
}
