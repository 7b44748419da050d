// Session recordings over REST (contracts/operations/recordings.ts). The session is read in
// the caller's org first: another org's session, an unknown one and one never recorded all
// answer the one 404.
import { implement } from '../types.ts'
import { errors } from '../../../contracts/errors.ts'
import { recordingEvents, recordingGet } from '../../../contracts/operations/recordings.ts'
import { getSession } from '../../sessions/store.ts'
import { getRecording, type RecordingRow } from '../../recordings/service.ts'

export function recordingConsoleUrl(config: { baseUrl: string; consolePath: string }, sessionId: string): string {
  return `${config.baseUrl}${config.consolePath}/sessions/${encodeURIComponent(sessionId)}/recording`
}

export function recordingView(config: { baseUrl: string; consolePath: string }, row: RecordingRow) {
  return {
    sessionId: row.sessionId, format: 'rrweb' as const, startedAt: row.startedAt, endedAt: row.endedAt,
    bytes: row.bytes, events: row.events, dropped: row.dropped,
    eventsUrl: `${config.baseUrl}/v1/sessions/${encodeURIComponent(row.sessionId)}/recording/events`,
    consoleUrl: recordingConsoleUrl(config, row.sessionId),
  }
}

export const recordingGetOperation = implement(recordingGet, {
  handler: async ({ auth, services }, { sessionId }) => {
    await getSession(services.db, auth.orgId, sessionId)
    const row = await getRecording(services.db, auth.orgId, sessionId)
    if (!row) throw errors.notFound('session')
    return recordingView(services.config, row)
  },
})

export const recordingEventsOperation = implement(recordingEvents, {
  handler: async ({ auth, services }, { sessionId }) => {
    await getSession(services.db, auth.orgId, sessionId)
    const { events } = await services.recordings.timeline({ orgId: auth.orgId, sessionId })
    return { sessionId, format: 'rrweb' as const, events: events as Array<Record<string, unknown>> }
  },
})

export const recordingOperations = [recordingGetOperation, recordingEventsOperation] as const
