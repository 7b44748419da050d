// The MCP transport's own rules (api-server/mcp/server.ts, origin.ts): bad params answer
// -32602 with a readable message (params by position too), a batch has a cap and may not
// be empty, and Host/Origin are checked
// against DNS rebinding. Raw JSON-RPC over fetch/http, so the exact wire answer is seen.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { z } from 'zod'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { defineOperation } from '../../../api-server/operations/types.ts'
import { operations } from '../../../api-server/operations/registry.ts'
import { MAX_BATCH } from '../../../api-server/mcp/server.ts'

let calls = 0
const counter = defineOperation({
  name: 'test_count',
  description: 'counts its calls, for tests',
  scopes: ['sessions:drive'],
  input: z.strictObject({ word: z.string().min(1) }),
  output: z.object({ word: z.string() }),
  rest: { method: 'POST', path: '/v1/test/count' },
  handler: async (_ctx, input) => {
    calls++
    return { word: input.word }
  },
})

const ACCEPT = 'application/json, text/event-stream'

async function rpc(s: TestServer, token: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(s.url + '/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined }
}

/** node:http, because fetch will not send a Host header of the caller's choosing. */
function rawPost(url: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: 'POST', path, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers } }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })
const call = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

t.test('the MCP transport', async (t) => {
  const s = await startTestServer(t, { operations: [...operations, counter] })
  const acme = await s.bootstrap()
  const key = acme.apiKey

  t.test('bad params answer -32602 with a readable, value-free message (not -32603 and a zod dump)', async (t) => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['tool name not a string', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5, arguments: {} } }, /^invalid params: name: must be a string$/],
      ['arguments not an object', call(2, 'test_count', 'word=hi'), /^invalid params: arguments: must be an object$/],
      ['arguments an array', call(3, 'test_count', ['hi']), /^invalid params: arguments: must be an object$/],
      ['no params at all', { jsonrpc: '2.0', id: 4, method: 'tools/call' }, /^invalid params: params: required$/],
      ['tools/list cursor not a string', { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { cursor: 5 } }, /^invalid params: cursor: must be a string$/],
      ['initialize without clientInfo', { jsonrpc: '2.0', id: 6, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, /^invalid params: clientInfo: required$/],
    ]
    for (const [what, body, message] of cases) {
      const r = await rpc(s, key, body)
      t.equal(r.status, 200, `${what}: answered in JSON-RPC`)
      t.equal(r.body.error?.code, -32602, `${what}: -32602`)
      t.match(r.body.error?.message, message, `${what}: ${r.body.error?.message}`)
      t.notMatch(r.text, /"code":"invalid_type"|\[\\n|"expected":/, `${what}: no zod issue dump`)
      t.same(r.body.error?.data, { status: 400, error: { code: 'bad_request', message: r.body.error?.message } }, `${what}: data carries the service error body`)
    }
    t.equal(calls, 0, 'no tool ran')
  })

  t.test('an unknown tool is a protocol error: -32602', async (t) => {
    const r = await rpc(s, key, call(7, 'no_such_tool', {}))
    t.equal(r.body.error.code, -32602)
    t.equal(r.body.error.message, 'unknown tool')
  })

  t.test('a tool input its schema refuses is a tool error the model can read (isError, status 400; MCP 2025-11-25 SEP-1303)', async (t) => {
    const r = await rpc(s, key, call(8, 'test_count', { word: '' }))
    t.equal(r.body.result.isError, true)
    t.equal(r.body.result.structuredContent.status, 400)
    t.match(r.body.result.structuredContent.error.message, /^invalid request: word: /)
    const client = await mcpClient(t, s.url, key)
    const viaSdk = await client.callTool({ name: 'test_count', arguments: { word: 'hi', extra: 1 } })
    t.equal(viaSdk.isError, true)
    t.match((viaSdk.content as any)[0].text, /unknown field: extra/)
    t.equal(calls, 0)
  })

  t.test('NUL or a lone surrogate anywhere in params → -32602 naming the field, before any tool runs', async (t) => {
    const cases: Array<[unknown, string]> = [
      [{ word: 'a\u0000b' }, 'invalid params: arguments.word: contains a NUL character'],
      [{ word: 'a\ud800b' }, 'invalid params: arguments.word: contains an unpaired UTF-16 surrogate'],
      [{ word: 'a\udc00' }, 'invalid params: arguments.word: contains an unpaired UTF-16 surrogate'],
      [{ ['wo\u0000rd']: 'x' }, 'invalid params: arguments: a field name contains a NUL character'],
      [{ word: 'ok', list: ['fine', { deep: '\u0000' }] }, 'invalid params: arguments.list.1.deep: contains a NUL character'],
    ]
    for (const [args, message] of cases) {
      const r = await rpc(s, key, call(9, 'test_count', args))
      t.equal(r.body.error?.code, -32602)
      t.equal(r.body.error?.message, message)
      t.notOk(r.text.includes('\\u0000') || r.text.includes('\\ud800'), 'the value is not echoed')
    }
    const wellFormed = await rpc(s, key, call(10, 'test_count', { word: 'emoji 😀 and é' }))
    t.equal(wellFormed.body.result?.structuredContent?.word, 'emoji 😀 and é', 'a proper surrogate pair is fine')
    t.equal(calls, 1, 'only the well-formed call ran')
    calls = 0
  })

  t.test(`a batch over ${MAX_BATCH} messages is refused whole with one -32600; none runs`, async (t) => {
    t.equal(MAX_BATCH, 20)
    const batch = (n: number) => Array.from({ length: n }, (_, i) => call(100 + i, 'test_count', { word: `w${i}` }))
    const big = await rpc(s, key, batch(100))
    t.equal(big.status, 400)
    t.same(big.body, { jsonrpc: '2.0', id: null, error: { code: -32600, message: `batch too large: at most ${MAX_BATCH} messages in one request` } })
    const over = await rpc(s, key, batch(MAX_BATCH + 1))
    t.equal(over.status, 400)
    t.equal(over.body.error.code, -32600)
    t.equal(calls, 0, 'no call of a refused batch ran')
    const ok = await rpc(s, key, batch(MAX_BATCH))
    t.equal(ok.status, 200)
    t.equal(ok.body.length, MAX_BATCH, `a batch of ${MAX_BATCH} is served`)
    t.equal(calls, MAX_BATCH)
    calls = 0
    const mixed = await rpc(s, key, [call(1, 'test_count', { word: 'fine' }), call(2, 'test_count', { word: 'bad\u0000' })])
    const byId = new Map<number, any>(mixed.body.map((m: any) => [m.id, m]))
    t.equal(byId.get(1).result.structuredContent.word, 'fine')
    t.equal(byId.get(2).error.code, -32602, 'in a batch, only the bad message is refused')
    t.equal(calls, 1)
    calls = 0
  })

  t.test('JSON-RPC edges: an empty batch is -32600, params by position are -32602', async (t) => {
    const empty = await rpc(s, key, [])
    t.equal(empty.status, 400)
    t.same(empty.body, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request: an empty batch' } }, 'JSON-RPC 2.0 §6: one error, id null')
    const positional = await rpc(s, key, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: ['test_count', { word: 'x' }] })
    t.equal(positional.status, 400)
    t.equal(positional.body.id, 7, 'answered under its own id')
    t.equal(positional.body.error.code, -32602, 'invalid params, not a parse error')
    t.match(positional.body.error.message, /^invalid params: params: must be an object/)
    const list = await rpc(s, key, { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: [] })
    t.equal(list.body.error.code, -32602, 'for every method')
    const note = await rpc(s, key, { jsonrpc: '2.0', method: 'notifications/initialized', params: [] })
    t.equal(note.status, 202, 'a notification gets no answer, as always')
    t.equal(note.text, '')
    const mixed = await rpc(s, key, [call(1, 'test_count', { word: 'fine' }), { jsonrpc: '2.0', id: 2, method: 'tools/call', params: ['test_count'] }])
    t.equal(mixed.status, 200)
    const byId = new Map<number, any>(mixed.body.map((m: any) => [m.id, m]))
    t.equal(byId.get(1).result.structuredContent.word, 'fine', 'in a batch, the good message runs')
    t.equal(byId.get(2).error.code, -32602, 'and only the positional one is refused')
    const allBad = await rpc(s, key, [{ jsonrpc: '2.0', id: 3, method: 'tools/list', params: [1] }])
    t.equal(allBad.status, 200)
    t.same(allBad.body.map((m: any) => [m.id, m.error.code]), [[3, -32602]])
    t.equal(calls, 1, 'only the well-formed call ran')
    calls = 0
  })

  t.test('DNS rebinding (loopback deployment): evil Host/Origin refused with 403 before auth; loopback served', async (t) => {
    const auth = { authorization: `Bearer ${key}` }
    const port = new URL(s.url).port
    const evil = await rawPost(s.url, '/mcp', { ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' }, INIT)
    t.equal(evil.status, 403)
    t.equal(evil.text, '{"error":{"code":"forbidden","message":"host not allowed","reason":"host_not_allowed"}}')
    const evilHostOnly = await rawPost(s.url, '/mcp', { ...auth, host: `evil.example.com:${port}` }, INIT)
    t.equal(evilHostOnly.status, 403, 'a foreign DNS name in Host, no Origin')
    const evilOrigin = await rawPost(s.url, '/mcp', { ...auth, host: `127.0.0.1:${port}`, origin: 'http://evil.example.com' }, INIT)
    t.equal(evilOrigin.status, 403)
    t.equal(evilOrigin.text, '{"error":{"code":"forbidden","message":"origin not allowed","reason":"origin_not_allowed"}}')
    const nullOrigin = await rawPost(s.url, '/mcp', { ...auth, host: `127.0.0.1:${port}`, origin: 'null' }, INIT)
    t.equal(nullOrigin.status, 403, 'Origin: null (sandboxed frame, file:) refused')
    const noAuth = await rawPost(s.url, '/mcp', { host: 'evil.example.com', origin: 'http://evil.example.com' }, INIT)
    t.equal(noAuth.status, 403, 'refused before authentication: no 401 to probe with')
    for (const [host, origin] of [
      [`localhost:${port}`, 'http://localhost:6274'],
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
      [`[::1]:${port}`, 'http://[::1]:3000'],
      [`localhost:${port}`, undefined],
    ] as const) {
      const r = await rawPost(s.url, '/mcp', { ...auth, host, ...(origin ? { origin } : {}) }, INIT)
      t.equal(r.status, 200, `Host ${host}, Origin ${origin ?? '(none)'} served`)
    }
  })

  t.test('DNS rebinding (deployment with a public base URL): its own origin served, others refused', async (t) => {
    const pub = await startTestServer(t, { env: { NIGHTJAR_BASE_URL: 'https://nightjar.example.com', NIGHTJAR_MCP_ALLOWED_ORIGINS: 'https://agent-ui.example.org' } })
    const org = await pub.bootstrap()
    const auth = { authorization: `Bearer ${org.apiKey}` }
    const served = async (host: string, origin?: string) => (await rawPost(pub.url, '/mcp', { ...auth, host, ...(origin ? { origin } : {}) }, INIT)).status
    t.equal(await served('nightjar.example.com', 'https://nightjar.example.com'), 200, 'the configured base URL origin')
    t.equal(await served('nightjar.example.com'), 200, 'its host, no Origin (a non-browser client)')
    t.equal(await served('nightjar.example.com', 'https://agent-ui.example.org'), 200, 'an origin in NIGHTJAR_MCP_ALLOWED_ORIGINS')
    t.equal(await served('agent-ui.example.org'), 200, "that origin's host")
    t.equal(await served('10.96.0.12:8080'), 200, 'an IP literal Host (a Service cluster IP): no DNS name to rebind')
    t.equal(await served('nightjar.example.com', 'http://localhost:6274'), 403, 'loopback origins only on a loopback deployment')
    t.equal(await served('nightjar.example.com', 'http://nightjar.example.com'), 403, 'scheme is part of the origin')
    t.equal(await served('evil.example.com', 'https://nightjar.example.com'), 403, 'a foreign DNS name in Host')
    t.equal(await served('nightjar.example.com.evil.example.com'), 403)
  })

  t.test('the CORS preflight stays answered for any origin (the POST is what is checked)', async (t) => {
    const pre = await fetch(s.url + '/mcp', { method: 'OPTIONS', headers: { origin: 'http://evil.example.com', 'access-control-request-method': 'POST' } })
    t.equal(pre.status, 204)
  })
})
