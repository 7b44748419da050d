// OAuth grants: one per (org, user, client, workspace), each bound to its own
// developer agent (agents.kind 'developer'). Re-login from the same workspace reuses
// the grant and the agent, so identity grants given to that agent keep working.
// Revocation is soft and total: the grant and every token derived from it stop at
// once, and pending codes and approved device authorizations die with it.
import type pg from 'pg'
import type { Db, Queryable } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import { recordAudit } from '../audit/audit.ts'

export interface GrantRef {
  grantId: string
  agentId: string
}

export interface UpsertGrantInput {
  orgId: string
  userId: string
  userEmail: string
  clientId: string
  clientName: string
  workspace: string
  scopes: string[]
  /** epoch ms (the app's clock) */
  now: number
}

async function findOrCreate(c: pg.PoolClient, g: UpsertGrantInput): Promise<GrantRef & { created: boolean; reactivated: boolean }> {
  const found = await c.query(
    `select id, agent_id, revoked_at from oauth_grants where org_id = $1 and user_id = $2 and client_id = $3 and workspace = $4 for update`,
    [g.orgId, g.userId, g.clientId, g.workspace],
  )
  const row = found.rows[0]
  if (row) {
    // a fresh consent re-activates a revoked grant; its old tokens stay revoked
    await c.query('update oauth_grants set revoked_at = null, scopes = $2 where id = $1', [row.id, g.scopes])
    return { grantId: row.id, agentId: row.agent_id, created: false, reactivated: row.revoked_at !== null }
  }
  const grantId = newId('nkey_')
  const agentId = newId('nagt_')
  // agent names are unique per org; the grant id keeps this one unique
  const agentName = `${g.userEmail} · ${g.clientName} · ${g.workspace} · ${grantId}`
  await c.query(`insert into agents (id, org_id, name, kind) values ($1, $2, $3, 'developer')`, [agentId, g.orgId, agentName])
  await c.query(
    `insert into oauth_grants (id, org_id, user_id, client_id, workspace, agent_id, scopes, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8)`,
    [grantId, g.orgId, g.userId, g.clientId, g.workspace, agentId, g.scopes, new Date(g.now)],
  )
  return { grantId, agentId, created: true, reactivated: false }
}

/** The grant a human's consent creates or reuses. */
export async function upsertGrant(db: Db, g: UpsertGrantInput): Promise<GrantRef> {
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await tx(db, (c) => findOrCreate(c, g))
      await purgeExpired(db, g.now)
      if (out.created || out.reactivated) {
        await recordAudit(db, { orgId: g.orgId, actor: g.userId, action: out.created ? 'oauth.grant.create' : 'oauth.grant.reactivate', targetType: 'oauth_grant', targetId: out.grantId, grantId: out.grantId })
      }
      return { grantId: out.grantId, agentId: out.agentId }
    } catch (e: any) {
      // two consents for the same workspace raced; the second finds the first's row
      if (e?.code === '23505' && attempt === 0) continue
      throw e
    }
  }
}

/** Soft-revokes grants and everything derived from them. Idempotent. */
export async function revokeGrants(c: Queryable, grantIds: string[], nowMs: number): Promise<void> {
  if (grantIds.length === 0) return
  const now = new Date(nowMs)
  await c.query('update oauth_grants set revoked_at = coalesce(revoked_at, $2) where id = any($1)', [grantIds, now])
  await c.query('update oauth_tokens set revoked_at = coalesce(revoked_at, $2) where grant_id = any($1)', [grantIds, now])
  await c.query('delete from oauth_codes where grant_id = any($1) and used_at is null', [grantIds])
  await c.query(`update oauth_device_codes set status = 'denied' where grant_id = any($1) and status = 'approved'`, [grantIds])
}

/** Revokes one grant by id, with an audit row. Returns false when no such grant exists. */
export async function revokeGrantById(db: Db, grantId: string, actor: string, now: number): Promise<boolean> {
  const r = await db.query('select org_id from oauth_grants where id = $1', [grantId])
  if (!r.rows[0]) return false
  await tx(db, (c) => revokeGrants(c, [grantId], now))
  await recordAudit(db, { orgId: r.rows[0].org_id, actor, action: 'oauth.grant.revoke', targetType: 'oauth_grant', targetId: grantId, grantId })
  return true
}

/**
 * Housekeeping, run when a human approves a login (not on every request): rows a day
 * past expiry can no longer be used or replayed meaningfully. Used codes and spent
 * refresh tokens are kept until then so a replay is still recognised and punished.
 */
export async function purgeExpired(db: Queryable, nowMs: number): Promise<void> {
  const cutoff = new Date(nowMs - 86_400_000)
  await db.query('delete from oauth_codes where expires_at < $1', [cutoff])
  await db.query('delete from oauth_tokens where expires_at < $1', [cutoff])
  await db.query('delete from oauth_device_codes where expires_at < $1', [cutoff])
}
