// request_human (issue #17): the agent asks for a person. The answer is the console's
// live view of the session (absolute: config.baseUrl + the console path), where someone
// of the org watches, takes control and hands back; session_get's `control` says when
// the browser is the agent's again.
import { implement } from '../types.ts'
import { requestHuman } from '../../../contracts/operations/sessions.ts'
import { getSession } from '../../sessions/store.ts'
import { requestHuman as recordRequest } from '../../sessions/control.ts'

/** The console page showing a session live. */
export function liveViewUrl(config: { baseUrl: string; consolePath: string }, sessionId: string): string {
  return `${config.baseUrl}${config.consolePath}/sessions/${encodeURIComponent(sessionId)}`
}

export const requestHumanOperation = implement(requestHuman, {
  handler: async ({ auth, services }, { sessionId, reason }) => {
    const row = await getSession(services.db, auth.orgId, sessionId)
    await recordRequest(services.db, row, reason)
    return { sessionId: row.id, url: liveViewUrl(services.config, row.id), status: row.status, control: row.control ?? 'agent' }
  },
})
