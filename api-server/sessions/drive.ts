// Driving a live session: resolve it inside the caller's org (the one 404 for
// unknown and foreign ids), reach its node, run one action, journal it value-free.
import type { OpContext } from '../operations/types.ts'
import type { NodeClient } from './node-client.ts'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { getSession, journalLater, type SessionRow } from './store.ts'
import { assertAgentDrives } from './control.ts'

const logJournalError = (ctx: OpContext) => (err: unknown) => ctx.log.error({ err }, 'journal write failed')

export function notLive(row: SessionRow): ApiError {
  return errors.sessionNotLive(row.status)
}

export async function liveSession(ctx: OpContext, sessionId: string): Promise<SessionRow> {
  const row = await getSession(ctx.services.db, ctx.auth.orgId, sessionId)
  if (row.status !== 'live') throw notLive(row)
  return row
}

/** the session's browser pod (a process without a session plane answers the one 503 here) */
export async function nodeFor(ctx: OpContext, row: SessionRow): Promise<NodeClient> {
  return ctx.services.sessions.nodes.get(row.id)
}

/**
 * Runs one driving action. `detail` is what the journal records: selectors, verbs,
 * urls and sizes — never typed text, secrets or page content.
 */
export async function drive<T>(
  ctx: OpContext,
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
