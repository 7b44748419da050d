// credential_create, credential_list, credential_rotate, credential_delete.
// Values are write-only: every result is a CredentialView (mask, no value field).
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { badRequest } from '../../../contracts/errors.ts'
import { recordAudit } from '../../audit/audit.ts'
import { requireIdentityById } from '../../personas/identities.ts'
import { createCredential, deleteCredential, listCredentials, rotateCredential } from '../../personas/credentials.ts'
import { credentialName, hostList, idParam, placeholderFor, secretValue } from '../../personas/validation.ts'
import { actorOf } from './common.ts'

export const EMPTY_ALLOWLIST_MESSAGE = 'origin_allowlist must list at least one origin'

export const credentialCreate = defineOperation({
  name: 'credential_create',
  description: 'Add a sealed credential to an identity; the value is write-only and only a mask is returned',
  scopes: ['identities:write'],
  input: z.strictObject({
    identityId: idParam,
    name: credentialName,
    placeholder: z.string().max(100).optional(),
    value: secretValue,
    originAllowlist: hostList,
  }),
  rest: { method: 'POST', path: '/v1/identities/:identityId/credentials', status: 201 },
  handler: async (ctx, input) => {
    const placeholder = placeholderFor(input.name)
    if (input.placeholder !== undefined && input.placeholder !== placeholder) {
      throw badRequest('invalid request: placeholder: must be {{credential:<name>}} for this credential name')
    }
    if (input.originAllowlist.length === 0) throw badRequest(EMPTY_ALLOWLIST_MESSAGE)
    const { db, sealer } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const cred = await createCredential(db, sealer, {
      orgId: ctx.auth.orgId, identityId: identity.id, name: input.name, placeholder, value: input.value, originAllowlist: input.originAllowlist,
    })
    await recordAudit(db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'credential.create', targetType: 'credential', targetId: cred.id,
      identityId: identity.id, credentialId: cred.id, credentialName: cred.name,
    })
    return cred
  },
})

export const credentialList = defineOperation({
  name: 'credential_list',
  description: "List an identity's credentials: names, placeholders, origins and masks only",
  scopes: ['identities:read'],
  input: z.strictObject({ identityId: idParam }),
  rest: { method: 'GET', path: '/v1/identities/:identityId/credentials' },
  handler: async (ctx, input) => {
    const identity = await requireIdentityById(ctx.services.db, ctx.auth.orgId, input.identityId)
    return listCredentials(ctx.services.db, ctx.auth.orgId, identity.id)
  },
})

export const credentialRotate = defineOperation({
  name: 'credential_rotate',
  description: 'Replace a credential value (re-sealed); its name and origin allowlist are unchanged',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, credentialId: idParam, value: secretValue }),
  rest: { method: 'POST', path: '/v1/identities/:identityId/credentials/:credentialId/rotate' },
  handler: async (ctx, input) => {
    const { db, sealer } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const cred = await rotateCredential(db, sealer, { orgId: ctx.auth.orgId, identityId: identity.id, credentialId: input.credentialId }, input.value, new Date(ctx.services.now()))
    await recordAudit(db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'credential.rotate', targetType: 'credential', targetId: cred.id,
      identityId: identity.id, credentialId: cred.id, credentialName: cred.name,
    })
    return cred
  },
})

export const credentialDelete = defineOperation({
  name: 'credential_delete',
  description: 'Delete a credential from an identity',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, credentialId: idParam }),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId/credentials/:credentialId', status: 204 },
  handler: async (ctx, input) => {
    const { db } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const cred = await deleteCredential(db, { orgId: ctx.auth.orgId, identityId: identity.id, credentialId: input.credentialId })
    await recordAudit(db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'credential.delete', targetType: 'credential', targetId: cred.id,
      identityId: identity.id, credentialId: cred.id, credentialName: cred.name,
    })
  },
})

export const credentialOperations = [credentialCreate, credentialList, credentialRotate, credentialDelete]
