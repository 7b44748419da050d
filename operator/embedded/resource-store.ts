// The embedded ResourceClient: an in-process object store with the api-server semantics
// the reconcilers rely on (resourceVersion, generation, status subresource, finalizers,
// 409s, 410 Gone after compaction), so code tested here behaves the same on Kubernetes.
// Objects handed out are deep copies. Design: docs/operator.md#pods-in-the-embedded-runtime
import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { rfc3339 } from '../conditions.ts'
import { AlreadyExistsError, ConflictError, GoneError, InvalidError, NotFoundError } from '../../ports/errors.ts'
import { parseLabelSelector } from '../label-selector.ts'
import { applyMergePatch } from '../merge-patch.ts'
import type {
  AnyResource,
  ListOptions,
  ListResult,
  MergePatch,
  NewResource,
  ResourceClient,
  ResourcePatch,
  StatusOf,
  WatchEvent,
  WatchHandle,
  WatchHandler,
  WatchOptions,
  WriteOptions,
} from '../../ports/ports.ts'

/** The revision counter; share one between stores to get etcd-like global versions. */
export class ResourceVersionClock {
  private n = 0
  next(): number {
    return ++this.n
  }
  current(): number {
    return this.n
  }
}

export interface ResourceStoreOptions {
  apiVersion: string
  kind: string
  namespace?: string
  clock?: ResourceVersionClock
  /** events kept for watches that resume from an older version (default 1000) */
  historyLimit?: number
  /** BOOKMARK period for watches that allow bookmarks (default 30 s; 0 = never) */
  bookmarkIntervalMs?: number
  now?: () => number
}

interface HistoryEntry<T> {
  rv: number
  type: 'ADDED' | 'MODIFIED' | 'DELETED'
  object: T
  /** the object before this event (selector transitions need it) */
  prev?: T
}

/** what a watcher's queue holds: events, then possibly the end of the stream */
type Delivery<T> = WatchEvent<T> | { type: 'CLOSE'; err?: Error }

class StoreWatcher<T extends AnyResource> implements WatchHandle {
  private queue: Delivery<T>[] = []
  private scheduled = false
  private stopped = false
  private bookmarkTimer?: NodeJS.Timeout

  private readonly handler: WatchHandler<T>
  readonly matches: (obj: T) => boolean
  private readonly onStop: (w: StoreWatcher<T>) => void
  constructor(
    handler: WatchHandler<T>,
    matches: (obj: T) => boolean,
    onStop: (w: StoreWatcher<T>) => void,
  ) {
    this.handler = handler
    this.matches = matches
    this.onStop = onStop
  }

  startBookmarks(intervalMs: number, currentRv: () => number): void {
    if (intervalMs <= 0) return
    this.bookmarkTimer = setInterval(() => this.push({ type: 'BOOKMARK', resourceVersion: String(currentRv()) }), intervalMs)
    this.bookmarkTimer.unref()
  }

  /** translate a store event into what this watcher sees, honouring its label selector */
  offer(e: HistoryEntry<T>): void {
    const now = e.type !== 'DELETED' && this.matches(e.object)
    const before = e.prev !== undefined && this.matches(e.prev)
    if (e.type === 'ADDED') {
      if (now) this.push({ type: 'ADDED', object: structuredClone(e.object) })
    } else if (e.type === 'DELETED') {
      if (this.matches(e.object)) this.push({ type: 'DELETED', object: structuredClone(e.object) })
    } else if (now && before) this.push({ type: 'MODIFIED', object: structuredClone(e.object) })
    else if (now) this.push({ type: 'ADDED', object: structuredClone(e.object) })
    else if (before) this.push({ type: 'DELETED', object: structuredClone(e.object) })
  }

  push(event: WatchEvent<T>): void {
    if (this.stopped) return
    this.queue.push(event)
    this.schedule()
  }

  /** server-side close: delivered after every queued event, like the end of an HTTP stream */
  close(err?: Error): void {
    if (this.stopped) return
    this.queue.push({ type: 'CLOSE', err })
    this.schedule()
  }

  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.queue = []
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer)
    this.onStop(this)
  }

  // Delivery is asynchronous (a write's promise resolves before its event arrives, as
  // over the network) and strictly ordered (one drain loop per watcher).
  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => this.drain())
  }

  private drain(): void {
    this.scheduled = false
    while (!this.stopped && this.queue.length) {
      const event = this.queue.shift()!
      if (event.type === 'CLOSE') {
        this.stop()
        this.handler.onClose(event.err)
        return
      }
      try {
        this.handler.onEvent(event)
      } catch (err) {
        // a throwing handler ends its own watch; the informer's reconnect logic takes over
        this.stop()
        this.handler.onClose(err instanceof Error ? err : new Error(String(err)))
        return
      }
    }
  }
}

