// The doors generated from the contracts: the registry implements exactly the
// contracts, in order; every MCP tool lists an outputSchema (an object at the root)
// and the contract's annotations, and answers structuredContent that the real MCP
// SDK client checks against it (callTool validates it); a result that breaks its
// output schema answers 500 through both doors (checkOutput, on in every test).
import t from 'tap'
import { z } from 'zod'
import { contracts } from '../../../contracts/operations/index.ts'
import { operations } from '../../../api-server/operations/registry.ts'
import { defineOperation } from '../../../api-server/operations/types.ts'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'

t.test('the registry implements exactly the contracts, in order', async (t) => {
  t.same(operations.map((op) => op.name), contracts.map((c) => c.name))
  for (const [i, c] of contracts.entries()) {
    const op = operations[i]
    const same = op.input === c.input && op.output === c.output && op.mcpOutput === c.mcpOutput
    t.ok(same, `${c.name}: the contract's own schemas`)
    t.same({ scopes: op.scopes, rest: op.rest, mcp: op.mcp, annotations: op.annotations, restOnlyFields: op.restOnlyFields },
      { scopes: c.scopes, rest: c.rest, mcp: c.mcp, annotations: c.annotations, restOnlyFields: c.restOnlyFields }, `${c.name}: the contract's binding`)
  }
})

// test-only operations whose results break their output schemas
const wrongType = defineOperation({
  name: 'test_wrong_type',
  description: 'answers a number where its output says string',
  scopes: [],
  input: z.strictObject({}),
  output: z.object({ word: z.string() }),
  rest: { method: 'POST', path: '/v1/test/wrong-type' },
  handler: async () => ({ word: 918273645 }) as never,
})
const extraField = defineOperation({
  name: 'test_extra_field',
  description: 'answers a field its output does not list',
  scopes: [],
  input: z.strictObject({}),
  output: z.object({ word: z.string() }),
  rest: { method: 'POST', path: '/v1/test/extra-field' },
  handler: async () => ({ word: 'fine', secretish: 'value-that-must-not-be-logged' }),
})

