// CDP connect, the checks session_cdp (operations) and the CDP upgrade (cdp/relay.ts) share, in one order: the
// session inside the caller's org (the one 404 for unknown and foreign ids), live, not a
// cloak browser, no extensions, no bound identity. The pod checks again what only it knows (a fill
// running or done, a CDP client connected: browser-pod/secrets/fill-lock.ts).
import type { Db } from '../store/db.ts'
import type { AuthContext } from '../auth/context.ts'
import { errors } from '../../contracts/errors.ts'
import { getSession, notLive, type SessionRow } from './store.ts'
import { assertAgentDrives } from './control.ts'

/** The session a caller may open a CDP connection to, or the refusal. */
export async function cdpSession(deps: { db: Db }, { auth, sessionId }: { auth: AuthContext; sessionId: string }): Promise<SessionRow> {
  const row = await getSession(deps.db, auth.orgId, sessionId)
  if (row.status !== 'live') throw notLive(row)
  if (row.browserKind === 'cloak') throw errors.cdpCloakBrowser()
  // its pages run in the pod's second browser (browser-pod/extensions.ts), which has no CDP pipe
  if (row.extensions?.length) throw errors.cdpExtensions()
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
