// identity_create, identity_list, identity_delete.
import { implement } from '../types.ts'
import * as c from '../../../contracts/operations/personas.ts'
import { recordAudit } from '../../audit/audit.ts'
import { errors } from '../../../contracts/errors.ts'
import { createIdentity, deleteIdentity, listIdentities, requireIdentityById } from '../../personas/identities.ts'
import { allowedProxy, sealProxyAuth, setIdentityDefaultProxy } from '../../personas/proxy.ts'
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

export const identityProxyPut = implement(c.identityProxyPut, {
  handler: async (ctx, { identityId, ...proxy }) => {
    const { db, sealer, config } = ctx.services
    const orgId = ctx.auth.orgId
    await requireIdentityById(db, orgId, identityId)
    const { url } = await allowedProxy(db, orgId, proxy.url, config)
    const sealedAuth = await sealProxyAuth(sealer, { orgId, kind: 'identity', id: identityId }, proxy)
    if (!(await setIdentityDefaultProxy(db, orgId, identityId, { url, sealedAuth }))) throw errors.notFound('identity')
    // the URL only: never a username or password
    await recordAudit(db, { orgId, actor: actorOf(ctx), action: 'identity.proxy_set', targetType: 'identity', targetId: identityId, identityId, reason: url })
    return { url, authenticated: sealedAuth !== null }
  },
})

export const identityProxyDelete = implement(c.identityProxyDelete, {
  handler: async (ctx, { identityId }) => {
    const orgId = ctx.auth.orgId
    if (!(await setIdentityDefaultProxy(ctx.services.db, orgId, identityId, null))) throw errors.notFound('identity')
    await recordAudit(ctx.services.db, { orgId, actor: actorOf(ctx), action: 'identity.proxy_clear', targetType: 'identity', targetId: identityId, identityId })
  },
})

export const identityOperations = [identityCreate, identityList, identityDelete, identityProxyPut, identityProxyDelete]
