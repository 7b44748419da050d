// Node-side errors. Same body shape as everywhere ({"error":{code,message,reason?}}),
// plus the value-free audit fields the fill refusals carry (host, field_kind).
import { ApiError, type ErrorBody } from '../contracts/errors.ts'

export type ErrorDetails = { host?: string; field_kind?: string }

export class NodeError extends ApiError {
  readonly details: ErrorDetails
  constructor(status: number, code: string, message: string, reason?: string, details: ErrorDetails = {}) {
    super(status, code, message, reason)
    this.details = details
  }
  override toBody(): ErrorBody {
    const body = super.toBody()
    Object.assign(body.error, this.details)
    return body
  }
}

export const notConfigured = () => new ApiError(409, 'conflict', 'session is not configured', 'not_configured')

export function isTimeout(e: unknown): boolean {
  return e instanceof Error && e.name === 'TimeoutError'
}

/** First line of a Playwright message, without the "locator.click: " call prefix. */
function headline(e: Error): string {
  return (e.message.split('\n')[0] ?? '').replace(/^[\w.]+: /, '').slice(0, 300)
}

/**
 * Maps a Playwright failure of an ordinary action (never of the secure fill, which
 * reports its own value-free errors) to an ApiError.
 */
export function actionError(e: unknown, what: string): ApiError {
  if (e instanceof ApiError) return e
  if (!(e instanceof Error)) return new ApiError(500, 'internal', 'internal error')
  const msg = e.message
  if (isTimeout(e)) {
    const waiting = /waiting for (.*)/.exec(msg)?.[1]
    return new ApiError(504, 'E_UPSTREAM', `${what} timed out${waiting ? ` waiting for ${waiting.slice(0, 300)}` : ''}`, 'TIMEOUT')
  }
  if (/strict mode violation/.test(msg)) return new ApiError(400, 'bad_request', headline(e), 'AMBIGUOUS_SELECTOR')
  if (/Unexpected token|is not a valid selector|Unknown engine|Failed to parse selector|Malformed/i.test(msg)) {
    return new ApiError(400, 'bad_request', headline(e), 'INVALID_SELECTOR')
  }
  if (/Target page, context or browser has been closed|Browser has been closed/.test(msg)) {
    return new ApiError(503, 'unavailable', 'browser is closed', 'BROWSER_CLOSED')
  }
  return new ApiError(502, 'E_UPSTREAM', `${what} failed: ${headline(e)}`, 'ACTION_FAILED')
}
