// Opening, reading, listing and ending sessions.
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { forbidden } from '../../../contracts/errors.ts'
import { endSession, startSession } from '../../sessions/lifecycle.ts'
import { getSession, listSessions, readJournal } from '../../sessions/store.ts'
import { sessionView } from '../../sessions/view.ts'
import { childAgent } from '../../sessions/children.ts'
import { egress, httpUrl, identityRef, networkRef, sessionId, viewport } from './schemas.ts'

const startFields = {
  identity: identityRef.optional().describe('identity id (nident_…) or name to bind'),
  egress: egress.optional().describe('local, split or platform; omitted uses the agent default'),
  network: networkRef.optional().describe('network name, slug or id, for local or split egress'),
  viewport: viewport.optional(),
}

export const sessionStart = defineOperation({
  name: 'session_start',
  description: 'Open a browser session, optionally binding a persona; url is recorded but not navigated',
  scopes: ['sessions:write'],
  input: z.strictObject({
    ...startFields,
    url: httpUrl.optional(),
    browserKind: z.enum(['chromium', 'cloak']).optional(),
    warmResume: z.boolean().optional(),
    fromVersion: z.string().regex(/^niver_[0-9A-Za-z]{1,40}$/, 'must be a version id (niver_…)').optional(),
    agent: z.string().max(200).optional().describe('REST/SDK only: empty or the credential’s own agent'),
    // the spec fixes session_start's tool inputs; lifetimes are a REST/SDK extension
    idleTimeoutSecs: z.number().int().min(10).max(7 * 86400).optional().describe('REST/SDK only: end the session after this long without a driving call (at most the server’s value)'),
    maxDurationSecs: z.number().int().min(10).max(7 * 86400).optional().describe('REST/SDK only: end the session this long after it went live (at most the server’s value)'),
  }),
  restOnlyFields: ['agent', 'idleTimeoutSecs', 'maxDurationSecs'],
  rest: { method: 'POST', path: '/v1/sessions', status: 201 },
  handler: async ({ auth, services }, { agent, ...input }) => {
    // the SDK's optional agent defaults to the credential's agent; an empty string means the same
    if (agent && agent !== auth.agentId) throw forbidden("agent must be the credential's own agent", 'agent_mismatch')
    return startSession(services, auth, input, 'direct')
  },
})

export const spawnAndStartSession = defineOperation({
  name: 'spawn_and_start_session',
  description: 'Open a session as a named child of the calling agent (a distinct child principal with a provenance edge)',
  scopes: ['sessions:write'],
  input: z.strictObject({
    childName: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only'),
    ...startFields,
  }),
  rest: { method: 'POST', path: '/v1/sessions/spawn', status: 201 },
  handler: async ({ auth, services }, { childName, ...input }) => {
    const child = await childAgent(services.db, auth.orgId, auth.agentId, childName)
    return startSession(services, auth, input, 'spawned_child', child)
  },
})

export const sessionGet = defineOperation({
  name: 'session_get',
  description: 'One session of the caller’s org',
  scopes: ['sessions:write'],
  input: z.strictObject({ sessionId }),
  rest: { method: 'GET', path: '/v1/sessions/:sessionId' },
  handler: async ({ auth, services }, { sessionId }) => sessionView(await getSession(services.db, auth.orgId, sessionId), services.admission?.queuePosition(sessionId)),
})

export const sessionList = defineOperation({
  name: 'session_list',
  description: 'Sessions of the caller’s org, newest first',
  scopes: ['sessions:write'],
  input: z.strictObject({
    status: z.enum(['pending', 'live', 'ended', 'failed']).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  }),
  rest: { method: 'GET', path: '/v1/sessions' },
  handler: async ({ auth, services }, input) => ({
    items: (await listSessions(services.db, auth.orgId, input)).map((row) => sessionView(row, services.admission?.queuePosition(row.id))),
  }),
})

export const sessionEnd = defineOperation({
  name: 'session_end',
  description: 'End a session and release its persona lease; idempotent',
  scopes: ['sessions:write'],
  input: z.strictObject({ sessionId }),
  rest: { method: 'DELETE', path: '/v1/sessions/:sessionId' },
  handler: async ({ auth, services }, { sessionId }) => endSession(services, auth, sessionId),
})

export const sessionJournal = defineOperation({
  name: 'session_journal',
  description: 'The value-free journal of a session’s operations',
  scopes: ['sessions:write'],
  input: z.strictObject({
    sessionId,
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  }),
  rest: { method: 'GET', path: '/v1/sessions/:sessionId/journal' },
  mcp: false,
  handler: async ({ auth, services }, { sessionId, after, limit }) => {
    await getSession(services.db, auth.orgId, sessionId)
    return { items: await readJournal(services.db, auth.orgId, sessionId, { after, limit }) }
  },
})

export const sessionLifecycleOperations = [sessionStart, spawnAndStartSession, sessionGet, sessionList, sessionEnd, sessionJournal]
