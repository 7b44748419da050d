// identity_list_assumable: what the calling agent may bind right now.
import { implement } from '../types.ts'
import { identityListAssumable as contract } from '../../../contracts/operations/personas.ts'
import { listAssumable } from '../../personas/assumable.ts'

export const identityListAssumable = implement(contract, {
  handler: async (ctx) => listAssumable(ctx.services, { orgId: ctx.auth.orgId, agentId: ctx.auth.agentId }),
})
