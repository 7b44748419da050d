// credential_request: the agent asks (identity, credential name, hosts, why), and a person
// of the org with identities:write enters the secret on a console page. The secret never
// passes through the agent, its client or MCP: an elicitation-capable client is sent the
// page's URL and told when it is saved; any other caller gets the URL in the result.
// Design: docs/mcp.md#how-url-elicitation-is-routed
import { z } from 'zod'
import { defineContract } from './types.ts'
import { identityRef, isoTime } from './fields.ts'
import { CREDENTIAL_KINDS, credentialName, requestHostList, secretValue } from './personas.ts'
import { personText } from '../person-text.ts'
import { HOST_MAX_CHARS, HOST_MAX_LABELS, REQUEST_MAX_HOSTS } from '../hosts.ts'

export const CredentialRequestResult = z.object({
  id: z.string().describe('the request (ncreq_…): single use, of this org and identity only'),
  identityId: z.string(),
  credentialName: z.string(),
  url: z.string().describe('the console page where a person of the org enters the secret; give it to a person, never open it yourself'),
  expiresAt: isoTime.describe('the request is refused after this (NIGHTJAR_ELICITATION_TTL_SECONDS, 10 minutes by default)'),
  status: z.enum(['pending', 'completed', 'declined', 'cancelled', 'expired']).describe(
    'pending: nobody has entered it yet (watch credential_list for the name); completed: the credential exists now; '
    + 'declined/cancelled: the user refused the URL elicitation; expired: nobody entered it in time',
  ),
  elicited: z.boolean().describe('true when the URL was sent to the user by URL elicitation (the call then waited for the answer)'),
})

export const credentialRequest = defineContract({
  name: 'credential_request',
  description: 'Ask a person to enter a credential this identity lacks (a password, or an otpauth:// URI for one-time codes), '
    + 'for credential_fill to use. The secret is entered on a console page and never reaches you. A client with URL elicitation '
    + 'is sent the page and the call returns when the credential is saved (or refused, or expired); otherwise the result carries '
    + 'the URL to hand to a person, and credential_list shows the credential once it exists',
  scopes: ['identities:read'],
  input: z.strictObject({
    identity: identityRef.describe('identity id (nident_…) or name'),
    credentialName: credentialName.describe('the name credential_fill will use; must not exist yet'),
    originAllowlist: requestHostList.describe(`hosts the credential may be filled on (at least one, at most ${REQUEST_MAX_HOSTS}; each at most ${HOST_MAX_CHARS} characters in at most ${HOST_MAX_LABELS} labels)`),
    reason: personText(z.string().min(1).max(500)).describe('why it is needed; shown to the person on the console page (no control, invisible or text-direction characters)'),
  }),
  output: CredentialRequestResult,
  rest: { method: 'POST', path: '/v1/credential-requests', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

/**
 * What a person posts on the request's console page: the kind and the secret, under
 * credential_create's own rules for them (so the page refuses what REST refuses, in the same words).
 */
export const CredentialRequestAnswer = z.strictObject({
  kind: z.enum(CREDENTIAL_KINDS),
  value: secretValue,
})

export const credentialRequestContracts = [credentialRequest] as const
