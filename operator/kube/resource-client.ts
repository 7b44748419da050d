// ResourceClient<T> against a real api-server. The port's semantics are the api-server's
// own, so this mostly translates: preconditions, the status subresource, paging, typed
// errors, id↔name mapping. Objects are plain JSON, because watch events carry strings and
// the cache must see one representation. Design: docs/operator.md#talking-to-the-api-server
import type { KubeConfig } from '@kubernetes/client-node'
import type {
  AnyResource,
  ListOptions,
  ListResult,
  MergePatch,
  NewResource,
  ResourceClient,
  ResourcePatch,
  StatusOf,
  WatchHandle,
  WatchHandler,
  WatchOptions,
  WriteOptions,
} from '../../ports/ports.ts'
import type { ResourceOps } from './api-ops.ts'
import { toResourceError } from './errors.ts'
import { ID_ANNOTATION, kubeName } from './names.ts'
import { jitteredTimeout, watchStream } from './watch.ts'

export interface KubeResourceClientOptions<T extends AnyResource = AnyResource> {
  kc: KubeConfig
  ops: ResourceOps
  /** base server-side watch timeout; each watch asks for [base, 2*base) s (default 300) */
  watchTimeoutSeconds?: number
  /** silence beyond the watch timeout after which a stream is presumed dead (default 30 s) */
  watchIdleGraceMs?: number
  /** list page size (default 500) */
  pageSize?: number
  /** map ids to DNS-1123 object names and back (names.ts) */
  mapNames?: boolean
  /**
   * what of each object this client hands on, and so what an informer over it caches: the
   * fields its readers use (a browser pod, a Node), not the server's defaults and kubelet
   * reports nobody here reads. Never set on a client whose objects are written back whole.
   */
  keep?: (obj: T) => T
}

export class KubeResourceClient<T extends AnyResource> implements ResourceClient<T> {
  readonly kind: string
  private readonly ops: ResourceOps
  private readonly pageSize: number

  private readonly opts: KubeResourceClientOptions<T>
  /** the newest resourceVersion this client's own writes returned (etcd's revisions are numbers) */
  private ownWrite = ''
  constructor(opts: KubeResourceClientOptions<T>) {
    this.opts = opts
    this.ops = opts.ops
    this.kind = opts.ops.kind
    this.pageSize = opts.pageSize ?? 500
  }

  async get(name: string): Promise<T | undefined> {
    try {
      return this.plain(await this.ops.get(this.objectName(name)))
    } catch (err) {
      const mapped = toResourceError(err, this.kind, name)
      if (mapped instanceof Error && (mapped as { code?: number }).code === 404) return undefined
      throw mapped
    }
  }

  async list(opts: ListOptions = {}): Promise<ListResult<T>> {
    if (opts.fresherThanOwnWrites && this.ownWrite) {
      // one unpaged answer from the watch cache, once it has caught up with our last write:
      // a paged or version-less list is read from etcd, every object of the namespace
      let page
      try {
        page = await this.ops.list({ labelSelector: opts.labelSelector, resourceVersion: this.ownWrite, resourceVersionMatch: 'NotOlderThan' })
      } catch (err) {
        throw toResourceError(err, this.kind, '')
      }
      return { items: (page.items ?? []).map((item) => this.plain(item)), resourceVersion: page.metadata?.resourceVersion ?? '' }
    }
    const items: T[] = []
    let continueToken: string | undefined
    let resourceVersion = ''
    do {
      let page
      try {
        page = await this.ops.list({ labelSelector: opts.labelSelector, limit: this.pageSize, continueToken })
      } catch (err) {
        // an expired continue token is a 410: the caller (informer) relists from scratch
        throw toResourceError(err, this.kind, '')
      }
      for (const item of page.items ?? []) items.push(this.plain(item))
      // every page of one list is a snapshot at the first page's version
      if (!resourceVersion) resourceVersion = page.metadata?.resourceVersion ?? ''
      continueToken = page.metadata?.continue || undefined
    } while (continueToken)
    return { items, resourceVersion }
  }

  watch(fromResourceVersion: string, handler: WatchHandler<T>, opts: WatchOptions = {}): WatchHandle {
    return watchStream<T>({
      kc: this.opts.kc,
      path: this.ops.path,
      fromResourceVersion,
      labelSelector: opts.labelSelector,
      allowBookmarks: opts.allowBookmarks,
      timeoutSeconds: jitteredTimeout(this.opts.watchTimeoutSeconds ?? 300),
      idleGraceMs: this.opts.watchIdleGraceMs,
      kind: this.kind,
      // a watch line is JSON.parse's own output (client-node does not deserialize it): no copy needed
      convert: (raw) => this.adopt(raw as T),
      handler,
    })
  }

