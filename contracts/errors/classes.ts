// The error objects every door throws or returns. Built by the catalogue's constructors
// (catalogue.ts, make.ts); no message here carries a secret value.

/** The service's error body: {"error": {"code", "message", "reason"?}} plus, for the
 * pod's fill refusals, the value-free audit fields host / field_kind. */
export interface ErrorBody {
  error: { code: string; message: string; reason?: string; host?: string; field_kind?: string }
}

/** The value-free extra fields a pod refusal carries (ERR-11 host, ERR-12 field_kind). */
export type ErrorDetails = { host?: string; field_kind?: string }

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly reason?: string
  readonly headers: Record<string, string>
  readonly details?: ErrorDetails
  /** the catalogue key it was built from (absent on an error rebuilt from a wire body) */
  key?: string

  constructor(status: number, code: string, message: string, reason?: string, headers: Record<string, string> = {}, details?: ErrorDetails) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
    this.reason = reason
    this.headers = headers
    if (details && Object.keys(details).length) this.details = details
  }

  /** adds response headers (WWW-Authenticate challenges, Allow); returns this */
  withHeaders(headers: Record<string, string>): this {
    Object.assign(this.headers, headers)
    return this
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message }
    if (this.reason !== undefined) error.reason = this.reason
    if (this.details) Object.assign(error, this.details)
    return { error }
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}

/** RFC 6749 §5.2 body: what OAuth client libraries parse. */
export interface OAuthErrorBody {
  error: string
  error_description: string
}

/** An OAuth endpoint's error: {error, error_description}, never the service's body. */
export class OAuthError extends Error {
  readonly error: string
  readonly status: number
  readonly headers: Record<string, string>
  key?: string

  constructor(error: string, description: string, status = 400, headers: Record<string, string> = {}) {
    super(description)
    this.name = 'OAuthError'
    this.error = error
    this.status = status
    this.headers = headers
  }

  toBody(): OAuthErrorBody {
    return { error: this.error, error_description: this.message }
  }
}

export function isOAuthError(e: unknown): e is OAuthError {
  return e instanceof OAuthError
}

/** What a page or a plain-text refusal needs: status, text, headers. */
export interface ErrorReply {
  key: string
  status: number
  message: string
  headers: Record<string, string>
}

/** A JSON-RPC error object (MCP protocol errors), data carrying the service's body. */
export interface RpcErrorObject {
  code: number
  message: string
  data?: { status: number } & ErrorBody
}
