// Session rows and the journal. Every read takes the caller's org: a session of
// another org is indistinguishable from one that does not exist.
import type { Queryable } from '../store/db.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import type { BrowserKind, EgressMode, SandboxKind } from '../../crds/types.ts'

export type SessionStatus = 'pending' | 'live' | 'ended' | 'failed'

export interface SessionRow {
  id: string
  orgId: string
  agentId: string
  openedBy: { principalId: string; credentialId: string; name: string }
  admission: 'direct' | 'spawned_child'
  identityId: string | null
  grantId: string | null
  egress: EgressMode
  networkId: string | null
  browserKind: BrowserKind
  url: string | null
  viewport: { width: number; height: number } | null
  status: SessionStatus
  failureReason: string | null
  /** what isolated its pages, recorded when it went live (rows built in memory may omit it) */
  sandbox?: SandboxKind | null
  createdAt: string
  liveAt: string | null
  endedAt: string | null
  /** the session ends after this long without a driving call */
  idleTimeoutSecs: number | null
  /** the session ends this long after it went live */
  maxDurationSecs: number | null
  /** why a session ended on its own (idle_timeout, max_duration); null when a caller ended it */
  endReason: string | null
  /** who drives the browser; rows built in memory before any takeover omit it: 'agent' */
  control?: 'agent' | 'human'
  /** the console user holding control, while control is 'human' */
  controlHolder?: string | null
  /** what the agent asked a person to do (request_human), until control is handed back */
  humanRequest?: { at: string; reason: string } | null
  /** the session's upstream proxy (scheme://host:port, no credentials) and whether it carries sealed credentials */
  proxy?: { url: string; authenticated: boolean } | null
  /** the browser extensions it loads (docs/extensions.md), fixed at its start */
  extensions?: string[]
}

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null)

function toRow(r: Record<string, any>): SessionRow {
  return {
    id: r.id, orgId: r.org_id, agentId: r.agent_id, openedBy: r.opened_by, admission: r.admission,
    identityId: r.identity_id, grantId: r.grant_id, egress: r.egress, networkId: r.network_id, browserKind: r.browser_kind,
    url: r.url, viewport: r.viewport, status: r.status, failureReason: r.failure_reason, sandbox: r.sandbox ?? null,
    createdAt: iso(r.created_at)!, liveAt: iso(r.live_at), endedAt: iso(r.ended_at),
    idleTimeoutSecs: r.idle_timeout_secs ?? null, maxDurationSecs: r.max_duration_secs ?? null, endReason: r.end_reason ?? null,
    control: r.control ?? 'agent', controlHolder: r.control_holder ?? null,
    humanRequest: r.human_requested_at ? { at: iso(r.human_requested_at)!, reason: r.human_request_reason ?? '' } : null,
    // whether credentials are sealed, never the envelope itself
    proxy: r.proxy_url ? { url: r.proxy_url, authenticated: r.proxy_sealed_auth != null } : null,
    extensions: r.extension_ids ?? [],
  }
}

export const unknownSession = () => errors.notFound('session')

/** the 409 for driving a session that is not live; a failed one names why, so the agent's next call says it */
export function notLive(row: Pick<SessionRow, 'status' | 'failureReason'>): ApiError {
  return row.status === 'failed' && row.failureReason ? errors.sessionFailed(row.failureReason) : errors.sessionNotLive(row.status)
}

/** what a new session's row is made of (the rest starts empty, status pending) */
export type NewSession = Omit<SessionRow, 'status' | 'failureReason' | 'sandbox' | 'liveAt' | 'endedAt' | 'endReason' | 'control' | 'controlHolder' | 'humanRequest' | 'proxy' | 'extensions'>

/** a new row as a start asks for it: egress null when the start left it to the agent's default */
export type RequestedSession = Omit<NewSession, 'egress'> & { egress: EgressMode | null }

/** a new row's values, in the column order of insertSession and of nightjar_admit_start (migration 017) */
export function newSessionValues(s: RequestedSession): unknown[] {
  return [s.id, s.orgId, s.agentId, JSON.stringify(s.openedBy), s.admission, s.identityId, s.grantId, s.egress, s.networkId, s.browserKind,
    s.url, s.viewport ? JSON.stringify(s.viewport) : null, s.createdAt, s.idleTimeoutSecs, s.maxDurationSecs]
}

/** a row without admission (tests and tools); session starts go through Admission.admit */
export async function insertSession(db: Queryable, s: NewSession): Promise<void> {
  await db.query(
    `insert into sessions (id, org_id, agent_id, opened_by, admission, identity_id, grant_id, egress, network_id, browser_kind, url, viewport, status, created_at,
                           idle_timeout_secs, max_duration_secs)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,'pending',$13,$14,$15)`,
    newSessionValues(s),
  )
}

/** a driving call happened: the idle clock restarts (written at most every few seconds by the caller) */
export async function touchSession(db: Queryable, id: string): Promise<void> {
  await db.query(`update sessions set last_active_at = now() where id = $1 and status = 'live'`, [id])
}

