// What the operator commands do (cli/oauth-admin.ts prints it): list clients, revoke
// a client with all its grants, revoke one grant. The built-in client cannot be
// revoked: every CLI install depends on its fixed id; revoke its grants instead.
import type { Db } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { recordAudit } from '../audit/audit.ts'
import { revokeGrants, revokeGrantById } from './grants.ts'

export interface ClientSummary {
  clientId: string
  name: string
  builtin: boolean
  redirectUris: string[]
  createdAt: string
  revokedAt: string | null
  activeGrants: number
}

export async function listOAuthClients(db: Db): Promise<ClientSummary[]> {
  const r = await db.query(
    `select c.*, (select count(*)::int from oauth_grants g where g.client_id = c.id and g.revoked_at is null) as active_grants
       from oauth_clients c order by c.builtin desc, c.created_at, c.id`,
  )
  return r.rows.map((c) => ({
    clientId: c.id, name: c.client_name, builtin: c.builtin, redirectUris: c.redirect_uris,
    createdAt: new Date(c.created_at).toISOString(), revokedAt: c.revoked_at ? new Date(c.revoked_at).toISOString() : null, activeGrants: c.active_grants,
  }))
}

export type RevokeClientResult = { ok: true; grantsRevoked: number; alreadyRevoked: boolean } | { ok: false; reason: 'not_found' | 'builtin' }

export async function revokeOAuthClient(db: Db, clientId: string, now: number, actor = 'operator-cli'): Promise<RevokeClientResult> {
  const r = await db.query('select builtin, revoked_at from oauth_clients where id = $1', [clientId])
  const c = r.rows[0]
  if (!c) return { ok: false, reason: 'not_found' }
  if (c.builtin) return { ok: false, reason: 'builtin' }
  const grants = await tx(db, async (q) => {
    await q.query('update oauth_clients set revoked_at = coalesce(revoked_at, $2) where id = $1', [clientId, new Date(now)])
    const g = await q.query('select id, org_id from oauth_grants where client_id = $1 and revoked_at is null', [clientId])
    await revokeGrants(q, g.rows.map((x) => x.id), now)
    return g.rows as Array<{ id: string; org_id: string }>
  })
  for (const g of grants) await recordAudit(db, { orgId: g.org_id, actor, action: 'oauth.grant.revoke', targetType: 'oauth_grant', targetId: g.id, grantId: g.id, reason: 'client_revoked' })
  return { ok: true, grantsRevoked: grants.length, alreadyRevoked: c.revoked_at !== null }
}

export async function revokeOAuthGrant(db: Db, grantId: string, now: number, actor = 'operator-cli'): Promise<boolean> {
  return revokeGrantById(db, grantId, actor, now)
}
