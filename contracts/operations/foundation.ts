// Foundation operations: who is calling, minting API keys, reading the audit trail.
// All three are REST-only (not MCP tools).
import { z } from 'zod'
import { defineContract } from './types.ts'
import { personText } from '../person-text.ts'

/** A timestamp on the wire: an ISO 8601 string in UTC (Date#toISOString). */
import { isoTime as isoTimestamp } from './fields.ts'

// --- results -------------------------------------------------------------------------

export const Principal = z.object({
  kind: z.enum(['key', 'oauth', 'console']),
  principalId: z.string().describe('the agent (or, for the console, the user) acting'),
  credentialId: z.string().describe('the key, OAuth grant or console session that authenticated the call'),
  name: z.string().describe('the human-readable name of that key or grant'),
})

export const MeResult = z.object({
  orgId: z.string(),
  agentId: z.string(),
  scopes: z.array(z.string()).describe('sorted'),
  principal: Principal,
})

export const MintedKey = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()).describe('de-duplicated and sorted'),
  agentId: z.string().nullable().describe('the agent the key acts as; null for the org default agent'),
  secret: z.string().describe('the key token (njk_…); shown only in this response, store it now'),
})

export const AuditRow = z.object({
  id: z.string().describe('a decimal number; pass it as after to read on from here'),
  orgId: z.string(),
  actor: z.string(),
  action: z.string(),
  targetType: z.string().optional(),
  targetId: z.string().optional(),
  identityId: z.string().optional(),
  credentialId: z.string().optional(),
  grantId: z.string().optional(),
  sessionId: z.string().optional(),
  credentialName: z.string().optional(),
  host: z.string().optional(),
  fieldKind: z.string().optional(),
  reason: z.string().optional(),
  extensionIds: z.array(z.string()).optional().describe('a credential fill’s row: the extensions its session loaded (all trusted, or the fill was refused)'),
  createdAt: isoTimestamp,
})

export const AuditPage = z.object({
  items: z.array(AuditRow),
  next: z.string().nullable().describe('the after of the next page; null when this page is not full'),
})

// --- operations ----------------------------------------------------------------------

export const me = defineContract({
  name: 'me',
  description: 'Who the calling credential is: its org, agent and scopes',
  scopes: [],
  input: z.strictObject({}),
  output: MeResult,
  rest: { method: 'GET', path: '/v1/me' },
  mcp: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const keyCreate = defineContract({
  name: 'key_create',
  description: 'Mint an API key; a key never gets a scope its minter lacks',
  scopes: ['keys:write'],
  input: z.strictObject({
    name: personText(z.string().min(1).max(80)),
    scopes: z.array(z.string()).min(1).max(20),
    agent: z.string().optional(),
  }),
  output: MintedKey,
  rest: { method: 'POST', path: '/v1/keys', status: 201 },
  mcp: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const auditList = defineContract({
  name: 'audit_list',
  description: 'The org audit trail, oldest first, paged by id',
  scopes: ['org:admin'],
  input: z.strictObject({
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    action: z.string().max(80).optional(),
  }),
  output: AuditPage,
  rest: { method: 'GET', path: '/v1/audit' },
  mcp: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const foundationContracts = [me, keyCreate, auditList] as const
