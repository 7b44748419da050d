// The operator's one call to a pod's API: configure a claimed pod. Transient failures
// are retryable, a 4xx final; a 409 is an earlier attempt of ours that succeeded (pods are
// single-use), confirmed by /healthz. The request bytes are zeroed once sent (they may
// hold auth-state). Design: docs/operator.md#pods-on-kubernetes
import http from 'node:http'
import { ConfigureResult, HealthResult, podRoutes, type ConfigureInput } from '../contracts/pod-api.ts'
import type { SandboxKind } from '../crds/types.ts'
import { failSpan, SpanKind, startSpan, traceHeaders, withSpan } from '../telemetry/tracing.ts'

export type { ConfigureInput }

/** ok: configured, with what isolates the pod's pages when the pod said */
export type ConfigureOutcome = { ok: true; sandbox?: SandboxKind } | { ok: false; retryable: boolean; message: string }

/** the most of a reply read (an error body or the health probe's) */
const MAX_REPLY = 64 * 1024

/**
 * Configures a pod for its session, as one span (the session's start trace, when the
 * reconcile runs in it) whose context the pod receives in `traceparent`.
 */
export function configurePod(endpoint: string, token: string, body: ConfigureInput, timeoutMs: number): Promise<ConfigureOutcome> {
  const span = startSpan('pod.configure', { kind: SpanKind.CLIENT, attributes: { 'nightjar.session.id': body.sessionId } })
  return withSpan(span, () => configure(endpoint, token, body, timeoutMs)).then((outcome) => {
    if (outcome.ok) span.setAttribute('nightjar.outcome', 'ok')
    else failSpan(span, { code: outcome.retryable ? 'configure_retryable' : 'configure_rejected' })
    span.end()
    return outcome
  })
}

async function configure(endpoint: string, token: string, body: ConfigureInput, timeoutMs: number): Promise<ConfigureOutcome> {
  const route = podRoutes.configure
  const payload = Buffer.from(JSON.stringify(body))
  let reply: Reply
  try {
    reply = await request(new URL(route.path, endpoint), route.method, timeoutMs, { ...traceHeaders(), authorization: `Bearer ${token}` }, payload)
  } catch (err) {
    return { ok: false, retryable: true, message: `configure request failed (${failureName(err)})` }
  } finally {
    payload.fill(0)
  }
  const { status } = reply
  if (status >= 200 && status < 300) return { ok: true, sandbox: parsed(ConfigureResult, reply.body)?.sandbox }
  if (status === 409) {
    const health = await configuredHealth(endpoint, timeoutMs)
    if (health) return { ok: true, sandbox: health.sandbox }
  }
  return { ok: false, retryable: status >= 500, message: `configure rejected: HTTP ${status}${errorCode(reply.body)}` }
}

/** the pod's health when it says it is configured already (an earlier attempt of ours) */
async function configuredHealth(endpoint: string, timeoutMs: number): Promise<HealthResult | undefined> {
  const route = podRoutes.health
  try {
    const { status, body } = await request(new URL(route.path, endpoint), route.method, timeoutMs)
    const health = status === 200 ? parsed(HealthResult, body) : undefined
    return health?.configured ? health : undefined
  } catch {
    return undefined
  }
}

function parsed<T>(schema: { safeParse(v: unknown): { data?: T } }, body: Buffer): T | undefined {
  try {
    return schema.safeParse(JSON.parse(body.toString('utf8'))).data
  } catch {
    return undefined
  }
}

/** only the pod's error code (a fixed word such as `bad_request`), never its message */
function errorCode(body: Buffer): string {
  try {
    const code = (JSON.parse(body.toString('utf8')) as { error?: { code?: unknown } } | null)?.error?.code
    return typeof code === 'string' && /^[\w.-]{1,64}$/.test(code) ? ` ${code}` : ''
  } catch {
    return ''
  }
}

/** the failure's kind only: an errno code such as ECONNREFUSED, or TimeoutError */
function failureName(err: unknown): string {
  if (!(err instanceof Error)) return 'error'
  const code = (err as NodeJS.ErrnoException).code
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : err.name === 'TimeoutError' ? 'TimeoutError' : 'error'
}

interface Reply {
  status: number
  body: Buffer
}

/** one request on its own connection, with a deadline for the whole exchange */
function request(url: URL, method: 'GET' | 'POST', timeoutMs: number, headers: Record<string, string> = {}, payload?: Buffer): Promise<Reply> {
  return new Promise<Reply>((resolve, reject) => {
    const req = http.request(url, {
      method,
      agent: false,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) },
    }, (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        size += c.length
        if (size <= MAX_REPLY) chunks.push(c)
      })
      res.on('error', fail)
      res.on('end', () => {
        clearTimeout(timer)
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) })
      })
    })
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), timeoutMs)
    function fail(err: Error) {
      clearTimeout(timer)
      reject(err)
    }
    req.on('error', fail)
    req.end(payload)
  })
}
