// authstate_capture, authstate_list: captured auth-state versions of an identity
// (cloak warm resume). Results carry ids, who, when and covered hosts — never contents.
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { requireIdentityById } from '../../personas/identities.ts'
import { idParam } from '../../personas/validation.ts'
import { captureAuthState, listVersions } from '../../authstate/index.ts'
import { sessionId } from '../sessions/schemas.ts'

export const authstateCapture = defineOperation({
  name: 'authstate_capture',
  description:
    "Capture a live session's cookies and storage as a new sealed auth-state version of its bound identity (admin action; never automatic)",
  // capture is credential-equivalent authoring: org authority, persona authoring and driving, all three
  scopes: ['org:admin', 'identities:write', 'sessions:drive'],
  input: z.strictObject({ sessionId }),
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/authstate', status: 201 },
  handler: (ctx, { sessionId }) => captureAuthState(ctx, sessionId),
})

export const authstateList = defineOperation({
  name: 'authstate_list',
  description: "List an identity's captured auth-state versions, newest first: id, createdAt, createdBy and the hosts covered",
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam }),
  rest: { method: 'GET', path: '/v1/identities/:identityId/authstates' },
  handler: async (ctx, { identityId }) => {
    const identity = await requireIdentityById(ctx.services.db, ctx.auth.orgId, identityId)
    return listVersions(ctx.services.db, ctx.auth.orgId, identity.id)
  },
})

export const authstateOperations = [authstateCapture, authstateList]
