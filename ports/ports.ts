// The operator's ports. Reconcilers, informers and controllers only ever see these
// interfaces; the embedded adapters (operator/embedded/) and the Kubernetes adapters
// (operator/kube/) implement them with the same semantics, so one code path runs in
// both runtimes (DESIGN.md "Two runtimes, one code path").
//
// Apart from silentLogger everything here is a type: importing it costs nothing at run time.
import type { BrowserKind, EgressMode, SandboxKind, Viewport } from '../crds/types.ts'
import type { OwnerReference, ObjectMeta, Resource, AnyResource, SpecOf, StatusOf, Condition, MergePatch, NewResource, ResourcePatch } from '../crds/meta.ts'
export type { OwnerReference, ObjectMeta, Resource, AnyResource, SpecOf, StatusOf, Condition, MergePatch, NewResource, ResourcePatch } from '../crds/meta.ts'

// ---------------------------------------------------------------------------
// ResourceClient<T>
// ---------------------------------------------------------------------------

export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  /** progress notification: every event up to resourceVersion has been delivered */
  | { type: 'BOOKMARK'; resourceVersion: string }

export interface WatchHandler<T> {
  /** called in resourceVersion order, never concurrently, never after stop() */
  onEvent(event: WatchEvent<T>): void
  /**
   * The watch ended without stop() being called, exactly once.
   * - err undefined: closed normally (server timeout) → re-watch from the last version seen;
   * - GoneError (410): the version is too old → relist, then watch from the list's version;
   * - any other error: transport/server trouble → re-watch after a backoff.
   */
  onClose(err?: Error): void
}

export interface WatchOptions {
  labelSelector?: string
  /** ask for BOOKMARK events so a quiet watch can still advance its resourceVersion */
  allowBookmarks?: boolean
}

export interface WatchHandle {
  /** idempotent; no handler call follows it */
  stop(): void
}

export interface ListOptions {
  /** equality/set-based selector, e.g. `nightjar.dev/org=norg_x,!nightjar.dev/test` */
  labelSelector?: string
  /**
   * A few objects by a narrow selector, as fresh as this client's own writes at least: a
   * Kubernetes client lets the api-server answer from its watch cache (resourceVersion
   * NotOlderThan its last write, unpaged) instead of reading every object of the namespace
   * from etcd. Without a write of its own yet, it reads as usual.
   */
  fresherThanOwnWrites?: boolean
}

export interface ListResult<T> {
  items: T[]
  /** pass to watch() to see every change after this list */
  resourceVersion: string
}

export interface WriteOptions {
  /** optimistic-concurrency precondition: ConflictError (409) unless the object is at this version */
  resourceVersion?: string
}

/**
 * A namespaced client for one resource type, with Kubernetes semantics.
 * Errors: NotFoundError (404), ConflictError/AlreadyExistsError (409), GoneError (410),
 * InvalidError (422) from ./errors.ts.
 */
export interface ResourceClient<T extends AnyResource> {
  readonly kind: string
  /** undefined when absent (not an error) */
  get(name: string): Promise<T | undefined>
  list(opts?: ListOptions): Promise<ListResult<T>>
  /**
   * Streams every change after `fromResourceVersion` ('' or '0': synthetic ADDED for the
   * current objects first). Returns at once; failures arrive via handler.onClose.
   */
  watch(fromResourceVersion: string, handler: WatchHandler<T>, opts?: WatchOptions): WatchHandle
  /** AlreadyExistsError when the name is taken */
  create(obj: NewResource<T>): Promise<T>
  /**
   * JSON merge patch of metadata (labels/annotations/finalizers/ownerReferences) and spec.
   * Status in the body is ignored (status subresource). Bumps generation iff spec changed;
   * a patch that changes nothing is not a write (same resourceVersion, no event).
   * Removing the last finalizer of a deleting object removes it.
   */
  patch(name: string, patch: ResourcePatch<T>, opts?: WriteOptions): Promise<T>
  /** JSON merge patch of the status subresource; never bumps generation. */
  patchStatus(name: string, status: MergePatch<StatusOf<T>>, opts?: WriteOptions): Promise<T>
  /**
   * Without finalizers the object is removed (DELETED event). With finalizers it gets a
   * deletionTimestamp (MODIFIED) and is removed when the last finalizer is patched away.
   * NotFoundError when absent.
   */
  delete(name: string, opts?: WriteOptions): Promise<void>
}

/** The read side a reconciler needs: a client, or an informer's cache. */
export interface ObjectReader<T> {
  get(name: string): T | undefined | Promise<T | undefined>
}

// ---------------------------------------------------------------------------
// PodRuntime: browser pods
// ---------------------------------------------------------------------------

/** Playwright's storage state (cookies + localStorage). Credential-equivalent: never logged, never in a resource. */
// (a type, not an interface: it is handed on as the pod API's configure body, a JSON record)
export type StorageState = {
  cookies: unknown[]
  origins: unknown[]
}

