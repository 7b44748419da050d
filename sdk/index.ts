// The typed TypeScript client. Method names, inputs and outputs come from the
// operation registry (types only: the SDK pulls in no server code at run time);
// the route table is generated (sdk/routes.ts).
//
//   const nj = new Nightjar({ baseUrl: 'http://127.0.0.1:8080', token: process.env.NIGHTJAR_KEY })
//   const s = await nj.sessions.create({ identity: 'shopper' })   // agent defaults to the key's agent
//   await nj.sessions.navigate(s.id, 'https://example.com/')
import type { z } from 'zod'
import type { RegistryOperation } from '../api-server/operations/registry.ts'
import { routes, type OperationName } from './routes.ts'

type Op<N extends OperationName> = Extract<RegistryOperation, { name: N }>
export type InputOf<N extends OperationName> = Op<N> extends { input: infer S extends z.ZodType } ? z.input<S> : never
export type OutputOf<N extends OperationName> = Op<N> extends { handler: (...a: never[]) => Promise<infer O> } ? O : never

export class NightjarError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly reason?: string) {
    super(message)
    this.name = 'NightjarError'
  }
}

export interface NightjarOptions {
  baseUrl: string
  /** an njk_ API key or an njo_ OAuth access token */
  token: string
  fetch?: typeof fetch
}

export class Nightjar {
  readonly #base: string
  readonly #token: string
  readonly #fetch: typeof fetch

  constructor(opts: NightjarOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '')
    this.#token = opts.token
    this.#fetch = opts.fetch ?? fetch
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
      const q = new URLSearchParams()
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) q.set(k, String(v))
      if ([...q].length) url += '?' + q
    }
    const res = await this.#fetch(url, {
      method: route.method,
      headers: { authorization: `Bearer ${this.#token}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
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

  readonly sessions = {
    /** identity and agent are optional; an absent or empty agent means the credential's own agent */
    create: (input: InputOf<'session_start'> = {}) => this.call('session_start', input),
    spawn: (input: InputOf<'spawn_and_start_session'>) => this.call('spawn_and_start_session', input),
    get: (sessionId: string) => this.call('session_get', { sessionId }),
    list: (input: InputOf<'session_list'> = {}) => this.call('session_list', input),
    end: (sessionId: string) => this.call('session_end', { sessionId }),
    journal: (sessionId: string) => this.call('session_journal', { sessionId }),
    navigate: (sessionId: string, url: string) => this.call('navigate', { sessionId, url }),
    perceive: (sessionId: string) => this.call('perceive', { sessionId }),
    act: (sessionId: string, action: Omit<InputOf<'act'>, 'sessionId'>) => this.call('act', { sessionId, ...action } as InputOf<'act'>),
    fillCredential: (sessionId: string, credentialName: string, selector: string) => this.call('credential_fill', { sessionId, credentialName, selector }),
    screenshot: (sessionId: string) => this.call('screenshot', { sessionId }),
  }

  readonly identities = {
    create: (input: InputOf<'identity_create'>) => this.call('identity_create', input),
    list: () => this.call('identity_list', {} as InputOf<'identity_list'>),
    assumable: () => this.call('identity_list_assumable', {} as InputOf<'identity_list_assumable'>),
  }
}
