// Driving a live session: resolve it inside the caller's org (the one 404 for
// unknown and foreign ids), reach its pod, run one action, journal it value-free.
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../store/db.ts'
import type { SessionRuntime } from './runtime.ts'
import type { SessionActivity } from './expiry.ts'
import type { PodClient } from './pod-client.ts'
import { isApiError } from '../../contracts/errors.ts'
import { getSession, journalLater, notLive, type SessionRow } from './store.ts'
import { assertAgentDrives } from './control.ts'
import { inSpan, SpanKind } from '../../telemetry/tracing.ts'

/**
 * What driving a session takes: the services driving uses and where to log. Domain
 * functions take `(deps, request)` (docs/CONVENTIONS.md); the operations layer builds
 * these deps from its context, so the domain never sees the handler's OpContext.
 */
export interface DriveDeps {
  db: Db
  sessions: Pick<SessionRuntime, 'pods'>
  /** driving keeps a session from its idle timeout */
  activity: Pick<SessionActivity, 'touch'>
  log: FastifyBaseLogger
}

/** Which session, in which org (the one 404 for unknown and foreign ids). */
export interface SessionRequest {
  orgId: string
  sessionId: string
}

/** One driving call: `detail` is what the journal records of it. */
export interface DriveRequest extends SessionRequest {
  op: string
  /** selectors, verbs, urls and sizes — never typed text, secrets or page content */
  detail: Record<string, unknown>
}

const logJournalError = (deps: { log: FastifyBaseLogger }) => (err: unknown) => deps.log.error({ err }, 'journal write failed')

export async function liveSession(deps: { db: Db }, req: SessionRequest): Promise<SessionRow> {
  const row = await getSession(deps.db, req.orgId, req.sessionId)
  if (row.status !== 'live') throw notLive(row)
  return row
}

/** the session's browser pod (a process without a session plane answers the one 503 here) */
export async function podFor(deps: { sessions: Pick<SessionRuntime, 'pods'> }, row: SessionRow): Promise<PodClient> {
  return deps.sessions.pods.get(row.id)
}

/** Runs one driving action and journals it, value-free. */
export async function drive<T>(
  deps: DriveDeps,
  req: DriveRequest,
  action: (pod: PodClient, row: SessionRow) => Promise<T>,
): Promise<T> {
  const { op, detail } = req
  const row = await liveSession(deps, req)
  // a person holding control in the console: only read-only tools run until they hand back
  assertAgentDrives(row, op)
  deps.activity.touch(row.id)
  const pod = await podFor(deps, row)
  const started = performance.now()
  try {
    // one span per driving call, named by the action; the pod client carries it to the pod
    const out = await inSpan(`drive ${op}`, { kind: SpanKind.CLIENT, attributes: { 'nightjar.operation': op, 'nightjar.session.id': row.id } }, () => action(pod, row))
    journalLater(deps.db, row, { op, detail, outcome: 'ok', durationMs: Math.round(performance.now() - started) }, logJournalError(deps))
    return out
  } catch (e) {
    const code = isApiError(e) ? e.reason ?? e.code : 'internal'
    journalLater(deps.db, row, { op, detail, outcome: 'error', errorCode: code, durationMs: Math.round(performance.now() - started) }, logJournalError(deps))
    throw e
  }
}