/** live sessions past their idle timeout or their maximum duration, oldest first */
export async function expiredSessions(db: Queryable, limit = 100): Promise<{ id: string; orgId: string; reason: 'idle_timeout' | 'max_duration' }[]> {
  const r = await db.query(
    `select id, org_id,
            case when max_duration_secs is not null and live_at + make_interval(secs => max_duration_secs) <= now() then 'max_duration'
                 else 'idle_timeout' end as reason
       from sessions
      where status = 'live'
        and ((max_duration_secs is not null and live_at + make_interval(secs => max_duration_secs) <= now())
          or (idle_timeout_secs is not null and coalesce(last_active_at, live_at) + make_interval(secs => idle_timeout_secs) <= now()))
      order by live_at limit $1`,
    [limit],
  )
  return r.rows.map((x) => ({ id: x.id, orgId: x.org_id, reason: x.reason }))
}

/** ends a session on its own, with the reason; false when it was no longer live */
export async function expireSession(db: Queryable, id: string, reason: string): Promise<boolean> {
  const r = await db.query(
    `update sessions set status = 'ended', end_reason = $2, ended_at = coalesce(ended_at, now()) where id = $1 and status = 'live'`,
    [id, reason],
  )
  return (r.rowCount ?? 0) > 0
}

export async function bindSessionIdentity(db: Queryable, id: string, identityId: string, grantId: string): Promise<void> {
  await db.query('update sessions set identity_id = $2, grant_id = $3 where id = $1', [id, identityId, grantId])
}

/** the session's proxy: its URL and its sealed credentials (null without) */
export async function setSessionProxy(db: Queryable, id: string, url: string, sealedAuth: string | null): Promise<void> {
  await db.query('update sessions set proxy_url = $2, proxy_sealed_auth = $3 where id = $1', [id, url, sealedAuth])
}

/** the sealed credentials of a session's proxy, for the one call that hands them to its pod */
export async function sessionProxySealedAuth(db: Queryable, orgId: string, id: string): Promise<string | null> {
  const r = await db.query('select proxy_sealed_auth from sessions where org_id = $1 and id = $2', [orgId, id])
  return r.rows[0]?.proxy_sealed_auth ?? null
}

export async function deleteSession(db: Queryable, id: string): Promise<void> {
  await db.query('delete from sessions where id = $1', [id])
}

export async function getSession(db: Queryable, orgId: string, id: string): Promise<SessionRow> {
  const r = await db.query('select * from sessions where id = $1 and org_id = $2', [id, orgId])
  if (!r.rows[0]) throw unknownSession()
  return toRow(r.rows[0])
}

export async function findSessionAnyOrg(db: Queryable, id: string): Promise<SessionRow | null> {
  const r = await db.query('select * from sessions where id = $1', [id])
  return r.rows[0] ? toRow(r.rows[0]) : null
}

export async function listSessions(db: Queryable, orgId: string, opts: { status?: SessionStatus; limit: number; before?: string }): Promise<SessionRow[]> {
  const r = await db.query(
    `select * from sessions where org_id = $1 and ($2::text is null or status = $2)
       and ($4::timestamptz is null or created_at < $4) order by created_at desc limit $3`,
    [orgId, opts.status ?? null, opts.limit, opts.before ?? null],
  )
  return r.rows.map(toRow)
}

// $1 id, $2 status, $3 failure reason, $4 when
const STATUS_UPDATE = `update sessions set status = $2,
        failure_reason = coalesce($3, failure_reason),
        live_at = case when $2 = 'live' then coalesce(live_at, $4::timestamptz, now()) else live_at end,
        ended_at = case when $2 in ('ended', 'failed') then coalesce(ended_at, $4::timestamptz, now()) else ended_at end
      where id = $1 and status not in ('ended', 'failed') and status <> $2`

/** Moves a session forward; never out of a terminal state. Returns whether it changed. */
export async function setStatus(db: Queryable, id: string, status: SessionStatus, failureReason?: string, at?: string): Promise<boolean> {
  const r = await db.query(STATUS_UPDATE, [id, status, failureReason ?? null, at ?? null])
  return (r.rowCount ?? 0) > 0
}

/**
 * A start went live: the status and the start's journal row in one statement (one round
 * trip less per start). The row is the session's first, so nothing queued can precede it;
 * it is written whether or not the status still moved, as a separate write would be.
 */
export async function setLive(db: Queryable, session: { id: string; orgId: string }, at: string, e: JournalEntry, sandbox?: SandboxKind): Promise<void> {
  // recorded first: a session never reads as live without what isolates it
  if (sandbox) await db.query('update sessions set sandbox = $2 where id = $1', [session.id, sandbox])
  await db.query(
    `with status as (${STATUS_UPDATE}) ${JOURNAL_INSERT} values ($5,$6,$7,$8,$9,$10,$11)`,
    [session.id, 'live', null, at, ...journalValues(session, e)],
  )
}

