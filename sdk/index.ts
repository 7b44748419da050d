// The typed TypeScript client, generated from the operation contracts (sdk/generated.ts:
// plain types, the routes and one method per operation grouped by domain); nj.call(name,
// input) calls any by name. It needs nothing but a global fetch: no zod, no Node types.
//   const nj = new Nightjar({ baseUrl: 'http://127.0.0.1:8080', token: process.env.NIGHTJAR_KEY })
//   const s = await nj.sessions.create({ identity: 'shopper' })
//   await nj.sessions.navigate(s.id, 'https://example.com/')
import { methods, routes } from './generated.ts'
import type { Call, InputOf, OperationName, OutputOf } from './types.ts'

export type { InputOf, OperationName, OutputOf } from './types.ts'
export type * from './generated.ts'

/** The part of fetch the SDK uses (declared here: a consumer may have neither DOM nor Node types). */
export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => Promise<{
  ok: boolean
  status: number
  statusText: string
  text(): Promise<string>
  /** for the file downloads (sessionVideo): the global fetch's Response has both */
  arrayBuffer?(): Promise<ArrayBuffer>
  headers?: { get(name: string): string | null }
}>

/** A byte range of a download: `start` to `end` inclusive (`end` left out: to the end), or the last `suffix` bytes. */
export type ByteRange = { start: number; end?: number } | { suffix: number }

/** A session's video, or the part of it a range asked for. */
export interface VideoDownload {
  /** 200 the whole file, 206 the range asked for */
  status: number
  /** video/webm or video/mp4 */
  contentType: string
  bytes: Uint8Array
  /** the whole file's size in bytes */
  size: number
}

function failure(status: number, statusText: string, text: string): NightjarError {
  let e: { code?: string; message?: string; reason?: string } = {}
  try {
    e = (JSON.parse(text) as { error?: typeof e }).error ?? {}
  } catch {
    // not the API's error body (a proxy's page): the status says it
  }
  return new NightjarError(status, e.code ?? 'error', e.message ?? statusText, e.reason)
}

export class NightjarError extends Error {
  readonly status: number
  readonly code: string
  readonly reason?: string
  constructor(status: number, code: string, message: string, reason?: string) {
    super(message)
    this.status = status
    this.code = code
    this.reason = reason
    this.name = 'NightjarError'
  }
}

export interface NightjarOptions {
  baseUrl: string
  /** an njk_ API key or an njo_ OAuth access token */
  token: string
  /** default: the global fetch (Node 18 and later, browsers, Deno, Bun) */
  fetch?: FetchLike
}

type Methods = ReturnType<typeof methods>

// the generated method groups (nj.sessions, nj.identities, …) are the instance's own fields
export interface Nightjar extends Methods {}

export class Nightjar {
  readonly #base: string
  readonly #token: string
  readonly #fetch: FetchLike

  constructor(opts: NightjarOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '')
    this.#token = opts.token
    this.#fetch = opts.fetch ?? (globalThis as unknown as { fetch: FetchLike }).fetch
    const call: Call = (name, input) => this.call(name, input)
    Object.assign(this, methods(call))
  }

  /** Calls any operation by its name (the MCP tool name). */
  async call<N extends OperationName>(name: N, input: InputOf<N>): Promise<OutputOf<N>> {
    const route = routes[name]
    const rest: Record<string, unknown> = { ...(input as object) }
    const path = route.path.replace(/:([A-Za-z]+)/g, (_, key: string) => {
      const v = rest[key]
      delete rest[key]
      if (typeof v !== 'string' || !v) throw new TypeError(`${name}: ${key} is required`)
      return encodeURIComponent(v)
    })
    const hasBody = route.method !== 'GET' && route.method !== 'DELETE'
    let url = this.#base + path
    if (!hasBody) {
      // by hand, not URLSearchParams: the SDK's types assume no DOM and no Node
      const q = Object.entries(rest).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      if (q.length) url += '?' + q.join('&')
    }
    const res = await this.#fetch(url, {
      method: route.method,
      headers: {
        authorization: `Bearer ${this.#token}`,
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
        // a script drives the session it opened next: a start waits for it to go live as the
        // MCP tool does (30 s, RFC 7240 Prefer) unless the caller gave waitSeconds; REST alone
        // answers 202 pending after 5 s
        ...(name === 'session_start' && rest.waitSeconds === undefined ? { prefer: 'wait=30' } : {}),
      },
      body: hasBody ? JSON.stringify(rest) : undefined,
    })
    const text = await res.text()
    if (!res.ok) throw failure(res.status, res.statusText, text)
    return (text ? JSON.parse(text) : undefined) as OutputOf<N>
  }

  /**
   * A session's video (GET /v1/sessions/:id/video; docs/sessions.md, "Video"), once the
   * session ended: the whole file, or with `range` only those bytes (206), as a player seeks.
   * A session without a stored video is a 404, a range past the end a 416 (NightjarError).
   */
  async sessionVideo(sessionId: string, range?: ByteRange): Promise<VideoDownload> {
    if (typeof sessionId !== 'string' || !sessionId) throw new TypeError('sessionVideo: sessionId is required')
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}` }
    if (range) headers.range = 'suffix' in range ? `bytes=-${range.suffix}` : `bytes=${range.start}-${range.end ?? ''}`
    const res = await this.#fetch(`${this.#base}/v1/sessions/${encodeURIComponent(sessionId)}/video`, { method: 'GET', headers })
    if (!res.ok) throw failure(res.status, res.statusText, await res.text())
    if (!res.arrayBuffer || !res.headers) throw new TypeError('sessionVideo: the fetch given answers without arrayBuffer() or headers')
    const bytes = new Uint8Array(await res.arrayBuffer())
    const whole = res.headers.get('content-range')?.split('/')[1]
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', bytes, size: whole ? Number(whole) : bytes.length }
  }
}
