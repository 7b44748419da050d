// One error type for every door (REST, MCP, OAuth pages). The body shape is
// {"error": {"code", "message", "reason"?}} and it never carries a secret value.

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'
  | 'E_REACHABILITY_DENIED'
  | 'E_UPSTREAM'

export interface ErrorBody {
  error: { code: string; message: string; reason?: string }
}

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly reason?: string
  readonly headers: Record<string, string>

  constructor(status: number, code: string, message: string, reason?: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
    this.reason = reason
    this.headers = headers
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message }
    if (this.reason !== undefined) error.reason = this.reason
    return { error }
  }
}

export const badRequest = (message: string, reason?: string) => new ApiError(400, 'bad_request', message, reason)
export const unauthorized = () => new ApiError(401, 'unauthorized', 'unauthorized')
export const forbidden = (message: string, reason?: string) => new ApiError(403, 'forbidden', message, reason)
export const missingScope = (scopes: readonly string[]) =>
  new ApiError(403, 'forbidden', `missing required scope: ${scopes.join(' ')}`, 'missing_scope')
/** The one 404 for "unknown" and "someone else's": byte-identical by construction. */
export const notFound = (kind: string) => new ApiError(404, 'not_found', `unknown ${kind}`)
export const conflict = (message: string, reason?: string) => new ApiError(409, 'conflict', message, reason)
export const internal = (message = 'internal error') => new ApiError(500, 'internal', message)

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}
