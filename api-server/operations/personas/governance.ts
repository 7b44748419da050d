// governance_get, governance_put: org:admin only, REST only (not MCP tools).
import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { recordAudit } from '../../audit/audit.ts'
import { getGovernance, normalizeAdvisorOrigin, putGovernance } from '../../personas/governance.ts'
import { actorOf } from './common.ts'

const advisorOrigins = z
  .array(z.string().max(300))
  .max(100, 'must list at most 100 origins')
  .transform((entries, ctx) => {
    const out: string[] = []
    entries.forEach((entry, i) => {
      const o = normalizeAdvisorOrigin(entry)
      if (!o) ctx.addIssue({ code: 'custom', path: [i], message: 'must be an origin: http(s)://host[:port] with no path' })
      else if (!out.includes(o)) out.push(o)
    })
    return out
  })

export const governanceGet = defineOperation({
  name: 'governance_get',
  description: 'Read the org governance flags',
  scopes: ['org:admin'],
  input: z.strictObject({}),
  rest: { method: 'GET', path: '/v1/governance' },
  mcp: false,
  handler: async (ctx) => getGovernance(ctx.services.db, ctx.auth.orgId),
})

export const governancePut = defineOperation({
  name: 'governance_put',
  description: 'Update the org governance flags; fields left out keep their value',
  scopes: ['org:admin'],
  input: z.strictObject({
    credential_freetext_fill: z.boolean().optional(),
    cloakEnabled: z.boolean().optional(),
    declaredAdvisorOrigins: advisorOrigins.optional(),
  }),
  rest: { method: 'PUT', path: '/v1/governance' },
  mcp: false,
  handler: async (ctx, input) => {
    const next = await putGovernance(ctx.services.db, ctx.auth.orgId, input, new Date(ctx.services.now()))
    const changed = Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined).sort().join(',')
    await recordAudit(ctx.services.db, { orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'governance.update', targetType: 'org', targetId: ctx.auth.orgId, reason: changed || 'none' })
    return next
  },
})

export const governanceOperations = [governanceGet, governancePut]
