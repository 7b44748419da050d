// PodClient: the api-server's client for one pod's API, typed from the route table
// in contracts/pod-api.ts, over keep-alive node:http (cheaper per call than fetch). The
// pod's errors come back as the ApiError it sent; a success reply is checked against the
// route's output schema, and one that is not of that shape is the typed 502 node_protocol.
import http from 'node:http'
import { ApiError, errors, fromBody } from '../../contracts/errors.ts'
import { podRoutes, type DriveName, type PodInput, type PodOutput, type PodRouteName } from '../../contracts/pod-api.ts'
import { traceHeaders } from '../../telemetry/tracing.ts'

export interface PodClientOptions {
  /** Per-call ceiling; the pod's own action timeouts are shorter. */
  timeoutMs?: number
}

/** secure_type's input as the caller holds it: the secret as a Buffer, never a string. */
export type SecureTypeRequest = Omit<PodInput<'secure_type'>, 'value' | 'requireEditableField'> & { value: Buffer }

export class PodClient {
  readonly endpoint: string
  readonly #token: string // private field: never shows up in util.inspect or JSON
  readonly #agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 10_000, maxSockets: 16, timeout: 30_000 })
  readonly #timeoutMs: number

  constructor(endpoint: string, token: string, opts: PodClientOptions = {}) {
    this.endpoint = endpoint.replace(/\/+$/, '')
    this.#token = token
    this.#timeoutMs = opts.timeoutMs ?? 150_000
  }

  health(): Promise<PodOutput<'health'>> {
    return this.#call('health')
  }
  configure(input: PodInput<'configure'>): Promise<PodOutput<'configure'>> {
    return this.#call('configure', input)
  }
  /** One driving action (contracts/operations/drive.ts), by its operation name. */
  drive<N extends DriveName>(name: N, input: PodInput<N>): Promise<PodOutput<N>> {
    return this.#call(name, input)
  }
  /** Recordings: start recording every page of the session (idempotent). */
  recordingStart(): Promise<PodOutput<'recording_start'>> {
    return this.#call('recording_start', {})
  }
  /** Recordings: the chunks after `after`, acknowledging everything up to it. */
  recordingRead(input: PodInput<'recording_read'>): Promise<PodOutput<'recording_read'>> {
    return this.#call('recording_read', input)
  }
  /** Video: start encoding what the active tab shows (idempotent). */
  videoStart(input: PodInput<'video_start'>): Promise<PodOutput<'video_start'>> {
    return this.#call('video_start', input)
  }
  /** Video: end the encoding; the file is whole once this answers. */
  videoFinish(): Promise<PodOutput<'video_finish'>> {
    return this.#call('video_finish', {})
  }
  /** Video: the finished file's bytes from `offset` (base64, at most VIDEO_READ_BYTES). */
  videoRead(input: PodInput<'video_read'>): Promise<PodOutput<'video_read'>> {
    return this.#call('video_read', input)
  }
  /** Extensions: one extension's files, written under the pod's private folder. */
  extensionPut(input: PodInput<'extension_put'>): Promise<PodOutput<'extension_put'>> {
    return this.#call('extension_put', input)
  }
  /** Extensions: the session moves into a browser that loads the ones put (before it is live). */
  extensionsLoad(): Promise<PodOutput<'extensions_load'>> {
    return this.#call('extensions_load', {})
  }
  /** Credential-equivalent: seal it, never log it. */
  storageState(): Promise<PodOutput<'storage_state'>> {
    return this.#call('storage_state', {})
  }

  /**
   * The secure fill. `value` stays the caller's Buffer (zero it once this resolves or
   * rejects); the request bytes built from it are zeroed here after the reply.
   */
  secureType(input: SecureTypeRequest): Promise<PodOutput<'secure_type'>> {
    const body: PodInput<'secure_type'> = {
      selector: input.selector,
      ref: input.ref,
      value: input.value.toString('base64'),
      allowlist: input.allowlist,
      requireEditableField: true,
      timeoutMs: input.timeoutMs,
      changes: input.changes,
    }
    const bytes = Buffer.from(JSON.stringify(body))
    return this.#call('secure_type', bytes).finally(() => bytes.fill(0))
  }

  /**
   * The session's upstream proxy with its opened credentials (docs/proxy.md); the request
   * bytes built from them are zeroed here after the reply.
   */
  egressProxy(input: PodInput<'egress_proxy'>): Promise<PodOutput<'egress_proxy'>> {
    const bytes = Buffer.from(JSON.stringify(input))
    return this.#call('egress_proxy', bytes).finally(() => bytes.fill(0))
  }

  /** Drops idle keep-alive sockets (call when the session ends). */
  close(): void {
    this.#agent.destroy()
  }

  /** One route of the contract; `body` is its input, or that input already serialized (to be zeroed by the caller). */
  #call<N extends PodRouteName>(name: N, body?: PodInput<N> | Buffer): Promise<PodOutput<N>> {
    const { method, path } = podRoutes[name]
    const payload = method === 'GET' || body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body))
    return new Promise<PodOutput<N>>((resolve, reject) => {
      const req = http.request(
        this.endpoint + path,
        {
          method,
          agent: this.#agent,
          headers: {
            // the active trace (a driving call's span), so the pod's span joins it
            ...traceHeaders(),
            authorization: `Bearer ${this.#token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('error', () => reject(errors.podUnreachable()))
          res.on('end', () => {
            let parsed: unknown
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'))
            } catch {
              return reject(errors.podProtocol())
            }
            const status = res.statusCode ?? 502
            if (status < 200 || status >= 300) return reject(fromBody(status, parsed))
            // checked against the route's declared output, not cast: a reply of another shape
            // is the pod's protocol error (502 node_protocol), never a half-read answer. The
            // reply itself is handed on as sent, so what callers see is unchanged.
            if (!podRoutes[name].output.safeParse(parsed).success) return reject(errors.podProtocol())
            resolve(parsed as PodOutput<N>)
          })
        },
      )
      req.setTimeout(this.#timeoutMs, () => req.destroy(errors.podTimeout()))
      req.on('error', (e) => reject(e instanceof ApiError ? e : errors.podUnreachable()))
      req.end(payload)
    })
  }
}
