// CDP messages as the pod's filter reads and answers them: a client's request parsed, and a
// refusal in CDP's own error shape. Shared by the filter (cdp-proxy.ts) and the page endpoints.

export interface CdpRequest {
  id: number
  method: string
  params?: Record<string, unknown>
  sessionId?: string
}

/** A client message as a CdpRequest, or why it is not one (answered, never forwarded). */
export function parseRequest(text: string): CdpRequest | { invalid: string; id?: number; sessionId?: string } {
  let msg: unknown
  try {
    msg = JSON.parse(text)
  } catch {
    return { invalid: 'message is not JSON' }
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { invalid: 'message is not a JSON object' }
  const m = msg as Record<string, unknown>
  const id = typeof m.id === 'number' && Number.isSafeInteger(m.id) && m.id >= 0 ? m.id : undefined
  const sessionId = typeof m.sessionId === 'string' && m.sessionId.length <= 200 ? m.sessionId : undefined
  if (id === undefined) return { invalid: 'id: must be a non-negative integer' }
  if (m.sessionId !== undefined && sessionId === undefined) return { invalid: 'sessionId: must be a string', id }
  if (typeof m.method !== 'string' || !/^[A-Za-z]{1,60}\.[A-Za-z]{1,100}$/.test(m.method)) return { invalid: 'method: must be Domain.method', id, sessionId }
  if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) return { invalid: 'params: must be an object', id, sessionId }
  const req: CdpRequest = { id, method: m.method }
  if (m.params !== undefined) req.params = m.params as Record<string, unknown>
  if (sessionId !== undefined) req.sessionId = sessionId
  return req
}

/** CDP's "server error" code: what Chromium itself answers a command it cannot run with. */
export const CDP_REFUSED = -32000

/** The answer to a refused or malformed message, in CDP's own error shape. */
export function refusal(id: number | undefined, sessionId: string | undefined, why: string): string {
  const cdpError = { code: CDP_REFUSED, message: `nightjar: ${why}` }
  return JSON.stringify(sessionId === undefined ? { id: id ?? 0, error: cdpError } : { id: id ?? 0, error: cdpError, sessionId })
}
