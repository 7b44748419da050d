// CDP connect, the checks session_cdp and the CDP upgrade share, in one order: the
// session inside the caller's org (the one 404 for unknown and foreign ids), live, not a
// cloak browser, no bound identity. The node checks again what only it knows (a fill
// running or done, a CDP client connected: browser-pod/cdp-proxy.ts).
import http from 'node:http'
import type { Duplex } from 'node:stream'
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import { getSession, type SessionRow } from '../sessions/store.ts'
import { notLive } from '../sessions/drive.ts'
import { assertAgentDrives } from '../sessions/control.ts'

/** The session a caller may open a CDP connection to, or the refusal. */
export async function cdpSession(deps: Pick<Services, 'db'>, { auth, sessionId }: { auth: AuthContext; sessionId: string }): Promise<SessionRow> {
  const row = await getSession(deps.db, auth.orgId, sessionId)
  if (row.status !== 'live') throw notLive(row)
  if (row.browserKind === 'cloak') throw errors.cdpCloakBrowser()
  // the sealed fill types into this session's pages: raw page access would read it back
  if (row.identityId) throw errors.cdpIdentityBound()
  // a person holds the browser (console take-over): no script drives it meanwhile
  assertAgentDrives(row, 'session_cdp')
  return row
}

/** The WebSocket URL of a session's CDP endpoint on this server. */
export function cdpUrl(baseUrl: string, sessionId: string): string {
  return `${baseUrl.replace(/^http/, 'ws')}/v1/sessions/${encodeURIComponent(sessionId)}/cdp`
}

/** A refusal before the upgrade: the REST door's JSON error, status, headers and body alike. */
export function refuseJson(socket: Duplex, e: ApiError): void {
  if (socket.destroyed) return
  const body = JSON.stringify(e.toBody())
  const headers: Record<string, string | number> = { ...e.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }
  socket.end(`HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status] ?? 'Error'}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`)
}

