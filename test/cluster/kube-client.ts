// The test node's own Kubernetes API client (not a test file): JSON requests over node:https
// with the cluster's CA and a bearer token, and a list+watch cache. Deliberately not the
// product's client nor @kubernetes/client-node: the node is the judge of those, so it
// speaks the wire protocol directly and shares no code with what it tests.
import { Agent, request } from 'node:https'

export interface ApiAccess {
  /** https://host:port */
  url: string
  caPem: string
  /** bearer token; never logged */
  token: string
}

export type Obj = Record<string, any>

export class ApiError extends Error {
  readonly status: number
  readonly reason: string
  constructor(status: number, reason: string, message: string) {
    super(message)
    this.status = status
    this.reason = reason
  }
}

export class KubeClient {
  /** requests share keep-alive sockets; watches (long-lived streams) get their own agent */
  private readonly agent: Agent
  private readonly watchAgent: Agent

  readonly access: ApiAccess
  constructor(access: ApiAccess, opts: { maxSockets?: number } = {}) {
    this.access = access
    this.agent = new Agent({ ca: access.caPem, keepAlive: true, maxSockets: opts.maxSockets ?? 32 })
    this.watchAgent = new Agent({ ca: access.caPem, keepAlive: false })
  }

  async request<T = Obj>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(this.access.url + path, {
        method,
        agent: this.agent,
        timeout: 30_000,
        headers: {
          authorization: `Bearer ${this.access.token}`,
          accept: 'application/json',
          ...(payload ? { 'content-type': contentType, 'content-length': payload.length } : {}),
        },
      }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      })
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)))
      req.on('error', reject)
      req.end(payload)
    })
    let parsed: any
    try { parsed = text ? JSON.parse(text) : {} } catch { parsed = { message: text } }
    if (status >= 400) throw new ApiError(status, parsed?.reason ?? '', `${method} ${path}: ${status} ${parsed?.message ?? ''}`)
    return parsed as T
  }

  get<T = Obj>(path: string) { return this.request<T>('GET', path) }
  post<T = Obj>(path: string, body: unknown) { return this.request<T>('POST', path, body) }
  mergePatch<T = Obj>(path: string, body: unknown) { return this.request<T>('PATCH', path, body, 'application/merge-patch+json') }
  delete<T = Obj>(path: string, body?: unknown) { return this.request<T>('DELETE', path, body) }

  /** one watch stream; resolves when it ends (server timeout, error event, socket error) */
  watchOnce(path: string, onEvent: (type: string, object: Obj) => void, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(this.access.url + path, {
        agent: this.watchAgent,
        signal,
        headers: { authorization: `Bearer ${this.access.token}`, accept: 'application/json' },
      }, (res) => {
        if (res.statusCode !== 200) {
          let text = ''
          res.on('data', (c) => (text += c))
          res.on('end', () => reject(new ApiError(res.statusCode ?? 0, '', `watch ${path}: ${res.statusCode} ${text.slice(0, 200)}`)))
          return
        }
        let buf = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buf += chunk
          let nl: number
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim()
            buf = buf.slice(nl + 1)
            if (!line) continue
            const ev = JSON.parse(line) as { type: string; object: Obj }
            onEvent(ev.type, ev.object)
          }
        })
        res.on('end', () => resolve())
        res.on('error', reject)
        res.on('aborted', () => resolve())
      })
      req.on('error', reject)
      req.end()
    })
  }

  close(): void {
    this.agent.destroy()
    this.watchAgent.destroy()
  }
}

export type InformerEvent = 'ADDED' | 'MODIFIED' | 'DELETED'

/**
 * A list+watch cache of one collection (all namespaces). Re-lists on 410 Gone and after
 * errors, and then reports what changed while it was not watching — including objects
 * that vanished — as ordinary events, so handlers never need a "resync" path.
 */
