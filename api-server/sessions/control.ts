// Watching and taking over: who drives a live session's browser. Control is a column of
// the session row, so every replica reads the same answer and a driving call is refused
// while a person holds control on another replica. Take-over and hand-back are journalled
// value-free and audited; request_human's reason is journalled by length only.
// Design: docs/sessions.md#watching-and-taking-over
import type { Queryable } from '../store/db.ts'
import { errors } from '../../contracts/errors.ts'
import { sessionDriveContracts } from '../../contracts/operations/drive.ts'
import { recordAudit } from '../audit/audit.ts'
import { getSession, journal, notLive, type SessionRow } from './store.ts'

/** Driving tools a person's control leaves working: those that only read (their readOnlyHint). */
export const READ_ONLY_DRIVES: ReadonlySet<string> = new Set(
  sessionDriveContracts.filter((c) => c.annotations?.readOnlyHint === true).map((c) => c.name),
)

/** The 409 while a person holds control, for any driving operation that is not read-only. */
export function assertAgentDrives(row: SessionRow, op: string): void {
  if (row.control === 'human' && !READ_ONLY_DRIVES.has(op)) throw errors.humanInControl()
}

export interface ControlActor {
  orgId: string
  userId: string
}

/** A person takes control of a live session (again, when they hold it already). Returns the row as it is now. */
export async function takeControl(db: Queryable, actor: ControlActor, sessionId: string): Promise<SessionRow> {
  const row = await getSession(db, actor.orgId, sessionId)
  if (row.status !== 'live') throw notLive(row)
  const r = await db.query(
    `update sessions set control = 'human', control_holder = $3, control_changed_at = now()
      where id = $1 and org_id = $2 and status = 'live' and (control = 'agent' or control_holder = $3)`,
    [sessionId, actor.orgId, actor.userId],
  )
  // someone else holds it: they hand back first (the page shows who)
  if (!r.rowCount) return getSession(db, actor.orgId, sessionId)
  if (row.control !== 'human') {
    await journal(db, row, { op: 'human_take_control', outcome: 'ok', detail: { userId: actor.userId } })
    await recordAudit(db, { orgId: actor.orgId, actor: actor.userId, action: 'session.control_taken', targetType: 'session', targetId: sessionId, sessionId })
  }
  return getSession(db, actor.orgId, sessionId)
}

/**
 * Control goes back to the agent. Anyone of the org who may drive may hand back (the holder
 * may have left); the agent's request for a person is answered by it.
 */
export async function handBack(db: Queryable, actor: ControlActor, sessionId: string): Promise<SessionRow> {
  const row = await getSession(db, actor.orgId, sessionId)
  const r = await db.query(
    `update sessions set control = 'agent', control_holder = null, control_changed_at = now(), human_requested_at = null, human_request_reason = null
      where id = $1 and org_id = $2 and control = 'human'`,
    [sessionId, actor.orgId],
  )
  if (r.rowCount) {
    await journal(db, row, { op: 'human_hand_back', outcome: 'ok', detail: { userId: actor.userId } })
    await recordAudit(db, { orgId: actor.orgId, actor: actor.userId, action: 'session.control_returned', targetType: 'session', targetId: sessionId, sessionId })
  }
  return getSession(db, actor.orgId, sessionId)
}

/** The agent asks for a person: kept on the row for the console, journalled by size only. */
export async function requestHuman(db: Queryable, row: SessionRow, reason: string): Promise<void> {
  if (row.status !== 'live') throw notLive(row)
  await db.query('update sessions set human_requested_at = now(), human_request_reason = $2 where id = $1', [row.id, reason])
  await journal(db, row, { op: 'request_human', outcome: 'ok', detail: { reasonLength: reason.length } })
  await recordAudit(db, { orgId: row.orgId, actor: row.agentId, action: 'session.human_requested', targetType: 'session', targetId: row.id, sessionId: row.id })
}

/** What a viewer is told about control: cheap enough to read every second per viewer. */
export async function controlState(db: Queryable, orgId: string, sessionId: string): Promise<{ status: SessionRow['status']; control: 'agent' | 'human'; holder: string | null; holderEmail: string | null } | null> {
  const r = await db.query(
    `select s.status, s.control, s.control_holder, u.email
       from sessions s left join users u on u.id = s.control_holder and u.org_id = s.org_id
      where s.id = $1 and s.org_id = $2`,
    [sessionId, orgId],
  )
  const x = r.rows[0]
  return x ? { status: x.status, control: x.control, holder: x.control_holder ?? null, holderEmail: x.email ?? null } : null
}
