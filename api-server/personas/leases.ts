// The single-writer identity lease (RULE-13, LIM-06): one row per identity, the
// primary key is the lock. expires_at records the TTL cap (LIM-07) for the session
// layer; it does not free the lease by itself, because that would let a second
// session bind while the first is still live. Only the holder ending (release) or
// the reaper finding the holder dead frees it.
import type { Queryable } from '../store/db.ts'
import { errors } from '../../contracts/errors.ts'

export interface Lease {
  identityId: string
  orgId: string
  sessionId: string
  agentId: string
  grantId: string | null
  acquiredAt: string
  expiresAt: string
}

const toLease = (r: any): Lease => ({
  identityId: r.identity_id,
  orgId: r.org_id,
  sessionId: r.session_id,
  agentId: r.agent_id,
  grantId: r.grant_id,
  acquiredAt: new Date(r.acquired_at).toISOString(),
  expiresAt: new Date(r.expires_at).toISOString(),
})

export const identityInUse = () => errors.identityInUse()

export interface AcquireInput {
  orgId: string
  identityId: string
  sessionId: string
  agentId: string
  grantId?: string | null
  nowMs: number
  ttlSecs: number
}

/**
 * Takes the lease or throws 409. Re-acquiring by the session that already holds it
 * returns the held lease unchanged (a retried session open is not a second writer).
 */
export async function acquire(db: Queryable, input: AcquireInput): Promise<Lease> {
  let r
  try {
    r = await db.query(
      `insert into identity_leases (identity_id, org_id, session_id, agent_id, grant_id, acquired_at, expires_at)
       values ($1,$2,$3,$4,$5,$6,$7) on conflict (identity_id) do nothing returning *`,
      [input.identityId, input.orgId, input.sessionId, input.agentId, input.grantId ?? null,
        new Date(input.nowMs), new Date(input.nowMs + input.ttlSecs * 1000)],
    )
  } catch (e: any) {
    // unique session_id: this session already holds another identity's lease
    if (e?.code === '23505') throw errors.sessionHasIdentity()
    if (e?.code === '23503') throw errors.notFound('identity')
    throw e
  }
  if (r.rows[0]) return toLease(r.rows[0])
  const held = await db.query(`select * from identity_leases where identity_id = $1`, [input.identityId])
  if (held.rows[0]?.session_id === input.sessionId) return toLease(held.rows[0])
  throw identityInUse()
}

/** Frees whatever the session holds; idempotent (session_end may run twice). */
export async function release(db: Queryable, sessionId: string): Promise<boolean> {
  const r = await db.query(`delete from identity_leases where session_id = $1`, [sessionId])
  return (r.rowCount ?? 0) > 0
}

export async function isLeased(db: Queryable, identityId: string): Promise<boolean> {
  const r = await db.query(`select 1 from identity_leases where identity_id = $1`, [identityId])
  return (r.rowCount ?? 0) > 0
}

export async function leaseOf(db: Queryable, identityId: string): Promise<Lease | null> {
  const r = await db.query(`select * from identity_leases where identity_id = $1`, [identityId])
  return r.rows[0] ? toLease(r.rows[0]) : null
}

export async function leaseHeldBy(db: Queryable, sessionId: string): Promise<Lease | null> {
  const r = await db.query(`select * from identity_leases where session_id = $1`, [sessionId])
  return r.rows[0] ? toLease(r.rows[0]) : null
}

/**
 * The liveness reaper (ST-04): frees a lease only when its holder is reported dead.
 * A live holder keeps its lease even past expires_at (LIM-07), and a liveness check
 * that throws counts as alive — when in doubt, never reap. The delete compares the
 * session id too, so a lease re-taken meanwhile by a new session is left alone.
 */
export async function reapDeadLeases(
  db: Queryable,
  isHolderAlive: (sessionId: string) => Promise<boolean>,
): Promise<Array<{ identityId: string; sessionId: string }>> {
  const r = await db.query(`select identity_id, session_id from identity_leases order by acquired_at`)
  const freed: Array<{ identityId: string; sessionId: string }> = []
  for (const row of r.rows) {
    let alive = true
    try {
      alive = (await isHolderAlive(row.session_id)) !== false
    } catch {
      alive = true
    }
    if (alive) continue
    const d = await db.query(`delete from identity_leases where identity_id = $1 and session_id = $2`, [row.identity_id, row.session_id])
    if (d.rowCount) freed.push({ identityId: row.identity_id, sessionId: row.session_id })
  }
  return freed
}
