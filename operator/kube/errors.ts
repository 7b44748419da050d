// Maps what @kubernetes/client-node throws (ApiException with a Status body, or the Watch
// helper's Error with statusCode) onto the port's typed errors, so reconcilers and the
// informer branch on NotFound/Conflict/Gone the same way in both runtimes. Messages are
// rebuilt from the Status' reason and message only: ApiException's own message embeds
// response headers and body, which have no business in logs.
import { AlreadyExistsError, ConflictError, GoneError, InvalidError, NotFoundError, ResourceError } from '../../ports/errors.ts'

export interface KubeStatus {
  code: number
  reason: string
  message: string
}

/** the metav1.Status (or bare status code) carried by an error, if any */
export function statusOf(err: unknown): KubeStatus | undefined {
  if (!err || typeof err !== 'object') return undefined
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown }
  const code = typeof e.code === 'number' ? e.code : typeof e.statusCode === 'number' ? e.statusCode : undefined
  if (code === undefined) return undefined
  const status = parseStatusBody(e.body)
  return { code: status?.code ?? code, reason: status?.reason ?? '', message: status?.message ?? '' }
}

/** a metav1.Status from a response body (string or already-parsed object) */
export function parseStatusBody(body: unknown): Partial<KubeStatus> | undefined {
  let obj = body
  if (typeof body === 'string') {
    try {
      obj = JSON.parse(body)
    } catch {
      return undefined
    }
  }
  if (!obj || typeof obj !== 'object') return undefined
  const s = obj as { kind?: unknown; code?: unknown; reason?: unknown; message?: unknown }
  return {
    code: typeof s.code === 'number' ? s.code : undefined,
    reason: typeof s.reason === 'string' ? s.reason : undefined,
    message: typeof s.message === 'string' ? s.message.slice(0, 500) : undefined,
  }
}

/** the port's error for a status; other codes become a plain ResourceError */
export function errorForStatus(status: KubeStatus, kind: string, name: string): ResourceError {
  switch (status.code) {
    case 404:
      return new NotFoundError(kind, name)
    case 409:
      return status.reason === 'AlreadyExists' ? new AlreadyExistsError(kind, name) : new ConflictError(kind, name)
    case 410:
      return new GoneError(status.message || 'too old resource version')
    case 422:
      return new InvalidError(kind, name, status.message || 'invalid')
    default:
      return new ResourceError(status.code, status.reason || 'Unknown', `${kind} "${name}": HTTP ${status.code}${status.message ? `: ${status.message}` : ''}`)
  }
}

/** rethrow-able: a ResourceError when the failure came from the api-server, else the original error */
export function toResourceError(err: unknown, kind: string, name: string): unknown {
  if (err instanceof ResourceError) return err
  const status = statusOf(err)
  return status ? errorForStatus(status, kind, name) : err
}
