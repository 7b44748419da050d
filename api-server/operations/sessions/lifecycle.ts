// Opening, reading, listing and ending sessions (contracts/operations/sessions.ts).
import { implement } from '../types.ts'
import { errors } from '../../../contracts/errors.ts'
import { sessionEnd, sessionGet, sessionJournal, sessionList, sessionStart, spawnAndStartSession } from '../../../contracts/operations/sessions.ts'
import { endSession, startSession } from '../../sessions/lifecycle.ts'
import { getSession, listSessions, readJournal } from '../../sessions/store.ts'
import { sessionView } from '../../sessions/view.ts'
import { childAgent } from '../../sessions/children.ts'
import { closeCdp } from '../../sessions/cdp-connections.ts'
import { sessionCdpOperation } from './cdp.ts'
import { requestHumanOperation } from './human.ts'

export const sessionStartOperation = implement(sessionStart, {
  handler: async ({ auth, services }, { agent, ...input }) => {
    // the SDK's optional agent defaults to the credential's agent; an empty string means the same
    if (agent && agent !== auth.agentId) throw errors.agentMismatch()
    return startSession(services, { auth, input, admission: 'direct' })
  },
})

export const spawnAndStartSessionOperation = implement(spawnAndStartSession, {
  handler: async ({ auth, services }, { childName, ...input }) => {
    const child = await childAgent(services.db, auth.orgId, auth.agentId, childName)
    return startSession(services, { auth, input, admission: 'spawned_child', actingAgentId: child })
  },
})

export const sessionGetOperation = implement(sessionGet, {
  handler: async ({ auth, services }, { sessionId }) => sessionView(await getSession(services.db, auth.orgId, sessionId), services.admission?.queuePosition(sessionId)),
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
