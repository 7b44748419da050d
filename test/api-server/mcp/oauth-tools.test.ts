// What an OAuth token sees on /mcp: only the tools its grant allows, and a tool error (never
// a 403 scope challenge) for a tool OAuth can never grant, since the consent page could not
// satisfy the challenge and a client would re-ask in a loop.
import t from 'tap'
import { operations } from '../../../api-server/operations/registry.ts'
import { mcpTools, toolsFor } from '../../../api-server/mcp/tools.ts'
import { ALL_SCOPES, OAUTH_DEFAULT_SCOPES } from '../../../api-server/auth/scopes.ts'
import type { AuthContext } from '../../../api-server/auth/context.ts'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { loginTokens } from '../oauth/helpers.ts'

const credential = (kind: 'key' | 'oauth', scopes: readonly string[]): AuthContext => ({
  orgId: 'norg_test', agentId: 'nagt_test', scopes: new Set(scopes), principal: { kind, principalId: 'nagt_test', credentialId: 'nkey_test', name: 'test' },
})
const names = (auth: AuthContext) => toolsFor(mcpTools(operations).map((op) => ({ op })), auth).map((tool) => tool.op.name)

t.test('[ISSUE-50] [AUTH-09] tools/list per scope: an OAuth token sees what its grant allows, a key sees every tool', async (t) => {
  const all = mcpTools(operations).map((op) => op.name)
  t.same(names(credential('key', ['identities:read'])), all, 'a key: every tool listed, whatever its scopes')
  const oauth = names(credential('oauth', OAUTH_DEFAULT_SCOPES))
  t.notOk(oauth.includes('evaluate'), 'evaluate needs sessions:evaluate, which OAuth never grants')
  t.ok(oauth.includes('session_start') && oauth.includes('navigate'), 'the tools of the default set are listed')
  for (const name of oauth) {
    const op = operations.find((o) => o.name === name)!
    t.ok(op.scopes.every((s: string) => (OAUTH_DEFAULT_SCOPES as readonly string[]).includes(s)), `${name}: within the OAuth default set`)
  }
  for (const scope of OAUTH_DEFAULT_SCOPES) {
    const without = names(credential('oauth', OAUTH_DEFAULT_SCOPES.filter((s) => s !== scope)))
    const needing = operations.filter((op) => op.mcp !== false && op.scopes.includes(scope)).map((op) => op.name)
    t.ok(needing.length > 0 && needing.every((n) => !without.includes(n)), `without ${scope}: none of its ${needing.length} tools listed`)
  }
  t.same(names(credential('oauth', ALL_SCOPES)), all, 'a grant holding every scope would list every tool')
})

t.test('[ISSUE-50] [AUTH-09] an OAuth token on /mcp: no evaluate listed, and calling it is a tool error saying why, not a 403 challenge', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const tokens = await loginTokens(s, org)
  const client = await mcpClient(t, s.url, tokens.access_token)
  const listed = (await client.listTools()).tools.map((x) => x.name)
  t.notOk(listed.includes('evaluate'))
  t.ok(listed.includes('session_start'))

  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'evaluate', arguments: { sessionId: 'nses_x', expression: '1' } } }),
  })
  t.equal(res.status, 200, 'no 403: a challenge the consent page cannot satisfy would loop')
  t.equal(res.headers.get('www-authenticate'), null)
  const body = await res.json()
  t.equal(body.result.isError, true)
  t.same(body.result.structuredContent, {
    status: 403,
    error: { code: 'forbidden', reason: 'scope_not_grantable', message: 'missing required scope: sessions:evaluate; an OAuth sign-in cannot grant it, so use an API key that carries it' },
  })

  const viaSdk = await client.callTool({ name: 'evaluate', arguments: { sessionId: 'nses_x', expression: '1' } })
  t.equal(viaSdk.isError, true, 'the SDK client gets the same tool error')
  const keyed = await mcpClient(t, s.url, org.apiKey)
  t.ok((await keyed.listTools()).tools.some((x) => x.name === 'evaluate'), 'an API key still lists evaluate')
})
