// OAuth endpoints answer in RFC 6749 §5.2 form ({error, error_description}), not the
// service's {"error": {...}} body: OAuth client libraries parse exactly this shape.
// Every error is a catalogue entry (oauthErrors.<key>() in contracts/errors.ts);
// descriptions are value-free (never a token, code or verifier).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isOAuthError, OAuthError, oauthErrors } from '../../contracts/errors.ts'
import { stringProblem } from '../door-kit/validate.ts'

export { isOAuthError, OAuthError }
export type { OAuthErrorCode } from '../../contracts/errors.ts'

/** Token responses and errors must never be cached (RFC 6749 §5.1). */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}

export function sendOAuthError(reply: FastifyReply, e: OAuthError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v)
  return noStore(reply).code(e.status).send(e.toBody())
}

/**
 * One form/query parameter as a string. RFC 6749 §3.1: a parameter sent more than
 * once is an invalid request (it would make "which value wins" ambiguous).
 */
export function param(source: unknown, name: string): string | undefined {
  if (!source || typeof source !== 'object') return undefined
  const v = (source as Record<string, unknown>)[name]
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string') throw oauthErrors.oauthParamRepeated(name)
  // never as far as a lookup: Postgres refuses a NUL with an error, not a miss
  if (stringProblem(v)) throw oauthErrors.oauthParamMalformed(name)
  return v
}

export function requiredParam(source: unknown, name: string): string {
  const v = param(source, name)
  if (v === undefined) throw oauthErrors.oauthParamMissing(name)
  return v
}

/**
 * Route-level error handler for OAuth endpoints: a body Fastify cannot parse (bad
 * JSON, unsupported content type, too large) becomes an RFC-shaped invalid_request
 * (invalid_client_metadata at registration, where RFC 7591 names that code) instead
 * of the service's {"error": {...}} body; anything else is left to the app's handler.
 */
export function oauthErrorHandler(endpoint: 'token' | 'registration' = 'token') {
  return function (this: unknown, err: unknown, req: FastifyRequest, reply: FastifyReply) {
    if (isOAuthError(err)) return sendOAuthError(reply, err)
    const e = err as { statusCode?: number }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      const tooLarge = e.statusCode === 413
      return sendOAuthError(reply, endpoint === 'registration'
        ? (tooLarge ? oauthErrors.registrationBodyTooLarge() : oauthErrors.registrationBodyUnreadable())
        : (tooLarge ? oauthErrors.oauthBodyTooLarge() : oauthErrors.oauthBodyUnreadable()))
    }
    req.log.error({ err }, 'oauth endpoint failed')
    return sendOAuthError(reply, oauthErrors.oauthServerError())
  }
}
