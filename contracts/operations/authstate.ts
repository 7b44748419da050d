// authstate_capture, authstate_list: captured auth-state versions of an identity
// (cloak warm resume). Results carry ids, who, when and covered hosts — never contents.
import { z } from 'zod'
import { defineContract } from './types.ts'
import { idParam as identityId, isoTime, sessionId } from './fields.ts'

// --- results -------------------------------------------------------------------------

/** Everything ever returned about a version: ids, who, when, which hosts — never contents. */
export const AuthStateVersion = z.object({
  id: z.string().describe('version id (niver_…); session_start’s fromVersion'),
  identityId: z.string().describe('the identity the state belongs to (nident_…)'),
  createdAt: isoTime,
  createdBy: z.string().describe('the principal who captured it'),
  origins: z.array(z.string()).describe('the hosts the state covers (cookie domains and storage origins’ hosts), sorted; at most 200'),
})

// --- operations ----------------------------------------------------------------------

export const authstateCapture = defineContract({
  name: 'authstate_capture',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description:
    "Capture a live session's cookies and storage as a new sealed auth-state version of its bound identity (admin action; never automatic)",
  // capture is credential-equivalent authoring: org authority, persona authoring and driving, all three
  scopes: ['org:admin', 'identities:write', 'sessions:drive'],
  input: z.strictObject({ sessionId }),
  output: AuthStateVersion,
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/authstate', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const authstateList = defineContract({
  name: 'authstate_list',
  mcp: false, // authoring: REST, the SDK, the CLI and the console, never an agent's tool
  description: "List an identity's captured auth-state versions, newest first: id, createdAt, createdBy and the hosts covered",
  scopes: ['identities:write'],
  input: z.strictObject({ identityId }),
  output: z.array(AuthStateVersion),
  rest: { method: 'GET', path: '/v1/identities/:identityId/authstates' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const authstateContracts = [authstateCapture, authstateList] as const
