// Driving a live session: resolve it inside the caller's org (the one 404 for
// unknown and foreign ids), reach its node, run one action, journal it value-free.
import type { FastifyBaseLogger } from 'fastify'
import type { AuthContext } from '../auth/context.ts'
import type { Db } from '../store/db.ts'
import type { Sealer } from '../kms/index.ts'
import type { SessionRuntime } from './runtime.ts'
import type { SessionActivity } from './expiry.ts'
import type { NodeClient } from './node-client.ts'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { getSession, journalLater, type SessionRow } from './store.ts'
import { assertAgentDrives } from './control.ts'

/**
 * What driving a session takes: who calls, the services driving uses, where to log. The
 * operations layer's context is one (it has all of these and more); the domain names only
 * what it uses, so it never imports the layer above it.
 */
export interface DriveContext {
  auth: AuthContext
  services: DriveServices
  log: FastifyBaseLogger
}

export interface DriveServices {
  db: Db
  now: () => number
  /** opens a sealed credential just in time (the fill) */
  sealer: Sealer
  sessions: Pick<SessionRuntime, 'nodes'>
  /** driving keeps a session from its idle timeout */
  activity: Pick<SessionActivity, 'touch'>
}

const logJournalError = (ctx: DriveContext) => (err: unknown) => ctx.log.error({ err }, 'journal write failed')

export function notLive(row: SessionRow): ApiError {
  return errors.sessionNotLive(row.status)
}

export async function liveSession(ctx: DriveContext, sessionId: string): Promise<SessionRow> {
  const row = await getSession(ctx.services.db, ctx.auth.orgId, sessionId)
  if (row.status !== 'live') throw notLive(row)
  return row
}

/** the session's browser pod (a process without a session plane answers the one 503 here) */
export async function nodeFor(ctx: DriveContext, row: SessionRow): Promise<NodeClient> {
  return ctx.services.sessions.nodes.get(row.id)
}

/**
 * Runs one driving action. `detail` is what the journal records: selectors, verbs,
 * urls and sizes — never typed text, secrets or page content.
 */
export async function drive<T>(
  ctx: DriveContext,
  sessionId: string,
  op: string,
  detail: Record<string, unknown>,
  action: (node: NodeClient, row: SessionRow) => Promise<T>,
): Promise<T> {
  const row = await liveSession(ctx, sessionId)
  // a person holding control in the console: only read-only tools run until they hand back
  assertAgentDrives(row, op)
  ctx.services.activity.touch(row.id)
  const node = await nodeFor(ctx, row)
  const started = performance.now()
  try {
    const out = await action(node, row)
    journalLater(ctx.services.db, row, { op, detail, outcome: 'ok', durationMs: Math.round(performance.now() - started) }, logJournalError(ctx))
    return out
  } catch (e) {
    const code = isApiError(e) ? e.reason ?? e.code : 'internal'
    journalLater(ctx.services.db, row, { op, detail, outcome: 'error', errorCode: code, durationMs: Math.round(performance.now() - started) }, logJournalError(ctx))
    throw e
  }
}
