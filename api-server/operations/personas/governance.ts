// governance_get, governance_put: org:admin only, REST only (not MCP tools).
import { implement } from '../types.ts'
import { governanceGet as getContract, governancePut as putContract } from '../../../contracts/operations/personas.ts'
import { recordAudit } from '../../audit/audit.ts'
import { getGovernance, putGovernance } from '../../personas/governance.ts'
import { actorOf } from './common.ts'

export const governanceGet = implement(getContract, {
  handler: async (ctx) => getGovernance(ctx.services.db, ctx.auth.orgId),
})

export const governancePut = implement(putContract, {
  handler: async (ctx, input) => {
    const next = await putGovernance(ctx.services.db, ctx.auth.orgId, input, new Date(ctx.services.now()))
    const changed = Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined).sort().join(',')
    await recordAudit(ctx.services.db, { orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'governance.update', targetType: 'org', targetId: ctx.auth.orgId, reason: changed || 'none' })
    return next
  },
})

export const governanceOperations = [governanceGet, governancePut]
