import { z } from 'zod'
import { defineOperation } from '../types.ts'
import { mintKey } from '../../auth/keys.ts'
import { listAudit } from '../../audit/audit.ts'
import { recordAudit } from '../../audit/audit.ts'

export const me = defineOperation({
  name: 'me',
  description: 'Who the calling credential is: its org, agent and scopes',
  scopes: [],
  input: z.strictObject({}),
  rest: { method: 'GET', path: '/v1/me' },
  mcp: false,
  handler: async ({ auth }) => ({
    orgId: auth.orgId,
    agentId: auth.agentId,
    scopes: [...auth.scopes].sort(),
    principal: auth.principal,
  }),
})

export const keyCreate = defineOperation({
  name: 'key_create',
  description: 'Mint an API key; a key never gets a scope its minter lacks',
  scopes: ['keys:write'],
  input: z.strictObject({
    name: z.string().min(1).max(80),
    scopes: z.array(z.string()).min(1).max(20),
    agent: z.string().optional(),
  }),
  rest: { method: 'POST', path: '/v1/keys', status: 201 },
  mcp: false,
  handler: async ({ auth, services }, input) => {
    const key = await mintKey(services.db, {
      orgId: auth.orgId,
      name: input.name,
      scopes: input.scopes,
      agentId: input.agent || null,
      minterScopes: auth.scopes,
    })
    await recordAudit(services.db, { orgId: auth.orgId, actor: auth.principal.principalId, action: 'key.create', targetType: 'key', targetId: key.id })
    return { id: key.id, name: key.name, scopes: key.scopes, agentId: key.agentId, secret: key.secret }
  },
})

export const auditList = defineOperation({
  name: 'audit_list',
  description: 'The org audit trail, oldest first, paged by id',
  scopes: ['org:admin'],
  input: z.strictObject({
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    action: z.string().max(80).optional(),
  }),
  rest: { method: 'GET', path: '/v1/audit' },
  mcp: false,
  handler: async ({ auth, services }, input) => {
    const items = await listAudit(services.db, auth.orgId, { after: input.after, limit: input.limit, action: input.action })
    return { items, next: items.length === input.limit ? items[items.length - 1].id : null }
  },
})

export const foundationOperations = [me, keyCreate, auditList]
