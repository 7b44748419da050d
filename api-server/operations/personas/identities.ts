// identity_create, identity_list, identity_delete.
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { recordAudit } from '../../audit/audit.ts'
import { createIdentity, deleteIdentity, listIdentities } from '../../personas/identities.ts'
import { OPEN_MODES, idParam, identityName } from '../../personas/validation.ts'
import { actorOf } from './common.ts'

export const identityCreate = defineOperation({
  name: 'identity_create',
  description: 'Create an identity (persona) in the org; names are unique per org',
  scopes: ['identities:write'],
  input: z.strictObject({
    name: identityName,
    defaultOpenMode: z.enum(OPEN_MODES).default('exclusive'),
  }),
  rest: { method: 'POST', path: '/v1/identities', status: 201 },
  handler: async (ctx, input) => {
    const identity = await createIdentity(ctx.services.db, { orgId: ctx.auth.orgId, name: input.name, defaultOpenMode: input.defaultOpenMode })
    await recordAudit(ctx.services.db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'identity.create', targetType: 'identity', targetId: identity.id, identityId: identity.id,
    })
    return identity
  },
})

export const identityList = defineOperation({
  name: 'identity_list',
  description: 'List the org identities with their lease state (never the holder)',
  scopes: ['identities:read'],
  input: z.strictObject({}),
  rest: { method: 'GET', path: '/v1/identities' },
  handler: async (ctx) => listIdentities(ctx.services.db, ctx.auth.orgId),
})

export const identityDelete = defineOperation({
  name: 'identity_delete',
  description: 'Delete an identity with its credentials and grants; refused (409) while a session holds its lease',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam }),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId', status: 204 },
  handler: async (ctx, input) => {
    const identity = await deleteIdentity(ctx.services.db, ctx.auth.orgId, input.identityId)
    await recordAudit(ctx.services.db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'identity.delete', targetType: 'identity', targetId: identity.id, identityId: identity.id,
    })
  },
})

export const identityOperations = [identityCreate, identityList, identityDelete]
