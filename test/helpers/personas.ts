// Sets up a persona over the real REST API: identity, one credential, a grant.
import type { TestServer } from './server.ts'

export interface PersonaSetup {
  identityId: string
  credentialId: string
  grantId: string
}

export async function createPersona(
  s: TestServer,
  token: string,
  opts: {
    name: string
    credentialName?: string
    value: string
    originAllowlist: string[]
    agentId: string
    grant?: { role?: 'assume' | 'manage'; allowedOrigins?: string[]; propagation?: 'none' | 'same_conversation' | 'descendants'; maxSessionDurationSecs?: number | null }
  },
): Promise<PersonaSetup> {
  const ident = await s.request('POST', '/v1/identities', { token, body: { name: opts.name } })
  if (ident.status !== 201) throw new Error(`identity create: ${ident.status} ${ident.text}`)
  const cred = await s.request('POST', `/v1/identities/${ident.body.id}/credentials`, {
    token,
    body: { name: opts.credentialName ?? 'login', value: opts.value, originAllowlist: opts.originAllowlist },
  })
  if (cred.status !== 201) throw new Error(`credential create: ${cred.status} ${cred.body?.error?.message}`)
  const grant = await s.request('POST', `/v1/identities/${ident.body.id}/grants`, {
    token,
    body: {
      principalAgentId: opts.agentId,
      role: opts.grant?.role ?? 'assume',
      expiresAt: new Date(Date.now() + 3600_000).toISOString(),
      allowedOrigins: opts.grant?.allowedOrigins ?? [],
      propagation: opts.grant?.propagation ?? 'same_conversation',
      maxSessionDurationSecs: opts.grant?.maxSessionDurationSecs ?? null,
      reason: 'test',
    },
  })
  if (grant.status !== 201) throw new Error(`grant create: ${grant.status} ${grant.text}`)
  return { identityId: ident.body.id, credentialId: cred.body.id, grantId: grant.body.id }
}
