// Grant records: which agent may assume or manage an identity, until when, and how
// narrowly. Soft revoke keeps the row (and its audit trail); hard delete removes both.
import type { Queryable } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import type { GrantRole, Propagation } from './validation.ts'

export interface Grant {
  id: string
  identityId: string
  principalAgentId: string
  principalUserId: string | null
  principalOrgRole: string | null
  role: GrantRole
  expiresAt: string
  allowedOrigins: string[]
  propagation: Propagation
  maxSessionDurationSecs: number | null
  reason: string
  createdByUserId: string | null
  createdAt: string
  revokedAt: string | null
}

const iso = (d: unknown) => (d ? new Date(d as string).toISOString() : null)

export const toGrant = (r: any): Grant => ({
  id: r.id,
  identityId: r.identity_id,
  principalAgentId: r.principal_agent_id,
  principalUserId: r.principal_user_id,
  principalOrgRole: r.principal_org_role,
  role: r.role,
  expiresAt: iso(r.expires_at)!,
  allowedOrigins: r.allowed_origins,
  propagation: r.propagation,
  maxSessionDurationSecs: r.max_session_duration_secs,
  reason: r.reason,
  createdByUserId: r.created_by_user_id,
  createdAt: iso(r.created_at)!,
  revokedAt: iso(r.revoked_at),
})

export type GrantState = 'live' | 'expired' | 'revoked'

export function grantState(g: Pick<Grant, 'revokedAt' | 'expiresAt'>, nowMs: number): GrantState {
  if (g.revokedAt) return 'revoked'
  return Date.parse(g.expiresAt) > nowMs ? 'live' : 'expired'
}

/** The response shape: the spec names the soft-revoke field revoked_at; revokedAt mirrors it. */
export function grantView(g: Grant, nowMs: number) {
  return { ...g, revoked_at: g.revokedAt, state: grantState(g, nowMs) }
}

export const grantNotFound = () => errors.notFound('grant')

export interface CreateGrantInput {
  orgId: string
  identityId: string
  principalAgentId: string
  principalUserId: string | null
  principalOrgRole: string | null
  role: GrantRole
  expiresAt: Date
  allowedOrigins: string[]
  propagation: Propagation
  maxSessionDurationSecs: number | null
  reason: string
  createdByUserId: string | null
  createdAt: Date
}

export async function createGrant(db: Queryable, g: CreateGrantInput): Promise<Grant> {
  const r = await db.query(
    `insert into identity_grants (id, org_id, identity_id, principal_agent_id, principal_user_id, principal_org_role, role,
       expires_at, allowed_origins, propagation, max_session_duration_secs, reason, created_by_user_id, created_at)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) returning *`,
    [newId('ngrnt_'), g.orgId, g.identityId, g.principalAgentId, g.principalUserId, g.principalOrgRole, g.role,
      g.expiresAt, g.allowedOrigins, g.propagation, g.maxSessionDurationSecs, g.reason, g.createdByUserId, g.createdAt],
  )
  return toGrant(r.rows[0])
}

export async function listGrants(db: Queryable, orgId: string, identityId: string): Promise<Grant[]> {
  const r = await db.query(`select * from identity_grants where org_id = $1 and identity_id = $2 order by created_at, id`, [orgId, identityId])
  return r.rows.map(toGrant)
}

/** Every grant (any state) of one agent on one identity: bind and fill pick from these. */
export async function grantsFor(db: Queryable, orgId: string, identityId: string, principalAgentId: string): Promise<Grant[]> {
  const r = await db.query(
    `select * from identity_grants where org_id = $1 and identity_id = $2 and principal_agent_id = $3`,
    [orgId, identityId, principalAgentId],
  )
  return r.rows.map(toGrant)
}

/** Idempotent: a second revoke keeps the first revoked_at. */
export async function revokeGrant(db: Queryable, ref: { orgId: string; identityId: string; grantId: string }, at: Date): Promise<Grant> {
  const r = await db.query(
    `update identity_grants set revoked_at = coalesce(revoked_at, $4)
      where org_id = $1 and identity_id = $2 and id = $3 returning *`,
    [ref.orgId, ref.identityId, ref.grantId, at],
  )
  if (!r.rows[0]) throw grantNotFound()
  return toGrant(r.rows[0])
}

/**
 * Hard delete: the row and every audit row that carries the grant's id (RULE-35).
 * Run it in one transaction so the trail never outlives, or predeceases, the row.
 */
export async function hardDeleteGrant(db: Queryable, ref: { orgId: string; identityId: string; grantId: string }): Promise<Grant> {
  const r = await db.query(`delete from identity_grants where org_id = $1 and identity_id = $2 and id = $3 returning *`, [ref.orgId, ref.identityId, ref.grantId])
  if (!r.rows[0]) throw grantNotFound()
  await db.query(
    `delete from audit_events where org_id = $1 and (grant_id = $2 or (target_type = 'grant' and target_id = $2))`,
    [ref.orgId, ref.grantId],
  )
  return toGrant(r.rows[0])
}
