// One selector rule at every door: each tool that takes a selector, over REST and over the
// real MCP SDK client, answers a selector Playwright cannot use with 400 invalid_selector and
// the parser's words — at once, never after the element wait, never with an engine's
// TypeError — and credential_fill gives the same answer as the plain tools. Real Chromium,
// the real API server, the "public web" namespace.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { createPersona } from '../../helpers/personas.ts'

// what a black-box probe sent, with the parser's words each must come back with
const BAD: Array<[string, RegExp]> = [
  ['text=/a/zz', /Invalid flags supplied to RegExp constructor 'zz'/],
  ['_react=X[', /the _react engine is not available/],
  ['_vue=X[', /the _vue engine is not available/],
  ['internal:control=enter-frame', /Selector cannot start with entering frame/],
  ['input >> nth=abc', /nth=abc: the index must be an integer/],
]

/** well under the 10 s an element is waited for */
const AT_ONCE_MS = 5000

type Args = Record<string, unknown>
/** Every tool that takes a selector, and its input with `sel` in the selector's place. */
const TOOLS: Array<{ tool: string; rest: string; args: (sel: string) => Args }> = [
  { tool: 'act', rest: 'act', args: (selector) => ({ verb: 'click', selector }) },
  { tool: 'act', rest: 'act', args: (selector) => ({ verb: 'type', selector, text: 'x' }) },
  { tool: 'act', rest: 'act', args: (selector) => ({ verb: 'press', selector, key: 'Enter' }) },
  { tool: 'act', rest: 'act', args: (selector) => ({ verb: 'scroll', selector }) },
  { tool: 'screenshot', rest: 'screenshot', args: (selector) => ({ selector }) },
  { tool: 'wait_for', rest: 'wait-for', args: (selector) => ({ selector }) },
  { tool: 'select_option', rest: 'select-option', args: (selector) => ({ selector, values: ['a'] }) },
  { tool: 'hover', rest: 'hover', args: (selector) => ({ selector }) },
  { tool: 'drag', rest: 'drag', args: (selector) => ({ from: selector, to: '#pw' }) },
  { tool: 'drag', rest: 'drag', args: (selector) => ({ from: '#pw', to: selector }) },
  { tool: 'fill_form', rest: 'fill-form', args: (selector) => ({ fields: [{ selector: '#user', value: 'x' }, { selector, value: 'x' }] }) },
  { tool: 'file_upload', rest: 'file-upload', args: (selector) => ({ selector, files: ['FILE'] }) },
  { tool: 'credential_fill', rest: 'fill-credential', args: (selector) => ({ credentialName: 'login', selector }) },
]

const label = (tool: string, args: Args) => (tool === 'act' ? `act ${String(args.verb)}` : tool)

t.test('invalid selectors: one answer on every tool and door', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const persona = await createPersona(s, acme.apiKey, { name: 'probe', value: 'not-a-real-secret-1', originAllowlist: ['login.example.com'], agentId: acme.agentId })
  const started = await rest('POST', '/v1/sessions', { identity: persona.identityId })
  t.equal(started.status, 201)
  const id = started.body.id as string
  t.teardown(() => rest('DELETE', `/v1/sessions/${id}`))
  t.equal((await rest('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/login.html' })).status, 200)
  const put = await rest('POST', `/v1/sessions/${id}/files`, { name: 'a.txt', contentBase64: Buffer.from('a').toString('base64') })
  t.equal(put.status, 201, 'a file to upload, so only the selector can be wrong')
  const fileId = put.body.id as string
  const withFile = (args: Args): Args => (args.files ? { ...args, files: [fileId] } : args)
  const mcp = await mcpClient(t, s.url, acme.apiKey)

  t.test('the table covers every tool that takes a selector', async (t) => {
    const { tools } = await mcp.listTools()
    const taking = tools.filter((x) => /"(selector|from|to)"/.test(JSON.stringify(x.inputSchema.properties))).map((x) => x.name)
    t.same([...new Set(TOOLS.map((x) => x.tool))].sort(), taking.sort())
  })

  t.test('REST: 400 invalid_selector with the parser’s words, at once', async (t) => {
    for (const { tool, rest: path, args } of TOOLS) {
      for (const [selector, words] of BAD) {
        const input = withFile(args(selector))
        const began = performance.now()
        const r = await rest('POST', `/v1/sessions/${id}/${path}`, input)
        const took = performance.now() - began
        const what = `${label(tool, input)} ${selector}`
        t.same([r.status, r.body.error?.reason], [400, 'invalid_selector'], `${what}: 400 invalid_selector`)
        t.match(r.body.error?.message, words, `${what}: the parser’s words`)
        t.notMatch(r.text, /TypeError/, `${what}: no engine internals`)
        t.ok(took < AT_ONCE_MS, `${what}: answered in ${Math.round(took)} ms`)
      }
    }
  })

  t.test('MCP: the same answer through the real SDK client', async (t) => {
    for (const { tool, args } of TOOLS) {
      for (const [selector, words] of BAD) {
        const input = withFile(args(selector))
        const began = performance.now()
        const r = await mcp.callTool({ name: tool, arguments: { sessionId: id, ...input } })
        const took = performance.now() - began
        const what = `${label(tool, input)} ${selector}`
        const text = (r.content as Array<{ text: string }>)[0]?.text ?? ''
        t.equal(r.isError, true, `${what}: an error`)
        const body = JSON.parse(text) as { status: number; error: { reason?: string; message: string } }
        t.same([body.status, body.error.reason], [400, 'invalid_selector'], `${what}: 400 invalid_selector`)
        t.match(body.error.message, words, `${what}: the parser’s words`)
        t.notMatch(text, /TypeError/, `${what}: no engine internals`)
        t.ok(took < AT_ONCE_MS, `${what}: answered in ${Math.round(took)} ms`)
      }
    }
  })

  t.test('a selector that is valid but matches nothing is still waited for, then 504', async (t) => {
    const r = await rest('POST', `/v1/sessions/${id}/wait-for`, { selector: 'input >> nth=40', timeoutMs: 1000 })
    t.same([r.status, r.body.error?.reason], [504, 'timeout'])
    const click = await rest('POST', `/v1/sessions/${id}/act`, { verb: 'type', selector: 'input >> nth=0', text: 'still works' })
    t.equal(click.status, 200, 'a good selector with nth acts')
  })
})
