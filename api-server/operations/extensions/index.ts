// Extensions: the extension_* operations and an identity's default extensions (contracts/operations/extensions.ts).
import { implement, type OpContext } from '../types.ts'
import * as c from '../../../contracts/operations/extensions.ts'
import { decideTrust, getExtensionView, listExtensionViews, removeExtension, setIdentityDefaultExtensions, uploadExtension } from '../../extensions/service.ts'

const actor = (ctx: OpContext) => ctx.auth.principal.principalId

export const extensionUpload = implement(c.extensionUpload, {
  handler: async (ctx, { zipBase64 }) => uploadExtension(ctx.services.db, { orgId: ctx.auth.orgId, actor: actor(ctx), zip: Buffer.from(zipBase64, 'base64') }),
})

export const extensionList = implement(c.extensionList, {
  handler: async (ctx) => ({ items: await listExtensionViews(ctx.services.db, { orgId: ctx.auth.orgId }) }),
})

export const extensionGet = implement(c.extensionGet, {
  handler: async (ctx, { extensionId }) => getExtensionView(ctx.services.db, { orgId: ctx.auth.orgId, id: extensionId }),
})

export const extensionTrust = implement(c.extensionTrust, {
  handler: async (ctx, { extensionId, trusted, reason }) =>
    decideTrust(ctx.services.db, { orgId: ctx.auth.orgId, actor: actor(ctx), id: extensionId, trusted, reason, now: ctx.services.now() }),
})

export const extensionDelete = implement(c.extensionDelete, {
  handler: async (ctx, { extensionId }) => {
    await removeExtension(ctx.services.db, { orgId: ctx.auth.orgId, actor: actor(ctx), id: extensionId })
  },
})

export const identityExtensionsPut = implement(c.identityExtensionsPut, {
  handler: async (ctx, { identityId, extensions }) => ({
    identityId,
    extensions: await setIdentityDefaultExtensions(ctx.services.db, { orgId: ctx.auth.orgId, identityId, ids: extensions }),
  }),
})

export const extensionOperations = [extensionUpload, extensionList, extensionGet, extensionTrust, extensionDelete, identityExtensionsPut]
