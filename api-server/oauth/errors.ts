// OAuth endpoints answer in RFC 6749 §5.2 form ({error, error_description}), not the
// service's {"error": {...}} body: OAuth client libraries parse exactly this shape.
// Descriptions are value-free (never a token, code or verifier).
import type { FastifyReply } from 'fastify'

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'unsupported_response_type'
  | 'too_many_requests'

export class OAuthError extends Error {
  readonly error: OAuthErrorCode
  readonly status: number
  readonly headers: Record<string, string>

  constructor(error: OAuthErrorCode, description: string, status?: number, headers: Record<string, string> = {}) {
    super(description)
    this.name = 'OAuthError'
    this.error = error
    // RFC 6749 §5.2: invalid_client is 401; every other token error is 400
    this.status = status ?? (error === 'invalid_client' ? 401 : 400)
    this.headers = headers
  }
}

export function isOAuthError(e: unknown): e is OAuthError {
  return e instanceof OAuthError
}

/** Token responses and errors must never be cached (RFC 6749 §5.1). */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}

export function sendOAuthError(reply: FastifyReply, e: OAuthError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v)
  return noStore(reply).code(e.status).send({ error: e.error, error_description: e.message })
}

/**
 * One form/query parameter as a string. RFC 6749 §3.1: a parameter sent more than
 * once is an invalid request (it would make "which value wins" ambiguous).
 */
export function param(source: unknown, name: string): string | undefined {
  if (!source || typeof source !== 'object') return undefined
  const v = (source as Record<string, unknown>)[name]
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string') throw new OAuthError('invalid_request', `parameter ${name} must be given once, as a string`)
  return v
}

export function requiredParam(source: unknown, name: string): string {
  const v = param(source, name)
  if (v === undefined) throw new OAuthError('invalid_request', `missing parameter: ${name}`)
  return v
}

/**
 * Route-level error handler for OAuth endpoints: a body Fastify cannot parse (bad
 * JSON, unsupported content type, too large) becomes an RFC-shaped invalid_request
 * (or `parseError` where the RFC names another code) instead of the service's
 * {"error": {...}} body; anything else is left to the app's handler.
 */
export function oauthErrorHandler(parseError: OAuthErrorCode = 'invalid_request') {
  return function (this: unknown, err: unknown, req: import('fastify').FastifyRequest, reply: FastifyReply) {
    if (isOAuthError(err)) return sendOAuthError(reply, err)
    const e = err as { statusCode?: number }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      return sendOAuthError(reply, new OAuthError(parseError, 'the request body could not be read (send application/x-www-form-urlencoded or, for registration, application/json)', e.statusCode === 413 ? 413 : 400))
    }
    req.log.error({ err }, 'oauth endpoint failed')
    return noStore(reply).code(500).send({ error: 'server_error', error_description: 'internal error' })
  }
}