export class ResourceStore<T extends AnyResource> implements ResourceClient<T> {
  readonly kind: string
  private readonly apiVersion: string
  private readonly namespace: string
  private readonly clock: ResourceVersionClock
  private readonly historyLimit: number
  private readonly bookmarkIntervalMs: number
  private readonly now: () => Date
  private readonly objects = new Map<string, T>()
  private readonly history: HistoryEntry<T>[] = []
  /** highest version whose event was dropped from history; watches from below it get Gone */
  private compactedThrough = 0
  private readonly watchers = new Set<StoreWatcher<T>>()

  constructor(opts: ResourceStoreOptions) {
    this.kind = opts.kind
    this.apiVersion = opts.apiVersion
    this.namespace = opts.namespace ?? 'default'
    this.clock = opts.clock ?? new ResourceVersionClock()
    this.historyLimit = opts.historyLimit ?? 1000
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 30_000
    const clock = opts.now ?? Date.now
    this.now = () => new Date(clock())
  }

  async get(name: string): Promise<T | undefined> {
    const obj = this.objects.get(name)
    return obj && structuredClone(obj)
  }

  async list(opts: ListOptions = {}): Promise<ListResult<T>> {
    const matches = parseLabelSelector(opts.labelSelector)
    const items = [...this.objects.values()]
      .filter((o) => matches(o.metadata.labels ?? {}))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      .map((o) => structuredClone(o))
    return { items, resourceVersion: String(this.clock.current()) }
  }

