// request_human: the agent asks for a person. The answer is the console's
// live view of the session (absolute: config.baseUrl + the console path), where someone
// of the org watches, takes control and hands back; session_get's `control` says when
// the browser is the agent's again. Over MCP, a client that declared URL elicitation
// is sent the live view with elicitation/create (mode url), and the
// call returns after notifications/elicitation/complete, once control is handed back.
import { randomUUID } from 'node:crypto'
import { implement } from '../types.ts'
import { requestHuman } from '../../../contracts/operations/sessions.ts'
import { getSession } from '../../sessions/store.ts'
import { requestHuman as recordRequest } from '../../sessions/control.ts'
import { elicitUntil } from '../elicit.ts'
import { DEFAULT_ELICITATION_TTL_SECS } from '../personas/credential-request.ts'

/** The console page showing a session live. */
export function liveViewUrl(config: { baseUrl: string; consolePath: string }, sessionId: string): string {
  return `${config.baseUrl}${config.consolePath}/sessions/${encodeURIComponent(sessionId)}`
}

/** How often a waiting request_human reads whether control came back (a column every replica sees). */
const HAND_BACK_POLL_MS = 500

export const requestHumanOperation = implement(requestHuman, {
  handler: async ({ auth, services, elicitation }, { sessionId, reason }) => {
    const row = await getSession(services.db, auth.orgId, sessionId)
    await recordRequest(services.db, row, reason)
    const url = liveViewUrl(services.config, row.id)
    // the reason is the agent's own words (journalled by length only): the live view shows it, the event does not carry it
    await services.events.emit({ orgId: row.orgId, type: 'human.requested', data: { sessionId: row.id, agentId: row.agentId, url } })
    if (!elicitation) return { sessionId: row.id, url, status: row.status, control: row.control ?? 'agent' }
    const deadline = services.now() + (services.config.elicitationTtlSecs ?? DEFAULT_ELICITATION_TTL_SECS) * 1000
    // the request is answered when it is cleared: a hand-back clears it, and a session that ends cannot be driven anyway
    const handedBack = async (signal: AbortSignal): Promise<boolean> => {
      while (!signal.aborted && services.now() < deadline) {
        const now = await getSession(services.db, auth.orgId, row.id)
        if (!now.humanRequest || now.status !== 'live') return true
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, HAND_BACK_POLL_MS)
          function done() { clearTimeout(timer); signal.removeEventListener('abort', done); resolve() }
          signal.addEventListener('abort', done)
        })
      }
      return false
    }
    const outcome = await elicitUntil(elicitation, { elicitationId: `human-${randomUUID()}`, url, message: `A person is needed in session ${row.id}: ${reason}` }, handedBack)
    const after = await getSession(services.db, auth.orgId, row.id)
    return { sessionId: row.id, url, status: after.status, control: after.control ?? 'agent', elicitation: outcome }
  },
})
