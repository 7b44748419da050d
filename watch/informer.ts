// An informer over any ResourceClient, like client-go's reflector: list, then watch from
// the list's version into a local cache; relist on 410 Gone and diff, so deletes missed
// while disconnected are still reported; re-watch with jittered backoff (no stampede on a
// restarting api-server); resync periodically as a level-triggered safety net.
import { isGone } from '../ports/errors.ts'
import type { AnyResource, Logger, ObjectReader, ResourceClient, WatchEvent, WatchHandle } from '../ports/ports.ts'
import { silentLogger } from '../ports/ports.ts'
import { backoffDelay, type BackoffOptions } from './backoff.ts'

export interface InformerHandlers<T> {
  onAdd?(obj: T): void
  /** old === obj (same content) on a periodic resync */
  onUpdate?(old: T, obj: T): void
  onDelete?(obj: T): void
}

export interface InformerOptions {
  labelSelector?: string
  /** re-deliver every cached object this often (default 10 min; 0 = never) */
  resyncMs?: number
  /** reconnect/relist backoff (default 200 ms doubling to 30 s, jitter 0.5) */
  backoff?: BackoffOptions
  log?: Logger
}

export class Informer<T extends AnyResource> implements ObjectReader<T> {
  private readonly cache = new Map<string, T>()
  private readonly handlers: InformerHandlers<T>[] = []
  private readonly log: Logger
  private readonly backoff: BackoffOptions
  private watch?: WatchHandle
  private retryTimer?: NodeJS.Timeout
  private resyncTimer?: NodeJS.Timeout
  private failures = 0
  private stopped = true
  private synced = false
  private syncedWaiters: (() => void)[] = []
  private lastResourceVersion = ''
  /** how many lists have completed (1 = the initial one); a test can watch relists */
  relists = 0

  private readonly client: ResourceClient<T>
  private readonly opts: InformerOptions
  constructor(
    client: ResourceClient<T>,
    opts: InformerOptions = {},
  ) {
    this.client = client
    this.opts = opts
    this.log = opts.log ?? silentLogger
    this.backoff = { initialMs: 200, maxMs: 30_000, jitter: 0.5, ...opts.backoff }
  }

  addHandler(h: InformerHandlers<T>): void {
    this.handlers.push(h)
  }

  /** starts list+watch; resolves once the first list is in the cache */
  start(): Promise<void> {
    if (!this.stopped) return this.waitForSync()
    this.stopped = false
    void this.relist()
    const resync = this.opts.resyncMs ?? 600_000
    if (resync > 0) {
      this.resyncTimer = setInterval(() => this.resync(), resync)
      this.resyncTimer.unref()
    }
    return this.waitForSync()
  }

  stop(): void {
    this.stopped = true
    this.watch?.stop()
    this.watch = undefined
    if (this.retryTimer) clearTimeout(this.retryTimer)
    if (this.resyncTimer) clearInterval(this.resyncTimer)
    for (const w of this.syncedWaiters.splice(0)) w()
  }

  get hasSynced(): boolean {
    return this.synced
  }

  get resourceVersion(): string {
    return this.lastResourceVersion
  }

  /** a copy of the cached object: the caller may change it */
  get(name: string): T | undefined {
    const obj = this.cache.get(name)
    return obj && structuredClone(obj)
  }

  /** the cached object itself, to read on a hot path without a copy; the caller must not change it */
  peek(name: string): Readonly<T> | undefined {
    return this.cache.get(name)
  }

  /** the names of the cached objects */
  names(): string[] {
    return [...this.cache.keys()]
  }

  /**
   * copies of the cached objects, or only of those `select` keeps: `select` sees the cached
   * object itself (it must not change it), so a periodic pass over thousands of objects
   * copies only the few it acts on
   */
  list(select?: (obj: Readonly<T>) => boolean): T[] {
    const out: T[] = []
    for (const o of this.cache.values()) if (!select || select(o)) out.push(structuredClone(o))
    return out
  }

  private waitForSync(): Promise<void> {
    if (this.synced || this.stopped) return Promise.resolve()
    return new Promise((resolve) => this.syncedWaiters.push(resolve))
  }

  private async relist(): Promise<void> {
    if (this.stopped) return
    let result
    try {
      result = await this.client.list({ labelSelector: this.opts.labelSelector })
    } catch (err) {
      this.log.warn({ kind: this.client.kind, err: String(err) }, 'list failed; retrying')
      return this.retry(() => this.relist())
    }
    if (this.stopped) return
    this.replace(result.items)
    this.relists++
    this.lastResourceVersion = result.resourceVersion
    this.failures = 0
    if (!this.synced) {
      this.synced = true
      for (const w of this.syncedWaiters.splice(0)) w()
    }
    this.startWatch()
  }

  private startWatch(): void {
    if (this.stopped) return
    this.watch = this.client.watch(
      this.lastResourceVersion,
      {
        onEvent: (e) => this.onEvent(e),
        onClose: (err) => this.onClose(err),
      },
      { labelSelector: this.opts.labelSelector, allowBookmarks: true },
    )
  }

  private onEvent(e: WatchEvent<T>): void {
    if (this.stopped) return
    this.failures = 0
    if (e.type === 'BOOKMARK') {
      this.lastResourceVersion = e.resourceVersion
      return
    }
    const obj = e.object
    const name = obj.metadata.name
    this.lastResourceVersion = obj.metadata.resourceVersion
    const old = this.cache.get(name)
    if (e.type === 'DELETED') {
      this.cache.delete(name)
      this.emit((h) => h.onDelete?.(obj))
    } else {
      this.cache.set(name, obj)
      if (old) this.emit((h) => h.onUpdate?.(old, obj))
      else this.emit((h) => h.onAdd?.(obj))
    }
  }

  private onClose(err?: Error): void {
    this.watch = undefined
    if (this.stopped) return
    if (err && isGone(err)) {
      this.log.info({ kind: this.client.kind }, 'watch expired (410 Gone); relisting')
      return this.retry(() => this.relist())
    }
    if (err) this.log.warn({ kind: this.client.kind, err: String(err) }, 'watch failed; reconnecting')
    this.retry(() => this.startWatch())
  }

  private retry(fn: () => void | Promise<void>): void {
    if (this.stopped) return
    const delay = backoffDelay(this.failures++, this.backoff)
    this.retryTimer = setTimeout(() => void fn(), delay)
  }

  /** make the cache equal to a fresh list, reporting the differences */
  private replace(items: T[]): void {
    const seen = new Set<string>()
    for (const obj of items) {
      const name = obj.metadata.name
      seen.add(name)
      const old = this.cache.get(name)
      this.cache.set(name, obj)
      if (!old) this.emit((h) => h.onAdd?.(obj))
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit((h) => h.onUpdate?.(old, obj))
    }
    for (const [name, old] of [...this.cache]) {
      if (seen.has(name)) continue
      this.cache.delete(name)
      this.emit((h) => h.onDelete?.(old))
    }
  }

  private resync(): void {
    for (const obj of this.cache.values()) this.emit((h) => h.onUpdate?.(obj, obj))
  }

  private emit(fn: (h: InformerHandlers<T>) => void): void {
    for (const h of this.handlers) {
      try {
        fn(h)
      } catch (err) {
        this.log.error({ kind: this.client.kind, err: String(err) }, 'informer handler threw')
      }
    }
  }
}
