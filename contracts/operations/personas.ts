// Persona operations: identities, their sealed credentials, grants and the org
// governance flags. Credential values are write-only: no result has a value field,
// only a mask. Input messages name the field and the rule, never the value: a value
// sent here may be a secret pasted by mistake.
import { z } from 'zod'
import { defineContract } from './types.ts'
import { hostEntryProblem, normalizeHostEntry, REQUEST_MAX_HOSTS } from '../hosts.ts'
import { personText } from '../person-text.ts'
import { idParam, isoTime as isoTimestamp } from './fields.ts'
import { proxySetting, proxyView } from './proxy.ts'

// --- input rules -----------------------------------------------------------------------
// (the domain code uses these same rules: api-server/personas/validation.ts re-exports them)

export const OPEN_MODES = ['exclusive', 'fork', 'readonly'] as const
export const GRANT_ROLES = ['assume', 'manage'] as const
export const PROPAGATIONS = ['none', 'same_conversation', 'descendants'] as const
export const ORG_ROLES = ['owner', 'admin', 'member'] as const
export const LEASE_STATES = ['available', 'in_use'] as const
export const GRANT_STATES = ['live', 'expired', 'revoked'] as const

export { idParam }

// Identity names double as a session_start reference, so one that looks like an id
// (nident_…) would make "id or name" ambiguous.
export const identityName = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9 ._@+-]{0,62}[A-Za-z0-9._@+-])?$/, 'must be 1-64 letters, digits, spaces or . _ @ + - (no leading or trailing space)')
  .refine((s) => !s.startsWith('nident_'), 'must not start with nident_')

// Credential names appear inside {{credential:<name>}}, so no braces or spaces.
export const credentialName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits or . _ - (starting with a letter or digit)')

/** What a credential holds: a password (typed as is) or a TOTP seed (its current code is typed). */
export const CREDENTIAL_KINDS = ['password', 'totp'] as const
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number]

export const secretValue = z.string().min(1, 'must not be empty').max(4096, 'must be at most 4096 characters')

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/
export const rfc3339 = z
  .string()
  .refine((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)), 'must be an RFC 3339 timestamp with a time zone, e.g. 2030-01-01T00:00:00Z')

/**
 * A list of hosts (each optionally with :port), normalised and de-duplicated.
 * URLs, paths, wildcards, userinfo, empty strings and unreasonable names (contracts/hosts.ts:
 * length, labels) are refused, by index.
 */
function hostListOf(maxHosts: number) {
  return z
    .array(z.string().max(260))
    .max(maxHosts, `must list at most ${maxHosts} hosts`)
    .transform((entries, ctx) => {
      const out: string[] = []
      entries.forEach((entry, i) => {
        const problem = hostEntryProblem(entry)
        const n = problem ? null : normalizeHostEntry(entry)
        if (n === null) {
          ctx.addIssue({ code: 'custom', path: [i], message: problem ?? 'must be a host, optionally with :port (no scheme, path, wildcard or userinfo)' })
        } else if (!out.includes(n)) out.push(n)
      })
      return out
    })
}

/** A credential's allowlist, a grant's narrowing, a network's declared hosts. */
export const hostList = hostListOf(100)
/** The hosts an agent's credential_request names: fewer, since a person reads every one before typing a secret. */
export const requestHostList = hostListOf(REQUEST_MAX_HOSTS)

export const maxSessionDurationSecs = z.number().int('must be an integer').positive('must be a positive integer').max(2147483647).nullable()

/**
 * Normalises an advisor origin: `http(s)://host[:port]` with nothing after it (an
 * origin, so the cloak gate can compare a session url's origin exactly). Returns
 * null for anything else: bare hosts, paths, queries, userinfo, wildcards.
 */
