import t from 'tap'
import { z } from 'zod'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { defineOperation } from '../../../api-server/operations/types.ts'
import { operations } from '../../../api-server/operations/registry.ts'
import { mintKey } from '../../../api-server/auth/keys.ts'

// A test-only operation exercises both doors with one definition.
const echo = defineOperation({
  name: 'test_echo',
  description: 'echo for tests',
  scopes: ['sessions:drive'],
  input: z.strictObject({ word: z.string().min(1) }),
  output: z.object({ word: z.string(), agentId: z.string(), via: z.enum(['rest', 'mcp']) }),
  rest: { method: 'POST', path: '/v1/test/echo' },
  handler: async ({ auth, via }, input) => ({ word: input.word, agentId: auth.agentId, via }),
})

t.test('the MCP door', async (t) => {
  const s = await startTestServer(t, { operations: [...operations, echo] })
  const acme = await s.bootstrap()

  t.test('the MCP SDK client lists tools and calls one with a Bearer key', async (t) => {
    const client = await mcpClient(t, s.url, acme.apiKey)
    const { tools } = await client.listTools()
    const names = tools.map((x) => x.name)
    t.ok(names.includes('test_echo'))
    t.notOk(names.includes('me'), 'REST-only operations are not tools')
    const tool = tools.find((x) => x.name === 'test_echo')!
    t.equal((tool.inputSchema as any).additionalProperties, false, 'inputs are closed')
    const r = await client.callTool({ name: 'test_echo', arguments: { word: 'hi' } })
    t.same(r.structuredContent, { word: 'hi', agentId: acme.agentId, via: 'mcp' })
    const rest = await s.request('POST', '/v1/test/echo', { token: acme.apiKey, body: { word: 'hi' } })
    t.same(rest.body, { word: 'hi', agentId: acme.agentId, via: 'rest' })
  })

  t.test('tools/list answers the same to every caller, before and after calls (one shared list)', async (t) => {
    const key = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'narrow', scopes: ['identities:read'], minterScopes: new Set(['identities:read']) })
    const wide = await mcpClient(t, s.url, acme.apiKey)
    const narrow = await mcpClient(t, s.url, key.secret)
    const first = await wide.listTools()
    await wide.callTool({ name: 'test_echo', arguments: { word: 'hi' } })
    await narrow.callTool({ name: 'test_echo', arguments: { word: 'no scope' } }).catch(() => undefined)
    const again = await wide.listTools()
    const other = await narrow.listTools()
    t.same(again.tools, first.tools, 'a call does not change the list')
    t.same(other.tools, first.tools, 'another credential sees the same list')
    t.equal(first.tools.length, new Set(first.tools.map((x) => x.name)).size, 'no tool listed twice')
  })

  t.test('[RULE-30] the agent comes from the credential, never from input', async (t) => {
    const client = await mcpClient(t, s.url, acme.apiKey)
    const r = await client.callTool({ name: 'test_echo', arguments: { word: 'hi', agentId: 'nagt_someoneelse' } })
    t.equal(r.isError, true)
    t.match((r.content as any)[0].text, /unknown field: agentId/)
  })

  t.test('401 without a credential carries the resource metadata challenge', async (t) => {
    const res = await fetch(s.url + '/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
    t.equal(res.status, 401)
    t.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp"`)
  })

  t.test('[ERR-04] a tool the scopes do not allow: listed, but the call gets 403 insufficient_scope', async (t) => {
    const key = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'read', scopes: ['identities:read'], minterScopes: new Set(['identities:read']) })
    const client = await mcpClient(t, s.url, key.secret)
    const { tools } = await client.listTools()
    t.ok(tools.some((x) => x.name === 'test_echo'), 'tools are not hidden')
    const res = await fetch(s.url + '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_echo', arguments: { word: 'x' } } }),
    })
    t.equal(res.status, 403)
    t.equal(res.headers.get('www-authenticate'), `Bearer error="insufficient_scope", scope="sessions:drive", resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp"`)
    const body = await res.json()
    t.equal(body.error.message, 'missing required scope: sessions:drive')
    const rest = await s.request('POST', '/v1/test/echo', { token: key.secret, body: { word: 'x' } })
    t.equal(rest.status, 403)
    t.equal(rest.body.error.message, 'missing required scope: sessions:drive')
  })
})