/**
 * Everything a browser pod is launched with. Pods are single-use and immutable: a live
 * session keeps its launch-time declared hosts (spec: "a live session keeps its
 * launch-time list"), so there is nothing to re-apply to an existing pod.
 */
export interface PodLaunchConfig {
  sessionId: string
  browserKind: BrowserKind
  egress: { mode: EgressMode; declaredHosts: string[] }
  viewport?: Viewport
  /** labels for the pod (org, agent, session) — the Kubernetes adapter puts them on the Pod */
  labels: Record<string, string>
  /** warm resume only; a secret — the runtime hands it to the pod and drops it */
  storageState?: StorageState
  /** when the start was asked for (ms since the epoch), for a warm pool's demand; absent: now */
  requestedAt?: number
  /** the session loads browser extensions: a pod with the full Chromium, not one of the headless shell's warm pool */
  fullBrowser?: boolean
}

/**
 * Pending: created, browser starting. Running: browser up, not yet configured for the
 * session. Ready: configured; the pod API serves the session. Failed: died or could not
 * be configured (terminal — a session's pod is never restarted). Gone: no pod.
 */
export type PodPhase = 'Pending' | 'Running' | 'Ready' | 'Failed' | 'Gone'

export interface PodObservation {
  sessionId: string
  phase: PodPhase
  podName?: string
  /** pod API base URL, e.g. http://127.0.0.1:41234 (not a secret; the token is) */
  endpoint?: string
  /** Ready: what isolates the pod's pages, as it said at configure */
  sandbox?: SandboxKind
  /** CamelCase, for Failed: PodExited, StartFailed, ConfigureFailed, ... */
  reason?: string
  message?: string
}

export interface PodRuntime {
  /**
   * Idempotent: returns the session's pod if it has one; otherwise claims a warm pod (or
   * starts one) and configures it for the session. May return Pending/Running — the
   * runtime notifies subscribers when the phase changes. Never replaces a Failed pod.
   */
  ensure(config: PodLaunchConfig, owner: OwnerReference): Promise<PodObservation>
  /** the session's pod, or phase Gone */
  observe(sessionId: string): Promise<PodObservation>
  /** idempotent; resolves when the pod is gone */
  delete(sessionId: string): Promise<void>
  /** every session-bound pod this runtime owns (used to sweep orphans on start) */
  list(): Promise<PodObservation[]>
  /** called with the session id whenever that session's pod changes phase (incl. death) */
  subscribe(listener: (sessionId: string) => void): () => void
}

/** Where and how to reach a session's pod API. The token never goes into a resource. */
export interface PodAccess {
  endpoint: string
  token: string
}

/**
 * How the api-server reaches a session's browser pod. Embedded: in memory (the same
 * object as the PodRuntime). Kubernetes: the per-session Secret the operator writes.
 */
export interface PodDirectory {
  /** undefined unless the session's pod is Ready */
  lookup(sessionId: string): Promise<PodAccess | undefined>
}

// ---------------------------------------------------------------------------
// Other ports the lead implements
// ---------------------------------------------------------------------------

/** Daemon counts per network, from the tunnel broker (api-server). */
export interface DaemonCounts {
  counts(networkName: string): Promise<{ daemonCount: number; onlineDaemonCount: number }>
  /** called with the network name whenever its counts may have changed */
  subscribe(listener: (networkName: string) => void): () => void
}

/**
 * Hands the operator a warm-resume auth-state (spec.warmResume.versionId) just in time for
 * the pod launch. Embedded: it decrypts the version itself. Kubernetes: it reads what the
 * api-server decrypted and wrote for the session (operator/kube/auth-state-secrets.ts).
 * Optional: without it a warm-resume session fails with AuthStateUnavailable.
 * Resolves undefined when the version does not exist; throws on transient failure (retried;
 * NotReadyError when it is on its way).
 */
export interface AuthStateSource {
  load(session: AuthStateRequest): Promise<StorageState | undefined>
  /**
   * Optional: the session no longer needs a copy outside its pod runtime (the runtime holds
   * the state, or the session failed or ended): drop it. Best effort, idempotent.
   */
  release?(sessionName: string): Promise<void>
}

export interface AuthStateRequest {
  name: string
  orgId: string
  identityId?: string
  versionId: string
  /** when the session's resource was created (RFC 3339): bounds a wait for a hand-over */
  createdAt?: string
}

/** The object an event is about. `name` is the caller's name (an id for the custom resources). */
export interface EventSubject {
  apiVersion: string
  kind: string
  name: string
  namespace?: string
  uid: string
}

export type EventType = 'Normal' | 'Warning'

/**
 * Kubernetes Events for people (`kubectl describe`): why a session failed, timed out or
 * lost its pod, why the pool cannot fill. Fire-and-forget: recording never blocks or
 * fails a reconcile, and a repeated event is counted, not duplicated.
 */
export interface EventRecorder {
  record(subject: EventSubject, type: EventType, reason: string, message: string): void
}

export const silentEvents: EventRecorder = { record() {} }

/** pino-compatible subset, so the lead can pass a pino child logger as is. */
export interface Logger {
  debug(obj: object, msg?: string): void
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
