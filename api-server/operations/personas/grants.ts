// grant_create, grant_list, grant_revoke (soft, idempotent), grant_delete (hard,
// removing the grant's audit trail too — RULE-35).
import type { z } from 'zod'
import { implement } from '../types.ts'
import * as c from '../../../contracts/operations/personas.ts'
import { errors } from '../../../contracts/errors.ts'
import { tx } from '../../store/db.ts'
import { recordAudit } from '../../audit/audit.ts'
import { requireIdentityById } from '../../personas/identities.ts'
import { createGrant, grantView, hardDeleteGrant, listGrants, revokeGrant, type Grant } from '../../personas/grants.ts'
import { actorOf, callingUserId } from './common.ts'

/** A grant as it goes on the wire. The principal_org_role column's check constraint holds it to ORG_ROLES. */
const wireGrant = (g: Grant, nowMs: number): z.input<typeof c.GrantView> =>
  ({ ...grantView(g, nowMs), principalOrgRole: g.principalOrgRole as (typeof c.ORG_ROLES)[number] | null })

export const grantCreate = implement(c.grantCreate, {
  handler: async (ctx, input) => {
    const { db } = ctx.services
    const nowMs = ctx.services.now()
    const expiresAt = new Date(input.expiresAt)
    if (expiresAt.getTime() <= nowMs) throw errors.invalidRequest('expiresAt: must be in the future')
    const orgId = ctx.auth.orgId
    const identity = await requireIdentityById(db, orgId, input.identityId)
    // Foreign and unknown principals get the one 404 (no existence oracle).
    const agent = await db.query(`select 1 from agents where org_id = $1 and id = $2`, [orgId, input.principalAgentId])
    if (!agent.rowCount) throw errors.notFound('agent')
    if (input.principalUserId) {
      const user = await db.query(`select 1 from users where org_id = $1 and id = $2`, [orgId, input.principalUserId])
      if (!user.rowCount) throw errors.notFound('user')
    }
    const grant = await createGrant(db, {
      orgId, identityId: identity.id, principalAgentId: input.principalAgentId, principalUserId: input.principalUserId ?? null,
      principalOrgRole: input.principalOrgRole ?? null, role: input.role, expiresAt, allowedOrigins: input.allowedOrigins,
      propagation: input.propagation, maxSessionDurationSecs: input.maxSessionDurationSecs, reason: input.reason,
      createdByUserId: await callingUserId(ctx), createdAt: new Date(nowMs),
    })
    await recordAudit(db, {
      orgId, actor: actorOf(ctx), action: 'grant.create', targetType: 'grant', targetId: grant.id, identityId: identity.id, grantId: grant.id,
    })
    return wireGrant(grant, nowMs)
  },
})

export const grantList = implement(c.grantList, {
  handler: async (ctx, input) => {
    const identity = await requireIdentityById(ctx.services.db, ctx.auth.orgId, input.identityId)
    const nowMs = ctx.services.now()
    return (await listGrants(ctx.services.db, ctx.auth.orgId, identity.id)).map((g) => wireGrant(g, nowMs))
  },
})

export const grantRevoke = implement(c.grantRevoke, {
  handler: async (ctx, input) => {
    const { db } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const grant = await revokeGrant(db, { orgId: ctx.auth.orgId, identityId: identity.id, grantId: input.grantId }, new Date(ctx.services.now()))
    await recordAudit(db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'grant.revoke', targetType: 'grant', targetId: grant.id, identityId: identity.id, grantId: grant.id,
    })
  },
})

export const grantDelete = implement(c.grantDelete, {
  handler: async (ctx, input) => {
    const orgId = ctx.auth.orgId
    await tx(ctx.services.db, async (db) => {
      const identity = await requireIdentityById(db, orgId, input.identityId)
      await hardDeleteGrant(db, { orgId, identityId: identity.id, grantId: input.grantId })
      // The deletion itself is recorded without the grant id, so the trail stays gone.
      await recordAudit(db, { orgId, actor: actorOf(ctx), action: 'grant.delete', targetType: 'identity', targetId: identity.id, identityId: identity.id })
    })
  },
})

export const grantOperations = [grantCreate, grantList, grantRevoke, grantDelete]