export class Informer {
  readonly store = new Map<string, Obj>()
  private readonly abort = new AbortController()
  private synced!: () => void
  /** resolves after the first list has been delivered */
  readonly ready = new Promise<void>((r) => (this.synced = r))
  private stopped = false

  private readonly client: KubeClient
  /** collection path, e.g. /api/v1/pods */
  private readonly path: string
  private readonly handler: (type: InformerEvent, obj: Obj, old?: Obj) => void
  private readonly log: (m: string) => void
  constructor(
    client: KubeClient,
    path: string,
    handler: (type: InformerEvent, obj: Obj, old?: Obj) => void,
    log: (m: string) => void = () => {},
  ) {
    this.client = client
    this.path = path
    this.handler = handler
    this.log = log
  }

  static key(o: Obj): string {
    return `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  }

  start(): this {
    void this.loop()
    return this
  }

  stop(): void {
    this.stopped = true
    this.abort.abort()
  }

  private async list(): Promise<string> {
    const items: Obj[] = []
    let cont = ''
    let rv = ''
    do {
      const page = await this.client.get(`${this.path}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`)
      items.push(...(page.items ?? []))
      rv = page.metadata.resourceVersion
      cont = page.metadata.continue ?? ''
    } while (cont)
    const seen = new Set<string>()
    for (const o of items) {
      const k = Informer.key(o)
      seen.add(k)
      this.apply('ADDED', o)
    }
    for (const [k, o] of [...this.store]) if (!seen.has(k)) this.apply('DELETED', o)
    return rv
  }

  /** turns list results and watch events into changes against the cache */
  private apply(type: string, o: Obj): void {
    const k = Informer.key(o)
    const old = this.store.get(k)
    if (type === 'DELETED') {
      if (!old) return
      this.store.delete(k)
      this.emit('DELETED', o, old)
      return
    }
    if (old && old.metadata.resourceVersion === o.metadata.resourceVersion) return
    this.store.set(k, o)
    this.emit(old ? 'MODIFIED' : 'ADDED', o, old)
  }

  private emit(type: InformerEvent, o: Obj, old?: Obj): void {
    try {
      this.handler(type, o, old)
    } catch (e) {
      this.log(`informer ${this.path}: handler failed: ${(e as Error).stack}`)
    }
  }

  private async loop(): Promise<void> {
    let rv = ''
    let delay = 100
    let lastError = ''
    while (!this.stopped) {
      try {
        if (!rv) {
          rv = await this.list()
          this.synced()
        }
        let gone = false
        await this.client.watchOnce(`${this.path}?watch=true&allowWatchBookmarks=true&timeoutSeconds=240&resourceVersion=${rv}`, (type, obj) => {
          if (type === 'BOOKMARK') { rv = obj.metadata.resourceVersion; return }
          if (type === 'ERROR') { gone = obj.code === 410; if (!gone) this.log(`watch ${this.path}: ${obj.message}`); return }
          rv = obj.metadata.resourceVersion
          this.apply(type, obj)
        }, this.abort.signal)
        if (gone) rv = ''
        delay = 100
        lastError = ''
      } catch (e) {
        if (this.stopped) return
        const msg = (e as Error).message
        if (!(e instanceof ApiError && e.status === 410) && msg !== lastError) this.log(`watch ${this.path}: ${msg}; retrying`)
        lastError = msg
        // an error mid-stream may have lost events: start over from a fresh list
        rv = ''
        await new Promise((r) => setTimeout(r, delay))
        delay = Math.min(delay * 2, 2000)
      }
    }
  }
}

/** at most `limit` tasks at a time (status patches for a thousand pods stay polite) */
export class TaskQueue {
  private running = 0
  private readonly waiting: (() => void)[] = []
  private readonly limit: number
  constructor(limit: number) {
    this.limit = limit
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((r) => this.waiting.push(r))
    this.running++
    try {
      return await task()
    } finally {
      this.running--
      this.waiting.shift()?.()
    }
  }
}
