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
}>

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
    const body = text ? JSON.parse(text) : undefined
    if (!res.ok) {
      const e = body?.error ?? {}
      throw new NightjarError(res.status, e.code ?? 'error', e.message ?? res.statusText, e.reason)
    }
    return body as OutputOf<N>
  }
}
