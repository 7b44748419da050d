// Resolves the Bearer credential of a request, or throws the one 401.
import type { FastifyRequest } from 'fastify'
import type { AuthContext } from '../auth/context.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import type { Services } from '../services.ts'
import { addressKey } from '../limits/index.ts'

export function resourceMetadataUrl(services: Services): string {
  return `${services.config.baseUrl}/.well-known/oauth-protected-resource/mcp`
}

export function unauthorizedFor(services: Services): ApiError {
  return errors.unauthorized().withHeaders({ 'www-authenticate': `Bearer resource_metadata="${resourceMetadataUrl(services)}"` })
}

export async function requireAuth(services: Services, req: FastifyRequest): Promise<AuthContext> {
  const ctx = await services.bearer.resolve(req.headers.authorization)
  if (ctx) return ctx
  // Only failures are counted (a working token costs no limiter round trip); past the
  // limit the address gets 429 with Retry-After instead of the 401.
  const verdict = await services.limits.bearerAddress.hit(addressKey(req.ip))
  if (!verdict.allowed) throw errors.bearerFailures(verdict.retryAfterSecs)
  throw unauthorizedFor(services)
}