  async create(obj: NewResource<T>): Promise<T> {
    const metadata = { ...obj.metadata }
    if (this.opts.mapNames) {
      metadata.name = kubeName(obj.metadata.name)
      metadata.annotations = { ...metadata.annotations, [ID_ANNOTATION]: obj.metadata.name }
    }
    const body = { apiVersion: this.ops.apiVersion, kind: this.kind, metadata, spec: obj.spec }
    try {
      return this.wrote(this.plain(await this.ops.create(body)))
    } catch (err) {
      throw toResourceError(err, this.kind, obj.metadata.name)
    }
  }

  async patch(name: string, patch: ResourcePatch<T>, opts: WriteOptions = {}): Promise<T> {
    const body: Record<string, unknown> = {}
    let meta = patch.metadata
    if (this.opts.mapNames && meta && (meta.annotations === null || (meta.annotations && ID_ANNOTATION in meta.annotations))) {
      // the id annotation is the way back from object name to id: never patch it away
      meta = { ...meta, annotations: await this.annotationsExceptId(name, meta.annotations) }
    }
    if (meta !== undefined || opts.resourceVersion !== undefined) body.metadata = withPrecondition(meta, opts)
    if (patch.spec !== undefined) body.spec = patch.spec
    try {
      return this.wrote(this.plain(await this.ops.patch(this.objectName(name), body)))
    } catch (err) {
      throw toResourceError(err, this.kind, name)
    }
  }

  async patchStatus(name: string, status: MergePatch<StatusOf<T>>, opts: WriteOptions = {}): Promise<T> {
    const body: Record<string, unknown> = { status }
    if (opts.resourceVersion !== undefined) body.metadata = { resourceVersion: opts.resourceVersion }
    try {
      return this.wrote(this.plain(await this.ops.patchStatus(this.objectName(name), body)))
    } catch (err) {
      throw toResourceError(err, this.kind, name)
    }
  }

  /** remembers the object's version when it is the newest this client wrote */
  private wrote(obj: T): T {
    const rv = obj.metadata.resourceVersion
    if (rv && /^\d+$/.test(rv) && (!this.ownWrite || BigInt(rv) > BigInt(this.ownWrite))) this.ownWrite = rv
    return obj
  }

  async delete(name: string, opts: WriteOptions = {}): Promise<void> {
    const body = opts.resourceVersion !== undefined ? { preconditions: { resourceVersion: opts.resourceVersion } } : {}
    try {
      await this.ops.delete(this.objectName(name), body)
    } catch (err) {
      throw toResourceError(err, this.kind, name)
    }
  }

  /** the object name for a caller's name (an id when names are mapped) */
  objectName(name: string): string {
    return this.opts.mapNames ? kubeName(name) : name
  }

  /** JSON round trip: Date → RFC 3339 string, class instances → plain objects; list items get apiVersion/kind */
  private plain(raw: unknown): T {
    return this.adopt(JSON.parse(JSON.stringify(raw)) as T)
  }

  /**
   * a plain object of the wire's shape as this client hands it on: apiVersion/kind set, the id
   * as name, without managedFields (the API server's record of which manager set which field:
   * nothing here reads it, and it is a large part of every object an informer caches — at
   * 10,000 live sessions the leader's cache of sessions, pods and Secrets outgrew a 512 MB heap)
   */
  private adopt(obj: T): T {
    obj.apiVersion ??= this.ops.apiVersion
    obj.kind ??= this.kind
    if (obj.metadata && 'managedFields' in obj.metadata) delete (obj.metadata as { managedFields?: unknown }).managedFields
    const id = obj.metadata?.annotations?.[ID_ANNOTATION]
    if (this.opts.mapNames && id) obj.metadata.name = id
    return this.opts.keep ? this.opts.keep(obj) : obj
  }

  /** a merge patch of annotations equivalent to the caller's, minus any change to the id annotation */
  private async annotationsExceptId(name: string, wanted: Record<string, string | null> | null | undefined): Promise<Record<string, string | null>> {
    if (wanted) {
      const { [ID_ANNOTATION]: _drop, ...rest } = wanted
      return rest
    }
    const current = (await this.get(name))?.metadata.annotations ?? {}
    return Object.fromEntries(Object.keys(current).filter((k) => k !== ID_ANNOTATION).map((k) => [k, null]))
  }
}

function withPrecondition(meta: object | null | undefined, opts: WriteOptions): object {
  return { ...(meta ?? {}), ...(opts.resourceVersion !== undefined ? { resourceVersion: opts.resourceVersion } : {}) }
}