// a test-only operation with no content (204): its tool answers {ok: true}
const noContent = defineOperation({
  name: 'test_no_content',
  description: 'answers 204',
  scopes: [],
  input: z.strictObject({}),
  output: z.void(),
  rest: { method: 'POST', path: '/v1/test/no-content' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: async () => undefined,
})

t.test('MCP tools carry outputSchema and annotations, and their results match', async (t) => {
  const s = await startTestServer(t, { operations: [...operations, wrongType, extraField, noContent] })
  const acme = await s.bootstrap()
  const client = await mcpClient(t, s.url, acme.apiKey)
  const { tools } = await client.listTools()

  t.test('every tool: an object outputSchema and the contract annotations', async (t) => {
    const expected = contracts.filter((c) => c.mcp !== false)
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    for (const c of expected) {
      const tool = byName.get(c.name)
      if (!t.ok(tool, `${c.name} is listed`)) continue
      t.equal(tool!.outputSchema?.type, 'object', `${c.name}: outputSchema is an object`)
      t.notOk('$schema' in (tool!.outputSchema ?? {}), `${c.name}: no $schema (MCP's default dialect)`)
      t.ok(c.annotations, `${c.name}: the contract has annotations`)
      t.same(tool!.annotations, c.annotations, `${c.name}: annotations from the contract`)
    }
    t.same(tools.filter((x) => !x.name.startsWith('test_')).map((x) => x.name), expected.map((c) => c.name), 'the tools are the MCP contracts, in order')
    const success = (name: string) => (byName.get(name)!.outputSchema!.anyOf as Array<Record<string, unknown>>).slice(0, -1)
    t.same(success('test_no_content'), [{ type: 'object', properties: { ok: { type: 'boolean', const: true } }, required: ['ok'], additionalProperties: false }], 'a 204 operation answers {ok: true}')
    t.same(success('credential_list')[0].required, ['result'], 'an array output is wrapped as {result}')
    t.equal(success('act').length, 2, 'a union of objects: one branch each')
    t.same(success('screenshot')[0].required, ['mimeType', 'bytes'], 'an mcpOutput replaces the output')
    for (const tool of tools) {
      const last = (tool.outputSchema!.anyOf as Array<Record<string, unknown>>).at(-1)!
      t.same(last.required, ['status', 'error'], `${tool.name}: a tool error is the last branch (SDK clients check errors too)`)
    }
  })

  t.test('calls through the real server: callTool checks structuredContent against outputSchema', async (t) => {
    // authoring is REST: an identity with a credential and a grant to this agent
    const identity = (await s.request('POST', '/v1/identities', { token: acme.apiKey, body: { name: 'tools-persona' } })).body as { id: string; name: string }
    t.equal((await s.request('POST', `/v1/identities/${identity.id}/credentials`, { token: acme.apiKey, body: { name: 'login', value: 'hunter2-not-shown', originAllowlist: ['example.com'] } })).status, 201)
    const grant = await s.request('POST', `/v1/identities/${identity.id}/grants`, {
      token: acme.apiKey,
      body: { principalAgentId: acme.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(), allowedOrigins: [], propagation: 'none', maxSessionDurationSecs: null, reason: 'tools test' },
    })
    t.equal(grant.status, 201)

    const listed = await client.callTool({ name: 'credential_list', arguments: { identityId: identity.id } })
    t.notOk(listed.isError, 'credential_list')
    const creds = (listed.structuredContent as { result: Array<{ name: string }> }).result
    t.same(creds.map((c) => c.name), ['login'], 'credential_list as {result}')
    t.same(JSON.parse((listed.content as Array<{ text: string }>)[0].text), creds, 'the text content is the same JSON')
    t.notMatch(JSON.stringify(listed), 'hunter2-not-shown', 'the value never comes back')
    const assumable = await client.callTool({ name: 'identity_list_assumable', arguments: {} })
    t.notOk(assumable.isError, 'identity_list_assumable')
    t.ok((assumable.structuredContent as { result: Array<{ id: string }> }).result.some((x) => x.id === identity.id), 'the granted identity is assumable')

    const empty = await client.callTool({ name: 'test_no_content', arguments: {} })
    t.same(empty.structuredContent, { ok: true }, 'a 204 operation: {ok: true}')

    const missing = await client.callTool({ name: 'session_get', arguments: { sessionId: 'nsess_0000000000000000000000' } })
    t.equal(missing.isError, true, 'tool errors keep their shape')
    t.equal((missing.structuredContent as { status: number }).status, 404)
  })

  t.test('a result that breaks its output schema: 500 internal through both doors, logged without values', async (t) => {
    for (const [op, path, code] of [['test_wrong_type', 'wrong-type', 'invalid_type'], ['test_extra_field', 'extra-field', 'unrecognized_keys']] as const) {
      const rest = await s.request('POST', `/v1/test/${path}`, { token: acme.apiKey, body: {} })
      t.equal(rest.status, 500, `${op}: REST`)
      t.same(rest.body, { error: { code: 'internal', message: 'internal error' } })
      const mcp = await client.callTool({ name: op, arguments: {} })
      t.equal(mcp.isError, true, `${op}: MCP`)
      t.same(mcp.structuredContent, { status: 500, error: { code: 'internal', message: 'internal error' } })
      const lines = s.logs().split('\n').filter((l) => l.includes('output schema mismatch') && l.includes(op))
      t.equal(lines.length, 2, `${op}: logged once per door`)
      t.match(lines[0], code)
      t.match(lines[0], op === 'test_wrong_type' ? '"path":"word"' : '"path":"secretish"')
    }
    t.notMatch(s.logs(), '918273645', 'no value is logged')
    t.notMatch(s.logs(), 'value-that-must-not-be-logged', 'no value is logged')
  })
})
