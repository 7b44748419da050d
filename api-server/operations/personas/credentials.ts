// credential_create, credential_list, credential_rotate, credential_delete.
// Values are write-only: every result is a CredentialView (mask, no value field).
import { implement, type OpContext } from '../types.ts'
import * as c from '../../../contracts/operations/personas.ts'
import { errors } from '../../../contracts/errors.ts'
import { recordAudit } from '../../audit/audit.ts'
import { requireIdentityById } from '../../personas/identities.ts'
import { createCredential, deleteCredential, listCredentials, rotateCredential } from '../../personas/credentials.ts'
import { placeholderFor } from '../../personas/validation.ts'
import { actorOf } from './common.ts'


/** The value-free audit row of a credential write: ids and the name, never the value. */
function auditCredential(ctx: OpContext, action: string, identityId: string, cred: { id: string; name: string }) {
  return recordAudit(ctx.services.db, {
    orgId: ctx.auth.orgId, actor: actorOf(ctx), action, targetType: 'credential', targetId: cred.id,
    identityId, credentialId: cred.id, credentialName: cred.name,
  })
}

export const credentialCreate = implement(c.credentialCreate, {
  handler: async (ctx, input) => {
    const placeholder = placeholderFor(input.name)
    if (input.placeholder !== undefined && input.placeholder !== placeholder) {
      throw errors.invalidRequest('placeholder: must be {{credential:<name>}} for this credential name')
    }
    if (input.originAllowlist.length === 0) throw errors.emptyOriginAllowlist()
    const { db, sealer } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const cred = await createCredential(db, sealer, {
      orgId: ctx.auth.orgId, identityId: identity.id, name: input.name, placeholder, kind: input.kind, value: input.value, originAllowlist: input.originAllowlist,
    })
    await auditCredential(ctx, 'credential.create', identity.id, cred)
    return cred
  },
})

export const credentialList = implement(c.credentialList, {
  handler: async (ctx, input) => {
    const identity = await requireIdentityById(ctx.services.db, ctx.auth.orgId, input.identityId)
    return listCredentials(ctx.services.db, ctx.auth.orgId, identity.id)
  },
})

export const credentialRotate = implement(c.credentialRotate, {
  handler: async (ctx, input) => {
    const { db, sealer } = ctx.services
    const identity = await requireIdentityById(db, ctx.auth.orgId, input.identityId)
    const cred = await rotateCredential(db, sealer, { orgId: ctx.auth.orgId, identityId: identity.id, credentialId: input.credentialId }, input.value, new Date(ctx.services.now()))
    await auditCredential(ctx, 'credential.rotate', identity.id, cred)
    return cred
  },
})

export const credentialDelete = implement(c.credentialDelete, {
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
