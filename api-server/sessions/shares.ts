// Read-only share links for one session's live view. A person in the org who
// may watch makes one with an expiry; whoever holds the link may watch — never take
// control — until it expires, is revoked, or the session ends. Only the token's hash is
// stored, and the token travels in the link's fragment (`…/share#njs_…`), which browsers
// never send to a server: it reaches neither access logs nor a proxy's, only the viewer's
// WebSocket, as its first message.
import type { Queryable } from '../store/db.ts'
import { newId, newToken, sha256 } from '../../contracts/ids.ts'
import { recordAudit } from '../audit/audit.ts'

/** the expiries a person may pick, in minutes (the form offers exactly these) */
export const SHARE_TTL_MINUTES = [15, 60, 480, 1440] as const

export interface ShareRow {
  id: string
  sessionId: string
  createdBy: string
  createdAt: string
  expiresAt: string
}

export interface ResolvedShare {
  id: string
  orgId: string
  sessionId: string
}

const TOKEN = /^njs_[0-9A-Za-z]{43}$/

export async function createShare(db: Queryable, input: { orgId: string; sessionId: string; userId: string; ttlMinutes: number; now: number }): Promise<{ id: string; token: string; expiresAt: string }> {
  const id = newId('nshr_')
  const token = newToken('njs_')
  const expiresAt = new Date(input.now + input.ttlMinutes * 60_000).toISOString()
  await db.query(
    'insert into live_shares (id, org_id, session_id, token_hash, created_by, created_at, expires_at) values ($1, $2, $3, $4, $5, $6, $7)',
    [id, input.orgId, input.sessionId, sha256(token), input.userId, new Date(input.now).toISOString(), expiresAt],
  )
  await recordAudit(db, { orgId: input.orgId, actor: input.userId, action: 'session.share_created', targetType: 'session', targetId: input.sessionId, sessionId: input.sessionId, reason: `expires ${expiresAt}` })
  return { id, token, expiresAt }
}

/** the session's links that still work (newest first) */
export async function activeShares(db: Queryable, orgId: string, sessionId: string, now: number): Promise<ShareRow[]> {
  const r = await db.query(
    `select s.*, u.email from live_shares s left join users u on u.id = s.created_by
      where s.org_id = $1 and s.session_id = $2 and s.revoked_at is null and s.expires_at > $3 order by s.created_at desc`,
    [orgId, sessionId, new Date(now).toISOString()],
  )
  return r.rows.map((x) => ({ id: x.id, sessionId: x.session_id, createdBy: x.email ?? x.created_by, createdAt: new Date(x.created_at).toISOString(), expiresAt: new Date(x.expires_at).toISOString() }))
}

/** Revoke one link of the session; false when it is unknown (or another org's, or another session's). */
export async function revokeShare(db: Queryable, input: { orgId: string; sessionId: string; shareId: string; userId: string; now: number }): Promise<boolean> {
  const r = await db.query(
    'update live_shares set revoked_at = $4 where id = $1 and org_id = $2 and session_id = $3 and revoked_at is null',
    [input.shareId, input.orgId, input.sessionId, new Date(input.now).toISOString()],
  )
  if (!r.rowCount) return false
  await recordAudit(db, { orgId: input.orgId, actor: input.userId, action: 'session.share_revoked', targetType: 'session', targetId: input.sessionId, sessionId: input.sessionId })
  return true
}

/** The link's share while it works: not revoked, not expired. Unknown, revoked and expired read alike (undefined). */
export async function resolveShare(db: Queryable, token: string, now: number): Promise<ResolvedShare | undefined> {
  if (!TOKEN.test(token)) return undefined
  const r = await db.query(
    'select id, org_id, session_id from live_shares where token_hash = $1 and revoked_at is null and expires_at > $2',
    [sha256(token), new Date(now).toISOString()],
  )
  const row = r.rows[0]
  return row ? { id: row.id, orgId: row.org_id, sessionId: row.session_id } : undefined
}

/** still working? (the relay asks every second, so a revoked or expired link stops within one) */
export async function shareStillValid(db: Queryable, shareId: string, now: number): Promise<boolean> {
  const r = await db.query('select 1 from live_shares where id = $1 and revoked_at is null and expires_at > $2', [shareId, new Date(now).toISOString()])
  return r.rowCount === 1
}
