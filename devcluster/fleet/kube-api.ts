// The simulated fleet's way to the API server: JSON calls and watches over one keep-alive
// HTTPS agent with the supervisor's admin token. Plain node:https rather than client-node's
// generated API: the fleet writes two status patches per pod at ten thousand pods, and the
// generated client builds a request object and a TLS agent per call (docs/operator.md's
// "Talking to the API server" measured that cost); the fleet needs four verbs and a watch.
import { Agent, request } from 'node:https'

export interface ApiAccess {
  url: string
  token: string
  caPem: string
}

export interface ApiReply {
  status: number
  body: any
}

/** a watch's event, as the API server streams it */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'
  object: T
}

export const MERGE_PATCH = 'application/merge-patch+json'

export class KubeApi {
  readonly #access: ApiAccess
  readonly #agent: Agent

  constructor(access: ApiAccess) {
    this.#access = access
    this.#agent = new Agent({ keepAlive: true, maxSockets: 16, ca: access.caPem })
  }

  /** one call; answers whatever status the API server gave (a network failure rejects) */
  call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<ApiReply> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    return new Promise((resolve, reject) => {
      const req = request(`${this.#access.url}${path}`, {
        method, agent: this.#agent, timeout: 30_000,
        // a length, never chunks: the API server ignores a chunked DELETE body (so the grace
        // period in it) and reads its chunks as the connection's next request
        headers: { authorization: `Bearer ${this.#access.token}`, accept: 'application/json', ...(payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {}) },
      }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let parsed: unknown = text
          try { parsed = text ? JSON.parse(text) : undefined } catch { /* not JSON: kept as text */ }
          resolve({ status: res.statusCode ?? 0, body: parsed })
        })
        res.on('error', reject)
      })
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)))
      req.on('error', reject)
      req.end(payload)
    })
  }

  /** a call that must succeed (2xx); else it throws with the API server's message */
  async must(method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
    const r = await this.call(method, path, body, contentType)
    if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path}: ${r.status} ${typeof r.body === 'object' ? r.body?.message : String(r.body).slice(0, 200)}`)
    return r.body
  }

  /**
   * Lists `path` (a collection), then watches it from that list's version, and again after
   * every end of the stream; a version too old (410) lists again. `onList` gets each list's
   * items (the caller reconciles what it missed), `onEvent` each change. Resolves its stop.
   */
  informer<T>(path: string, handlers: { onList(items: T[]): void; onEvent(e: WatchEvent<T>): void; onError(err: Error): void }): () => void {
    let stopped = false
    let current: { destroy(): void } | undefined
    const sep = path.includes('?') ? '&' : '?'
    const loop = async () => {
      let version: string | undefined
      while (!stopped) {
        try {
          if (!version) {
            const list = await this.must('GET', path)
            version = list.metadata.resourceVersion as string
            handlers.onList(list.items as T[])
          }
          version = await this.#watchOnce<T>(`${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${version}`, handlers.onEvent, (c) => (current = c)) ?? version
        } catch (err) {
          if ((err as { gone?: boolean }).gone) version = undefined
          else if (!stopped) {
            handlers.onError(err as Error)
            await new Promise((r) => setTimeout(r, 1000))
          }
        }
      }
    }
    void loop()
    return () => {
      stopped = true
      current?.destroy()
    }
  }

  /** one watch stream until it ends: resolves the last version seen */
  #watchOnce<T>(path: string, onEvent: (e: WatchEvent<T>) => void, track: (c: { destroy(): void }) => void): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      let last: string | undefined
      const req = request(`${this.#access.url}${path}`, { method: 'GET', agent: this.#agent, headers: { authorization: `Bearer ${this.#access.token}` } }, (res) => {
        if (res.statusCode === 410) return void reject(Object.assign(new Error('gone'), { gone: true }))
        if (res.statusCode !== 200) return void reject(new Error(`watch ${path}: ${res.statusCode}`))
        let buf = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buf += chunk
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            const line = buf.slice(0, nl)
            buf = buf.slice(nl + 1)
            if (!line.trim()) continue
            const e = JSON.parse(line) as WatchEvent<T & { metadata?: { resourceVersion?: string }; code?: number }>
            if (e.type === 'ERROR') {
              req.destroy()
              return void reject(Object.assign(new Error(`watch: ${JSON.stringify(e.object).slice(0, 200)}`), { gone: e.object.code === 410 }))
            }
            last = e.object.metadata?.resourceVersion ?? last
            if (e.type !== 'BOOKMARK') onEvent(e as WatchEvent<T>)
          }
        })
        res.on('end', () => resolve(last))
        res.on('error', () => resolve(last))
      })
      req.on('error', reject)
      track(req)
      req.end()
    })
  }

  close(): void {
    this.#agent.destroy()
  }
}
