// Reach grants (table reach_grants): which agents may call local_reach_ensure without
// networks:write. Repository functions, fn(db, orgId, …): every query is org-scoped, and
// an id from another org is the one 404 (errors.notFound('reach grant')).
import type { Queryable } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'

export type ReachGrantKind = 'network' | 'seed'

export interface ReachGrantRow {
  id: string
  orgId: string
  agentId: string
  kind: ReachGrantKind
  /** the backing network; null for a seed grant not yet seeded (or whose network was deleted), or a network grant whose network was deleted */
  networkId: string | null
  createdBy: string
  createdAt: string
  revokedAt: string | null
}

export type ReachGrantState = 'live' | 'revoked' | 'ended'

export function newReachGrantId(): string {
  return newId('nrch_')
}

export const unknownReachGrant = () => errors.notFound('reach grant')

export function reachGrantState(g: ReachGrantRow): ReachGrantState {
  if (g.revokedAt) return 'revoked'
  // a network grant whose network was deleted reaches nothing any more
  if (g.kind === 'network' && !g.networkId) return 'ended'
  return 'live'
}

export function reachGrantView(g: ReachGrantRow) {
  return { id: g.id, agentId: g.agentId, kind: g.kind, networkId: g.networkId, state: reachGrantState(g), createdBy: g.createdBy, createdAt: g.createdAt, revokedAt: g.revokedAt }
}

function toRow(r: Record<string, any>): ReachGrantRow {
  return {
    id: r.id, orgId: r.org_id, agentId: r.agent_id, kind: r.kind, networkId: r.network_id ?? null, createdBy: r.created_by,
    createdAt: new Date(r.created_at).toISOString(), revokedAt: r.revoked_at ? new Date(r.revoked_at).toISOString() : null,
  }
}

/** Whether the agent is one of the org's (a foreign or unknown agent is simply not found). */
export async function agentExists(db: Queryable, orgId: string, agentId: string): Promise<boolean> {
  const r = await db.query('select 1 from agents where org_id = $1 and id = $2', [orgId, agentId])
  return Boolean(r.rowCount)
}

export async function insertReachGrant(
  db: Queryable,
  orgId: string,
  g: { agentId: string; kind: ReachGrantKind; networkId: string | null; createdBy: string; createdAt: Date },
): Promise<ReachGrantRow> {
  try {
    const r = await db.query(
      `insert into reach_grants (id, org_id, agent_id, kind, network_id, created_by, created_at) values ($1,$2,$3,$4,$5,$6,$7) returning *`,
      [newReachGrantId(), orgId, g.agentId, g.kind, g.networkId, g.createdBy, g.createdAt],
    )
    return toRow(r.rows[0])
  } catch (e: any) {
    if (e.code === '23505' && /^reach_grants_one_/.test(e.constraint ?? '')) throw errors.reachGrantExists()
    throw e
  }
}

export async function listReachGrants(db: Queryable, orgId: string, filter: { agentId?: string } = {}): Promise<ReachGrantRow[]> {
  const r = await db.query(
    `select * from reach_grants where org_id = $1 and ($2::text is null or agent_id = $2) order by created_at, id`,
    [orgId, filter.agentId ?? null],
  )
  return r.rows.map(toRow)
}

export async function getReachGrant(db: Queryable, orgId: string, id: string): Promise<ReachGrantRow> {
  const r = await db.query('select * from reach_grants where id = $1 and org_id = $2', [id, orgId])
  if (!r.rows[0]) throw unknownReachGrant()
  return toRow(r.rows[0])
}

/** The agent's grants local_reach_ensure may use: not revoked, and not ended by a network deletion. */
export async function liveReachGrants(db: Queryable, orgId: string, agentId: string): Promise<ReachGrantRow[]> {
  const r = await db.query(
    `select * from reach_grants where org_id = $1 and agent_id = $2 and revoked_at is null and (kind = 'seed' or network_id is not null) order by created_at, id`,
    [orgId, agentId],
  )
  return r.rows.map(toRow)
}

/**
 * Soft revoke, idempotent: a grant already revoked keeps its first revocation. Returns
 * the grant and whether this call revoked it.
 */
export async function revokeReachGrant(db: Queryable, orgId: string, id: string, by: { actor: string; at: Date }): Promise<{ grant: ReachGrantRow; revoked: boolean }> {
  const r = await db.query(
    `update reach_grants set revoked_at = $3, revoked_by = $4 where id = $1 and org_id = $2 and revoked_at is null returning *`,
    [id, orgId, by.at, by.actor],
  )
  if (r.rows[0]) return { grant: toRow(r.rows[0]), revoked: true }
  return { grant: await getReachGrant(db, orgId, id), revoked: false }
}

/**
 * Binds a live, unseeded seed grant to the network its agent just created (in the same
 * transaction as the network's insert). False when the grant was revoked or seeded
 * meanwhile: the caller rolls the network back.
 */
export async function bindSeedGrant(db: Queryable, orgId: string, grantId: string, networkId: string): Promise<boolean> {
  const r = await db.query(
    `update reach_grants set network_id = $3 where id = $1 and org_id = $2 and kind = 'seed' and network_id is null and revoked_at is null`,
    [grantId, orgId, networkId],
  )
  return r.rowCount === 1
}