  watch(fromResourceVersion: string, handler: WatchHandler<T>, opts: WatchOptions = {}): WatchHandle {
    const selector = parseLabelSelector(opts.labelSelector)
    const watcher = new StoreWatcher<T>(handler, (o) => selector(o.metadata.labels ?? {}), (w) => this.watchers.delete(w))
    const from = fromResourceVersion === '' || fromResourceVersion === '0' ? undefined : Number(fromResourceVersion)
    if (from !== undefined && (!Number.isInteger(from) || from < 0)) {
      watcher.close(new InvalidError(this.kind, '', `invalid resourceVersion "${fromResourceVersion}"`))
      return watcher
    }
    if (from !== undefined && from < this.compactedThrough) {
      watcher.close(new GoneError(`too old resource version: ${from} (${this.compactedThrough})`))
      return watcher
    }
    // Registration and replay happen in one synchronous step, so no write can fall
    // between "replayed" and "subscribed".
    if (from === undefined) {
      for (const obj of [...this.objects.values()].sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))) {
        watcher.offer({ rv: Number(obj.metadata.resourceVersion), type: 'ADDED', object: obj })
      }
    } else {
      for (const e of this.history) if (e.rv > from) watcher.offer(e)
    }
    this.watchers.add(watcher)
    if (opts.allowBookmarks) watcher.startBookmarks(this.bookmarkIntervalMs, () => this.clock.current())
    return watcher
  }

  async create(input: NewResource<T>): Promise<T> {
    const name = input?.metadata?.name
    if (typeof name !== 'string' || !name) throw new InvalidError(this.kind, String(name), 'metadata.name is required')
    if (this.objects.has(name)) throw new AlreadyExistsError(this.kind, name)
    const rv = this.clock.next()
    const meta = input.metadata
    const obj = {
      apiVersion: this.apiVersion,
      kind: this.kind,
      metadata: {
        name,
        namespace: this.namespace,
        uid: randomUUID(),
        resourceVersion: String(rv),
        generation: 1,
        creationTimestamp: rfc3339(this.now()),
        ...(meta.labels ? { labels: { ...meta.labels } } : {}),
        ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
        ...(meta.finalizers?.length ? { finalizers: [...meta.finalizers] } : {}),
        ...(meta.ownerReferences?.length ? { ownerReferences: structuredClone(meta.ownerReferences) } : {}),
      },
      spec: structuredClone(input.spec),
      // status is dropped on create: the status subresource is enabled
    } as T
    this.objects.set(name, obj)
    this.record({ rv, type: 'ADDED', object: obj })
    return structuredClone(obj)
  }

  async patch(name: string, patch: ResourcePatch<T>, opts: WriteOptions = {}): Promise<T> {
    const cur = this.current(name, opts)
    const next = structuredClone(cur)
    const mp = patch?.metadata
    if (mp) {
      // Only these metadata fields are client-writable; name/uid/versions are server-owned.
      for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
        if (!(key in mp)) continue
        const merged = applyMergePatch((next.metadata as unknown as Record<string, unknown>)[key], mp[key])
        const empty = merged === undefined || merged === null || (Array.isArray(merged) ? merged.length === 0 : Object.keys(merged as object).length === 0)
        if (empty) delete (next.metadata as unknown as Record<string, unknown>)[key]
        else (next.metadata as unknown as Record<string, unknown>)[key] = merged
      }
    }
    if (patch && 'spec' in patch && patch.spec !== undefined) next.spec = applyMergePatch(next.spec, patch.spec)

    if (cur.metadata.deletionTimestamp) {
      const had = new Set(cur.metadata.finalizers ?? [])
      const added = (next.metadata.finalizers ?? []).filter((f) => !had.has(f))
      if (added.length) throw new InvalidError(this.kind, name, 'no new finalizers can be added if the object is being deleted')
    }
    if (isDeepStrictEqual(cur, next)) return structuredClone(cur)
    if (!isDeepStrictEqual(cur.spec, next.spec)) next.metadata.generation = cur.metadata.generation + 1
    return this.commit(cur, next)
  }

  async patchStatus(name: string, status: MergePatch<StatusOf<T>>, opts: WriteOptions = {}): Promise<T> {
    const cur = this.current(name, opts)
    const next = structuredClone(cur)
    const merged = applyMergePatch(cur.status ?? {}, status)
    if (merged && Object.keys(merged as object).length) next.status = merged as T['status']
    else delete next.status
    if (isDeepStrictEqual(cur, next)) return structuredClone(cur)
    return this.commit(cur, next)
  }

  async delete(name: string, opts: WriteOptions = {}): Promise<void> {
    const cur = this.current(name, opts)
    if (cur.metadata.finalizers?.length) {
      if (cur.metadata.deletionTimestamp) return // already terminating
      const next = structuredClone(cur)
      next.metadata.deletionTimestamp = rfc3339(this.now())
      next.metadata.generation = cur.metadata.generation + 1 // as the api-server does for graceful deletion
      this.commit(cur, next)
      return
    }
    const next = structuredClone(cur)
    next.metadata.resourceVersion = String(this.clock.next())
    this.objects.delete(name)
    this.record({ rv: Number(next.metadata.resourceVersion), type: 'DELETED', object: next, prev: cur })
  }

  /** Test hook: the "server" closes every open watch (err undefined = a normal timeout). */
  disconnectWatches(err?: Error): void {
    for (const w of [...this.watchers]) {
      this.watchers.delete(w)
      w.close(err)
    }
  }

  /** Test hook: drop all retained history, as an etcd compaction would. */
  compact(): void {
    this.compactedThrough = this.clock.current()
    this.history.length = 0
  }

  get openWatches(): number {
    return this.watchers.size
  }

  private current(name: string, opts: WriteOptions): T {
    const cur = this.objects.get(name)
    if (!cur) throw new NotFoundError(this.kind, name)
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== cur.metadata.resourceVersion) {
      throw new ConflictError(this.kind, name)
    }
    return cur
  }

  private commit(cur: T, next: T): T {
    const rv = this.clock.next()
    next.metadata.resourceVersion = String(rv)
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      this.objects.delete(next.metadata.name)
      this.record({ rv, type: 'DELETED', object: next, prev: cur })
    } else {
      this.objects.set(next.metadata.name, next)
      this.record({ rv, type: 'MODIFIED', object: next, prev: cur })
    }
    return structuredClone(next)
  }

  private record(entry: HistoryEntry<T>): void {
    this.history.push(entry)
    while (this.history.length > this.historyLimit) this.compactedThrough = this.history.shift()!.rv
    for (const w of this.watchers) w.offer(entry)
  }
}
