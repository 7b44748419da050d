// authstate_capture, authstate_list (contracts/operations/authstate.ts): captured
// auth-state versions of an identity (cloak warm resume). Results carry ids, who, when
// and covered hosts — never contents.
import { implement } from '../types.ts'
import { authstateCapture, authstateList } from '../../../contracts/operations/authstate.ts'
import { requireIdentityById } from '../../personas/identities.ts'
import { captureAuthState, listVersions } from '../../authstate/index.ts'
import { driveDeps } from '../sessions/drive-spec.ts'

export const authstateCaptureOperation = implement(authstateCapture, {
  handler: (ctx, { sessionId }) => captureAuthState(driveDeps(ctx), { orgId: ctx.auth.orgId, sessionId, actor: ctx.auth.principal.principalId }),
})

export const authstateListOperation = implement(authstateList, {
  handler: async (ctx, { identityId }) => {
    const identity = await requireIdentityById(ctx.services.db, ctx.auth.orgId, identityId)
    return listVersions(ctx.services.db, ctx.auth.orgId, identity.id)
  },
})

export const authstateOperations = [authstateCaptureOperation, authstateListOperation] as const
