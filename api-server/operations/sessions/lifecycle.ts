// Opening, reading, listing and ending sessions (contracts/operations/sessions.ts).
import { implement, type OpContext } from '../types.ts'
import { errors } from '../../../contracts/errors.ts'
import {
  sessionEnd, sessionGet, sessionJournal, sessionList, sessionStart, spawnAndStartSession, START_WAIT_DEFAULT_SECS, START_WAIT_MAX_SECS,
} from '../../../contracts/operations/sessions.ts'
import { endSession, sessionWhenSettled, startSessionWithin, type StartRequest } from '../../sessions/lifecycle.ts'
import type { SessionView } from '../../sessions/view.ts'
import { getSession, listSessions, readJournal } from '../../sessions/store.ts'
import { sessionView } from '../../sessions/view.ts'
import { childAgent } from '../../sessions/children.ts'
import { closeCdp } from '../../sessions/cdp-connections.ts'
import { sessionCdpOperation } from './cdp.ts'
import { requestHumanOperation } from './human.ts'

/**
 * The `wait` preference of a Prefer header (RFC 7240 §4.3): `Prefer: wait=10`, possibly
 * among others (`respond-async, wait=10`); undefined when absent or not a number.
 */
export function preferredWait(prefer: string | undefined): number | undefined {
  for (const pref of (prefer ?? '').split(',')) {
    const m = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*(?:;|$)/i.exec(pref)
    if (m) return Number(m[1])
  }
  return undefined
}

/**
 * the share of a wait kept for answering (a row read, the JSON, a busy event loop): a
 * quarter, 300 ms to 1.5 s. Twenty starts at once on two cores, each launching Chromium,
 * answered up to 1.3 s after a one-second margin ran out.
 */
const answerMargin = (waitMs: number) => Math.min(1500, Math.max(300, waitMs / 4))

/**
 * How long a start waits before answering pending. REST: Prefer: wait=N (answered with
 * Preference-Applied, capped at the maximum), else waitSeconds, else NIGHTJAR_START_ANSWER_SECONDS (5 s); MCP: waitSeconds,
 * else 30 s. A pending answer over REST is 202 with Location and Retry-After.
 */
async function startAnswering(ctx: OpContext, waitSeconds: number | undefined, req: StartRequest): Promise<SessionView> {
  const preferred = ctx.rest ? preferredWait(ctx.rest.prefer) : undefined
  const fallbackMs = ctx.via === 'rest' ? ctx.services.config.capacity.startAnswerMs : START_WAIT_DEFAULT_SECS.mcp * 1000
  const secs = Math.min(START_WAIT_MAX_SECS, preferred ?? waitSeconds ?? fallbackMs / 1000)
  if (ctx.rest && preferred !== undefined) ctx.rest.headers['preference-applied'] = `wait=${secs}`
  // the answer itself (a row read, the JSON) fits inside the bound, not after it
  // the bound counts from the request's arrival: the time it queued for authentication is spent
  const spent = ctx.rest?.elapsedMs?.() ?? 0
  const { view, pending } = await startSessionWithin(ctx.services, req, Math.max(0, secs * 1000 - answerMargin(secs * 1000) - spent))
  if (pending && ctx.rest) {
    ctx.rest.status = 202
    ctx.rest.headers.location = `${ctx.services.config.baseUrl}/v1/sessions/${view.id}`
    ctx.rest.headers['retry-after'] = '1'
  }
  return view
}

export const sessionStartOperation = implement(sessionStart, {
  handler: async (ctx, { agent, waitSeconds, ...input }) => {
    // the SDK's optional agent defaults to the credential's agent; an empty string means the same
    if (agent && agent !== ctx.auth.agentId) throw errors.agentMismatch()
    return startAnswering(ctx, waitSeconds, { auth: ctx.auth, input, admission: 'direct' })
  },
})

export const spawnAndStartSessionOperation = implement(spawnAndStartSession, {
  handler: async (ctx, { childName, ...input }) => {
    const child = await childAgent(ctx.services.db, ctx.auth.orgId, ctx.auth.agentId, childName)
    return startAnswering(ctx, undefined, { auth: ctx.auth, input, admission: 'spawned_child', actingAgentId: child })
  },
})

export const sessionGetOperation = implement(sessionGet, {
  handler: async ({ auth, services }, { sessionId, waitSeconds }) => {
    if (waitSeconds) return sessionWhenSettled(services, auth.orgId, sessionId, waitSeconds * 1000)
    return sessionView(await getSession(services.db, auth.orgId, sessionId), services.admission?.queuePosition(sessionId))
  },
})

export const sessionListOperation = implement(sessionList, {
  handler: async ({ auth, services }, input) => ({
    items: (await listSessions(services.db, auth.orgId, input)).map((row) => sessionView(row, services.admission?.queuePosition(row.id))),
  }),
})

export const sessionEndOperation = implement(sessionEnd, {
  handler: async ({ auth, services }, { sessionId }) => {
    const view = await endSession(services, { auth, sessionId })
    // CDP sockets this replica relays close now; the pod's end closes any other
    closeCdp(view.id)
    return view
  },
})

export const sessionJournalOperation = implement(sessionJournal, {
  handler: async ({ auth, services }, { sessionId, after, limit }) => {
    await getSession(services.db, auth.orgId, sessionId)
    return { items: await readJournal(services.db, auth.orgId, sessionId, { after, limit }) }
  },
})

export const sessionLifecycleOperations = [
  sessionStartOperation, spawnAndStartSessionOperation, sessionGetOperation, sessionListOperation, sessionEndOperation, sessionJournalOperation,
  sessionCdpOperation, requestHumanOperation,
] as const
