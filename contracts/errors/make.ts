// The constructors derived from the catalogue: one typed function per entry.
//   throw errors.sessionNotLive(row.status)          → ApiError (409 conflict session_not_live)
//   throw oauthErrors.slowDown(interval)             → OAuthError (400 slow_down)
//   const p = pageErrors.signInFailed()              → {status, message, headers} for a page
//   refuse(socket, upgradeErrors.joinUnauthorized()) → plain-text upgrade refusal
//   rpcErrors.mcpUnknownTool()                       → JSON-RPC error object
import { ApiError, OAuthError, type ErrorBody, type ErrorDetails, type ErrorReply, type RpcErrorObject } from './classes.ts'
import type { AnyEntry, ApiEntry, ArgsOf, RpcEntry } from './entry.ts'
import { API_ERRORS, OAUTH_ERRORS, PAGE_ERRORS, RPC_ERRORS, UPGRADE_ERRORS, type ApiErrorKey } from './catalogue.ts'

type Parts = { reason?: string; message: string; headers: Record<string, string>; details?: ErrorDetails }

/** Splits a constructor's arguments: [reason if one of a set, ...message args, audit field]. */
function parts(e: AnyEntry, args: readonly unknown[]): Parts {
  let i = 0
  const reason = Array.isArray(e.reason) ? String(args[i++]) : ((e.reason as string | null) ?? undefined)
  const first = i
  let message: string
  if (typeof e.message === 'function') {
    message = e.message(...args.slice(i, i + e.message.length))
    i += e.message.length
  } else message = e.message
  const headers: Record<string, string> = { ...(e.headers ?? {}) }
  if (e.retryAfter === 'arg') headers['retry-after'] = String(Math.max(1, Math.ceil(Number(args[first]))))
  else if (e.retryAfter !== undefined) headers['retry-after'] = String(e.retryAfter)
  const field = (e as ApiEntry).details
  const details = field ? { [field]: String(args[i] ?? '') } : undefined
  return { reason, message, headers, details }
}

type Builders<T extends Record<string, AnyEntry>, R> = { [K in keyof T]: (...args: ArgsOf<T[K]>) => R }

function builders<T extends Record<string, AnyEntry>, R>(table: T, make: (key: string, e: AnyEntry, p: Parts) => R): Builders<T, R> {
  const out: Record<string, (...args: unknown[]) => R> = {}
  for (const [key, e] of Object.entries(table)) out[key] = (...args: unknown[]) => make(key, e, parts(e, args))
  return out as Builders<T, R>
}

/** The service's JSON errors. */
export const errors = builders(API_ERRORS, (key, e, p) => {
  const err = new ApiError(e.status, e.code as string, p.message, p.reason, p.headers, p.details)
  err.key = key
  return err
})

/** OAuth endpoints' RFC 6749 errors. */
export const oauthErrors = builders(OAUTH_ERRORS, (key, e, p) => {
  const err = new OAuthError(e.code as string, p.message, e.status, p.headers)
  err.key = key
  return err
})

const reply = (key: string, e: AnyEntry, p: Parts): ErrorReply => ({ key, status: e.status, message: p.message, headers: p.headers })

/** Pages showing an error message (status, message, headers). */
export const pageErrors = builders(PAGE_ERRORS, reply)

/** Plain-text refusals of a WebSocket upgrade. */
export const upgradeErrors = builders(UPGRADE_ERRORS, reply)

/** JSON-RPC errors of the MCP door. */
export const rpcErrors = builders(RPC_ERRORS, (_key, e, p): RpcErrorObject => {
  const data = (e as RpcEntry).data
  return data ? { code: e.code as number, message: p.message, data: { status: e.status, error: { code: data, message: p.message } } } : { code: e.code as number, message: p.message }
})

/** The HTTP status a JSON-RPC error of the MCP door is answered with (when it is not inside a 200). */
export function rpcStatus(key: keyof typeof RPC_ERRORS): number {
  return RPC_ERRORS[key].status
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' }

/** The raw HTTP response refusing a WebSocket upgrade: status line, headers, the message as plain text. */
export function upgradeRefusal(r: ErrorReply): string {
  return `HTTP/1.1 ${r.status} ${STATUS_TEXT[r.status] ?? 'Error'}\r\n` +
    Object.entries(r.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
    `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(r.message)}\r\nConnection: close\r\n\r\n${r.message}`
}

/**
 * Is `e` the catalogue's error `key`? Compares status, code and reason, so it also
 * holds for an error rebuilt from a wire body (the pod's, through PodClient).
 */
export function isError(e: unknown, key: ApiErrorKey): e is ApiError {
  if (!(e instanceof ApiError)) return false
  if (e.key !== undefined) return e.key === key
  const entry: ApiEntry = API_ERRORS[key]
  if (e.status !== entry.status || e.code !== entry.code) return false
  const r = entry.reason
  return Array.isArray(r) ? r.includes(e.reason ?? '') : (e.reason ?? null) === r
}

/** The catalogue entry (key) an error on the wire matches, or undefined for one we never declared. */
export function keyOf(status: number, body: ErrorBody['error']): ApiErrorKey | undefined {
  for (const [key, e] of Object.entries(API_ERRORS) as [ApiErrorKey, ApiEntry][]) {
    if (e.status !== status || e.code !== body.code) continue
    const r = e.reason
    if (Array.isArray(r) ? r.includes(body.reason ?? '') : (body.reason ?? null) === r) return key
  }
  return undefined
}

/**
 * An ApiError from a service error body received over HTTP (the pod's replies, the
 * CLI's calls): status, code, message, reason and the value-free audit fields, as sent.
 */
export function fromBody(status: number, body: unknown, fallback: ApiErrorKey = 'podProtocol'): ApiError {
  const e = (body as { error?: Record<string, unknown> } | null)?.error
  if (!e || typeof e !== 'object' || typeof e.code !== 'string') return errors[fallback as 'podProtocol']()
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
  const details: ErrorDetails = {}
  if (str(e.host) !== undefined) details.host = str(e.host)
  if (str(e.field_kind) !== undefined) details.field_kind = str(e.field_kind)
  const err = new ApiError(status, e.code, str(e.message) ?? `error ${status}`, str(e.reason), {}, details)
  const key = keyOf(status, { code: e.code, message: err.message, reason: err.reason })
  if (key) err.key = key
  return err
}

/** One line for a terminal: the message, then code and reason (the catalogue's words). */
export function describeError(e: ApiError | OAuthError): string {
  if (e instanceof OAuthError) return `${e.message} (${e.error})`
  return `${e.message} (${e.code}${e.reason ? `, ${e.reason}` : ''})`
}
