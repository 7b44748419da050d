// What a sealed-fill test sets up on a running service: an identity holding one credential,
// granted to an agent; and an MCP tool caller that keeps every reply for the canary search.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

/** identity + credential (allowlisted to `origin`) + an `assume` grant to `agentId`, for an hour; returns the identity id */
export async function grantedPersona(api: Api, opts: { agentId: string; value: string; origin: string; reason: string; name?: string }): Promise<string> {
  const ident = await api('POST', '/v1/identities', { name: opts.name ?? 'shopper' })
  if (ident.status !== 201) throw new Error(`identity: ${ident.status}`)
  const cred = await api('POST', `/v1/identities/${ident.body.id}/credentials`, { name: 'login', value: opts.value, originAllowlist: [opts.origin] })
  if (cred.status !== 201) throw new Error(`credential: ${cred.status}`) // never the body: it could echo the value
  const grant = await api('POST', `/v1/identities/${ident.body.id}/grants`, {
    principalAgentId: opts.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: opts.reason,
  })
  if (grant.status !== 201) throw new Error(`grant: ${grant.status}`)
  return ident.body.id as string
}

/** calls a tool, records its whole reply in `replies`, and throws on a tool error */
export function recordingCaller(mcp: Client, replies: string[]) {
  return async (name: string, args: Record<string, unknown>) => {
    const r = await mcp.callTool({ name, arguments: args })
    replies.push(JSON.stringify(r))
    if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
    return r
  }
}
