// grant_create, grant_list, grant_revoke (soft, idempotent), grant_delete (hard,
// removing the grant's audit trail too — RULE-35).
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { badRequest, notFound } from '../../../contracts/errors.ts'
import { tx } from '../../store/db.ts'
import { recordAudit } from '../../audit/audit.ts'
import { requireIdentityById } from '../../personas/identities.ts'
import { createGrant, grantView, hardDeleteGrant, listGrants, revokeGrant } from '../../personas/grants.ts'
import { GRANT_ROLES, ORG_ROLES, PROPAGATIONS, hostList, idParam, maxSessionDurationSecs, rfc3339 } from '../../personas/validation.ts'
import { actorOf, callingUserId } from './common.ts'

export const grantCreate = defineOperation({
  name: 'grant_create',
  description: 'Grant an agent the right to assume or manage an identity until expiresAt',
  scopes: ['identities:write'],
  input: z.strictObject({
    identityId: idParam,
    principalAgentId: idParam,
    role: z.enum(GRANT_ROLES),
    expiresAt: rfc3339,
    allowedOrigins: hostList,
    propagation: z.enum(PROPAGATIONS),
    maxSessionDurationSecs,
    reason: z.string().trim().min(1, 'must not be empty').max(500),
    principalUserId: idParam.nullable().optional(),
    principalOrgRole: z.enum(ORG_ROLES).nullable().optional(),
  }),
  rest: { method: 'POST', path: '/v1/identities/:identityId/grants', status: 201 },
  handler: async (ctx, input) => {
    const { db } = ctx.services
    const nowMs = ctx.services.now()
    const expiresAt = new Date(input.expiresAt)
    if (expiresAt.getTime() <= nowMs) throw badRequest('invalid request: expiresAt: must be in the future')
    const orgId = ctx.auth.orgId
    const identity = await requireIdentityById(db, orgId, input.identityId)
    // Foreign and unknown principals get the one 404 (no existence oracle).
    const agent = await db.query(`select 1 from agents where org_id = $1 and id = $2`, [orgId, input.principalAgentId])
    if (!agent.rowCount) throw notFound('agent')
    if (input.principalUserId) {
      const user = await db.query(`select 1 from users where org_id = $1 and id = $2`, [orgId, input.principalUserId])
      if (!user.rowCount) throw notFound('user')
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
    return grantView(grant, nowMs)
  },
})

export const grantList = defineOperation({
  name: 'grant_list',
  description: 'List who may assume or manage an identity, with each grant state (live, expired, revoked)',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam }),
  rest: { method: 'GET', path: '/v1/identities/:identityId/grants' },
  handler: async (ctx, input) => {
    const identity = await requireIdentityById(ctx.services.db, ctx.auth.orgId, input.identityId)
    const nowMs = ctx.services.now()
    return (await listGrants(ctx.services.db, ctx.auth.orgId, identity.id)).map((g) => grantView(g, nowMs))
  },
})

export const grantRevoke = defineOperation({
  name: 'grant_revoke',
  description: 'Soft-revoke a grant (idempotent): future binds fail; a lease already held is kept until its session ends',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, grantId: idParam }),
  rest: { method: 'POST', path: '/v1/identities/:identityId/grants/:grantId/revoke', status: 204 },
  handler: async (ctx, input) => {
    const { db } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const grant = await revokeGrant(db, { orgId: ctx.auth.orgId, identityId: identity.id, grantId: input.grantId }, new Date(ctx.services.now()))
    await recordAudit(db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'grant.revoke', targetType: 'grant', targetId: grant.id, identityId: identity.id, grantId: grant.id,
    })
  },
})

export const grantDelete = defineOperation({
  name: 'grant_delete',
  description: 'Hard-delete a grant: removes the row and its audit trail',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, grantId: idParam }),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId/grants/:grantId', status: 204 },
  handler: async (ctx, input) => {
    const orgId = ctx.auth.orgId
    await tx(ctx.services.db, async (c) => {
      const identity = await requireIdentityById(c, orgId, input.identityId)
      await hardDeleteGrant(c, { orgId, identityId: identity.id, grantId: input.grantId })
      // The deletion itself is recorded without the grant id, so the trail stays gone.
      await recordAudit(c, { orgId, actor: actorOf(ctx), action: 'grant.delete', targetType: 'identity', targetId: identity.id, identityId: identity.id })
    })
  },
})

export const grantOperations = [grantCreate, grantList, grantRevoke, grantDelete]