export function normalizeAdvisorOrigin(entry: string): string | null {
  if (typeof entry !== 'string' || !entry || entry.length > 300) return null
  if (!entry.includes('://')) return null
  let u: URL
  try {
    u = new URL(entry)
  } catch {
    return null
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null
  if (u.username || u.password || u.search || u.hash || (u.pathname !== '/' && u.pathname !== '')) return null
  if (entry.includes('*')) return null
  return u.origin
}

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

// --- results -------------------------------------------------------------------------

export const CredentialSlot = z.object({
  name: z.string(),
  placeholder: z.string().describe('{{credential:<name>}}'),
  allowedOrigins: z.array(z.string()).describe("the credential's origin allowlist narrowed by the grant's allowed origins"),
})

export const AssumableIdentity = z.object({
  id: z.string(),
  name: z.string(),
  grantRole: z.enum(GRANT_ROLES).describe('the role of the most restrictive live grant'),
  leaseState: z.enum(LEASE_STATES),
  openModes: z.array(z.enum(OPEN_MODES)),
  credentialSlots: z.array(CredentialSlot).describe('names and placeholders only: never a value or a mask'),
})

export const Identity = z.object({
  id: z.string(),
  name: z.string(),
  defaultOpenMode: z.enum(OPEN_MODES),
  createdAt: isoTimestamp,
})

export const IdentityWithLease = Identity.extend({
  leaseState: z.enum(LEASE_STATES).describe('never the holder'),
  proxy: proxyView.optional().describe('present when the identity has a default upstream proxy: its URL (never the credentials) and whether it authenticates'),
})

/** What is ever returned about a credential: there is deliberately no value field. */
export const CredentialView = z.object({
  id: z.string(),
  identityId: z.string(),
  name: z.string(),
  placeholder: z.string().describe('{{credential:<name>}}'),
  kind: z.enum(CREDENTIAL_KINDS).describe('password: the value is typed; totp: the current one-time code is typed'),
  maskedValue: z.string().describe('bullets, plus the last 4 characters of a password of 8 or more; bullets only for totp'),
  originAllowlist: z.array(z.string()),
  createdAt: isoTimestamp,
  rotatedAt: isoTimestamp.nullable().describe('null until the first rotation'),
})

export const GrantView = z.object({
  id: z.string(),
  identityId: z.string(),
  principalAgentId: z.string(),
  principalUserId: z.string().nullable(),
  principalOrgRole: z.enum(ORG_ROLES).nullable(),
  role: z.enum(GRANT_ROLES),
  expiresAt: isoTimestamp,
  allowedOrigins: z.array(z.string()),
  propagation: z.enum(PROPAGATIONS),
  maxSessionDurationSecs: z.number().int().positive().nullable(),
  reason: z.string(),
  createdByUserId: z.string().nullable(),
  createdAt: isoTimestamp,
  revokedAt: isoTimestamp.nullable(),
  revoked_at: isoTimestamp.nullable().describe('the same as revokedAt (the spec’s name for the soft-revoke field)'),
  state: z.enum(GRANT_STATES),
})

export const Governance = z.object({
  credential_freetext_fill: z.boolean(),
  cloakEnabled: z.boolean(),
  declaredAdvisorOrigins: z.array(z.string()).describe('origins, http(s)://host[:port]'),
  recordSessions: z.boolean().describe('record every session whose start leaves `record` out (a start may still say record: false)'),
  videoSessions: z.boolean().describe('record every session whose start leaves `video` out as video, with the default settings (a start may still say video: false)'),
  videoMaxSeconds: z.number().int().nullable().describe('the org\'s bound on every video\'s length, in seconds; null: the platform\'s (NIGHTJAR_VIDEO_MAX_MINUTES) alone. The lower of the two applies'),
  videoMaxMiB: z.number().int().nullable().describe('the org\'s bound on every video\'s size, in MiB; null: the platform\'s (NIGHTJAR_VIDEO_MAX_MB) alone. The lower of the two applies'),
  proxyHosts: z.array(z.string()).describe('the upstream proxy hosts (host[:port], matched exactly) a session or an identity may name; empty allows no proxy (docs/proxy.md)'),
})

// --- operations ----------------------------------------------------------------------

const READ_ONLY_TOOL = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const

export const identityListAssumable = defineContract({
  name: 'identity_list_assumable',
  description: 'List identities the calling agent holds a live assume or manage grant on, with credential slots (no values) and lease state',
  scopes: ['identities:read'],
  input: z.strictObject({}),
  output: z.array(AssumableIdentity),
  rest: { method: 'GET', path: '/v1/identities/assumable' },
  annotations: READ_ONLY_TOOL,
})

export const identityCreate = defineContract({
  name: 'identity_create',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Create an identity (persona) in the org; names are unique per org',
  scopes: ['identities:write'],
  input: z.strictObject({
    name: identityName,
    defaultOpenMode: z.enum(OPEN_MODES).default('exclusive'),
  }),
  output: Identity,
  rest: { method: 'POST', path: '/v1/identities', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const identityList = defineContract({
  name: 'identity_list',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'List the org identities with their lease state (never the holder)',
  scopes: ['identities:read'],
  input: z.strictObject({}),
  output: z.array(IdentityWithLease),
  rest: { method: 'GET', path: '/v1/identities' },
  annotations: READ_ONLY_TOOL,
})

export const identityDelete = defineContract({
  name: 'identity_delete',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Delete an identity with its credentials and grants; refused (409) while a session holds its lease',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const credentialCreate = defineContract({
  name: 'credential_create',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Add a sealed credential to an identity; the value is write-only and only a mask is returned',
  scopes: ['identities:write'],
  input: z.strictObject({
    identityId: idParam,
    name: credentialName,
    placeholder: z.string().max(100).optional(),
    kind: z.enum(CREDENTIAL_KINDS).optional().describe('password (default), or totp: the value is an otpauth://totp/ URI or a base32 seed, and a fill types the current code'),
    value: secretValue,
    originAllowlist: hostList,
  }),
  output: CredentialView,
  rest: { method: 'POST', path: '/v1/identities/:identityId/credentials', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const credentialList = defineContract({
  name: 'credential_list',
  description: "List an identity's credentials: names, placeholders, origins and masks only",
  scopes: ['identities:read'],
  input: z.strictObject({ identityId: idParam }),
  output: z.array(CredentialView),
  rest: { method: 'GET', path: '/v1/identities/:identityId/credentials' },
  annotations: READ_ONLY_TOOL,
})

export const credentialRotate = defineContract({
  name: 'credential_rotate',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Replace a credential value (re-sealed); its name, kind and origin allowlist are unchanged',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, credentialId: idParam, value: secretValue }),
  output: CredentialView,
  rest: { method: 'POST', path: '/v1/identities/:identityId/credentials/:credentialId/rotate' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
})

export const credentialDelete = defineContract({
  name: 'credential_delete',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Delete a credential from an identity',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, credentialId: idParam }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId/credentials/:credentialId', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const grantCreate = defineContract({
  name: 'grant_create',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Grant an agent the right to assume or manage an identity until expiresAt',
  scopes: ['identities:write'],
  input: z.strictObject({
    identityId: idParam,
    principalAgentId: idParam,
    role: z.enum(GRANT_ROLES),
    expiresAt: rfc3339,
    allowedOrigins: hostList,
    propagation: z.enum(PROPAGATIONS),
    maxSessionDurationSecs,
    reason: personText(z.string().trim().min(1, 'must not be empty').max(500)),
    principalUserId: idParam.nullable().optional(),
    principalOrgRole: z.enum(ORG_ROLES).nullable().optional(),
  }),
  output: GrantView,
  rest: { method: 'POST', path: '/v1/identities/:identityId/grants', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const grantList = defineContract({
  name: 'grant_list',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'List who may assume or manage an identity, with each grant state (live, expired, revoked)',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam }),
  output: z.array(GrantView),
  rest: { method: 'GET', path: '/v1/identities/:identityId/grants' },
  annotations: READ_ONLY_TOOL,
})

export const grantRevoke = defineContract({
  name: 'grant_revoke',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Soft-revoke a grant (idempotent): future binds fail; a lease already held is kept until its session ends',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, grantId: idParam }),
  output: z.void(),
  rest: { method: 'POST', path: '/v1/identities/:identityId/grants/:grantId/revoke', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const grantDelete = defineContract({
  name: 'grant_delete',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: 'Hard-delete a grant: removes the row and its audit trail',
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, grantId: idParam }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId/grants/:grantId', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const identityProxyPut = defineContract({
  name: 'identity_proxy_put',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: "Set an identity's default upstream proxy, used by a session bound to it that names no proxy of its own; its host must be on the org allowlist (governance proxyHosts) and its credentials are sealed, never returned",
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam, url: proxySetting.shape.url, username: proxySetting.shape.username, password: proxySetting.shape.password })
    .refine((p) => p.password === undefined || p.username !== undefined, { message: 'a password needs a username', path: ['password'] }),
  output: proxyView,
  rest: { method: 'PUT', path: '/v1/identities/:identityId/proxy' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const identityProxyDelete = defineContract({
  name: 'identity_proxy_delete',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: "Remove an identity's default upstream proxy and its sealed credentials (sessions already open keep theirs)",
  scopes: ['identities:write'],
  input: z.strictObject({ identityId: idParam }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/identities/:identityId/proxy', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const governanceGet = defineContract({
  name: 'governance_get',
  description: 'Read the org governance flags',
  scopes: ['org:admin'],
  input: z.strictObject({}),
  output: Governance,
  rest: { method: 'GET', path: '/v1/governance' },
  mcp: false,
  annotations: READ_ONLY_TOOL,
})

export const governancePut = defineContract({
  name: 'governance_put',
  description: 'Update the org governance flags; fields left out keep their value',
  scopes: ['org:admin'],
  input: z.strictObject({
    credential_freetext_fill: z.boolean().optional(),
    cloakEnabled: z.boolean().optional(),
    declaredAdvisorOrigins: advisorOrigins.optional(),
    recordSessions: z.boolean().optional(),
    videoSessions: z.boolean().optional(),
    videoMaxSeconds: z.number().int().min(1).max(86_400).nullable().optional(),
    videoMaxMiB: z.number().int().min(1).max(100_000).nullable().optional(),
    proxyHosts: hostList.optional(),
  }),
  output: Governance.describe('the flags after the update'),
  rest: { method: 'PUT', path: '/v1/governance' },
  mcp: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

/** The persona operations, in the order tools are listed. */
export const personaContracts = [
  identityListAssumable,
  identityCreate, identityList, identityDelete, identityProxyPut, identityProxyDelete,
  credentialCreate, credentialList, credentialRotate, credentialDelete,
  grantCreate, grantList, grantRevoke, grantDelete,
  governanceGet, governancePut,
] as const
