// NodeClient: the api-server's typed client for one pod's node API. Keep-alive
// node:http (cheaper per call than fetch); errors come back as ApiError carrying the
// node's status/code/reason, and NodeApiError.details for the fill refusals' audit
// fields (host, field_kind).
import http from 'node:http'
import { ApiError } from '../contracts/errors.ts'
import type * as C from './contract.ts'
import { NodeError, type ErrorDetails } from './errors.ts'

export { NodeError as NodeApiError }
export type { ErrorDetails }

export interface NodeClientOptions {
  /** Per-call ceiling; the node's own action timeouts are shorter. */
  timeoutMs?: number
}

export class NodeClient {
  readonly endpoint: string
  readonly #token: string // private field: never shows up in util.inspect or JSON
  readonly #agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 10_000, maxSockets: 16, timeout: 30_000 })
  readonly #timeoutMs: number

  constructor(endpoint: string, token: string, opts: NodeClientOptions = {}) {
    this.endpoint = endpoint.replace(/\/+$/, '')
    this.#token = token
    this.#timeoutMs = opts.timeoutMs ?? 150_000
  }

  health(): Promise<C.HealthResult> {
    return this.#call('GET', '/healthz')
  }
  configure(input: C.ConfigureInput): Promise<C.ConfigureResult> {
    return this.#call('POST', '/v1/configure', input)
  }
  navigate(input: C.NavigateInput): Promise<C.NavigateResult> {
    return this.#call('POST', '/v1/navigate', input)
  }
  perceive(): Promise<C.PerceiveResult> {
    return this.#call('POST', '/v1/perceive', {})
  }
  act(input: C.ActInput): Promise<C.ActResult> {
    return this.#call('POST', '/v1/act', input)
  }
  screenshot(input: C.ScreenshotInput = {}): Promise<C.ScreenshotResult> {
    return this.#call('POST', '/v1/screenshot', input)
  }
  pdf(): Promise<C.PdfResult> {
    return this.#call('POST', '/v1/pdf', {})
  }
  console(): Promise<C.ConsoleResult> {
    return this.#call('POST', '/v1/console', {})
  }
  goBack(input: C.HistoryInput = {}): Promise<C.NavigateResult> {
    return this.#call('POST', '/v1/go_back', input)
  }
  reload(input: C.HistoryInput = {}): Promise<C.NavigateResult> {
    return this.#call('POST', '/v1/reload', input)
  }
  waitFor(input: C.WaitForInput): Promise<C.OkResult> {
    return this.#call('POST', '/v1/wait_for', input)
  }
  selectOption(input: C.SelectOptionInput): Promise<C.SelectOptionResult> {
    return this.#call('POST', '/v1/select_option', input)
  }
  hover(input: C.HoverInput): Promise<C.OkResult> {
    return this.#call('POST', '/v1/hover', input)
  }
  /** Credential-equivalent: seal it, never log it. */
  storageState(): Promise<C.StorageStateResult> {
    return this.#call('POST', '/v1/storage_state', {})
  }

  /**
   * The secure fill. `value` stays the caller's Buffer (zero it once this resolves or
   * rejects); the request bytes built from it are zeroed here after the reply.
   */
  secureType(input: { selector: string; value: Buffer; allowlist: readonly string[]; timeoutMs?: number }): Promise<C.SecureTypeResult> {
    const body = Buffer.from(
      JSON.stringify({
        selector: input.selector,
        value: input.value.toString('base64'),
        allowlist: input.allowlist,
        requireEditableField: true,
        timeoutMs: input.timeoutMs,
      }),
    )
    return this.#call<C.SecureTypeResult>('POST', '/v1/secure_type', body).finally(() => body.fill(0))
  }

  /** Drops idle keep-alive sockets (call when the session ends). */
  close(): void {
    this.#agent.destroy()
  }

  #call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body))
    return new Promise<T>((resolve, reject) => {
      const req = http.request(
        this.endpoint + path,
        {
          method,
          agent: this.#agent,
          headers: {
            authorization: `Bearer ${this.#token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('error', () => reject(unreachable()))
          res.on('end', () => {
            let parsed: unknown
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'))
            } catch {
              return reject(new ApiError(502, 'E_UPSTREAM', 'browser node sent an unreadable reply', 'NODE_PROTOCOL'))
            }
            const status = res.statusCode ?? 502
            if (status >= 200 && status < 300) return resolve(parsed as T)
            reject(toError(status, parsed))
          })
        },
      )
      req.setTimeout(this.#timeoutMs, () => req.destroy(new ApiError(504, 'E_UPSTREAM', 'browser node timed out', 'NODE_TIMEOUT')))
      req.on('error', (e) => reject(e instanceof ApiError ? e : unreachable()))
      req.end(payload)
    })
  }
}

function unreachable(): ApiError {
  return new ApiError(502, 'E_UPSTREAM', 'browser node unreachable', 'NODE_UNREACHABLE')
}

function toError(status: number, body: unknown): NodeError {
  const e = (body as { error?: Record<string, unknown> } | null)?.error ?? {}
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
  const details: ErrorDetails = {}
  if (str(e.host) !== undefined) details.host = str(e.host)
  if (str(e.field_kind) !== undefined) details.field_kind = str(e.field_kind)
  return new NodeError(status, str(e.code) ?? 'E_UPSTREAM', str(e.message) ?? `browser node error ${status}`, str(e.reason), details)
}
