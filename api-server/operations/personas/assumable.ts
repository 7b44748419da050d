// identity_list_assumable: what the calling agent may bind right now.
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { listAssumable } from '../../personas/assumable.ts'

export const identityListAssumable = defineOperation({
  name: 'identity_list_assumable',
  description: 'List identities the calling agent holds a live assume or manage grant on, with credential slots (no values) and lease state',
  scopes: ['identities:read'],
  input: z.strictObject({}),
  rest: { method: 'GET', path: '/v1/identities/assumable' },
  handler: async (ctx) => listAssumable(ctx.services, { orgId: ctx.auth.orgId, agentId: ctx.auth.agentId }),
})