/** the replica now starting this session: if it dies first, another one fails the start (orphanedStarts) */
export async function setStarter(db: Queryable, id: string, replicaId: string): Promise<void> {
  await db.query('update sessions set starter_replica_id = $2 where id = $1', [id, replicaId])
}

/**
 * Pending sessions whose starting replica is not this one and has no heartbeat within
 * `deadAfterSql` (an interval literal) — or no row at all: nobody will finish their start.
 */
export async function orphanedStarts(db: Queryable, replicaId: string, deadAfterSql: string): Promise<string[]> {
  const r = await db.query(
    `select s.id from sessions s
      where s.status = 'pending' and s.starter_replica_id is not null and s.starter_replica_id <> $1
        and not exists (select 1 from api_replicas r where r.id = s.starter_replica_id and r.heartbeat_at > now() - $2::interval)`,
    [replicaId, deadAfterSql],
  )
  return r.rows.map((x) => x.id)
}

export async function openSessionIds(db: Queryable): Promise<string[]> {
  const r = await db.query(`select id from sessions where status in ('pending', 'live')`)
  return r.rows.map((x) => x.id)
}

export interface JournalEntry {
  op: string
  detail?: Record<string, unknown>
  outcome: 'ok' | 'error'
  errorCode?: string
  durationMs?: number
}

const JOURNAL_INSERT = 'insert into session_journal (session_id, org_id, op, detail, outcome, error_code, duration_ms)'
const JOURNAL_INSERT_AT = 'insert into session_journal (session_id, org_id, op, detail, outcome, error_code, duration_ms, created_at)'

/** a journal row's values, in JOURNAL_INSERT's column order */
function journalValues(session: { id: string; orgId: string }, e: JournalEntry): unknown[] {
  return [session.id, session.orgId, e.op, JSON.stringify(e.detail ?? {}), e.outcome, e.errorCode ?? null, e.durationMs ?? null]
}

/** `at` is when the call ended (the row was queued), not when its queued insert runs: the
 * session inspector places a call at that end less its duration, beside the browser's own
 * request and console times, and a row waiting behind others would land after what it caused */
async function insertJournal(db: Queryable, session: { id: string; orgId: string }, e: JournalEntry, at: Date): Promise<void> {
  await db.query(`${JOURNAL_INSERT_AT} values ($1,$2,$3,$4,$5,$6,$7,$8)`, [...journalValues(session, e), at])
}

// Journal rows are written in order per session. Driving actions do not wait for
// theirs (journalLater), so a reader first waits for the session's pending writes.
const pendingJournal = new Map<string, Promise<void>>()

/** Queues the row behind the session's earlier ones; the promise settles when it is written. */
export function journal(db: Queryable, session: { id: string; orgId: string }, e: JournalEntry): Promise<void> {
  const prev = pendingJournal.get(session.id) ?? Promise.resolve()
  const at = new Date()
  const write = prev.then(() => insertJournal(db, session, e, at))
  // the chain only orders the next row: this write's error reaches the caller through `write`
  const tail = write.catch(() => {})
  pendingJournal.set(session.id, tail)
  void tail.then(() => {
    if (pendingJournal.get(session.id) === tail) pendingJournal.delete(session.id)
  })
  return write
}

/** The same, off the request path: a failed write is reported, not thrown. */
export function journalLater(db: Queryable, session: { id: string; orgId: string }, e: JournalEntry, onError: (err: unknown) => void): void {
  journal(db, session, e).catch(onError)
}

const JOURNAL_COLUMNS = 'id, op, detail, outcome, error_code, duration_ms, created_at'

function toJournalEntry(x: Record<string, any>) {
  return {
    id: String(x.id), op: x.op, detail: x.detail, outcome: x.outcome, errorCode: x.error_code ?? undefined,
    durationMs: x.duration_ms ?? undefined, at: new Date(x.created_at).toISOString(),
  }
}

/** The session's newest `limit` journal rows, oldest first (the console's journal beside the live view). */
export async function recentJournal(db: Queryable, orgId: string, sessionId: string, limit: number) {
  await pendingJournal.get(sessionId)
  const r = await db.query(
    `select ${JOURNAL_COLUMNS} from session_journal where session_id = $1 and org_id = $2 order by id desc limit $3`,
    [sessionId, orgId, limit],
  )
  return r.rows.reverse().map(toJournalEntry)
}

export async function readJournal(db: Queryable, orgId: string, sessionId: string, opts: { after?: number; limit: number }) {
  await pendingJournal.get(sessionId)
  const r = await db.query(
    `select ${JOURNAL_COLUMNS} from session_journal where session_id = $1 and org_id = $2 and id > $3 order by id limit $4`,
    [sessionId, orgId, opts.after ?? 0, opts.limit],
  )
  return r.rows.map(toJournalEntry)
}
