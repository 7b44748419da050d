// identity_create, identity_list, identity_delete.
import { implement } from '../types.ts'
import * as c from '../../../contracts/operations/personas.ts'
import { recordAudit } from '../../audit/audit.ts'
import { createIdentity, deleteIdentity, listIdentities } from '../../personas/identities.ts'
import { actorOf } from './common.ts'

export const identityCreate = implement(c.identityCreate, {
  handler: async (ctx, input) => {
    const identity = await createIdentity(ctx.services.db, { orgId: ctx.auth.orgId, name: input.name, defaultOpenMode: input.defaultOpenMode })
    await recordAudit(ctx.services.db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'identity.create', targetType: 'identity', targetId: identity.id, identityId: identity.id,
    })
    return identity
  },
})

export const identityList = implement(c.identityList, {
  handler: async (ctx) => listIdentities(ctx.services.db, ctx.auth.orgId),
})

export const identityDelete = implement(c.identityDelete, {
  handler: async (ctx, input) => {
    const identity = await deleteIdentity(ctx.services.db, ctx.auth.orgId, input.identityId)
    await recordAudit(ctx.services.db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'identity.delete', targetType: 'identity', targetId: identity.id, identityId: identity.id,
    })
  },
})

export const identityOperations = [identityCreate, identityList, identityDelete]
