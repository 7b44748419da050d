// The network request log and evaluate, through REST and the real MCP SDK
// client, against real Chromium and the "public web" namespace. The log keeps method,
// URL without query, status, type and timing — a marker planted in a page query, a
// fetch query, a fragment, a cookie, a POST body, an Authorization header and a response
// body must appear in no reply and no journal row. evaluate needs sessions:evaluate and
// is refused on a session with a bound identity before anything reaches the page.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { createPersona } from '../../helpers/personas.ts'
import { waitFor } from '../../helpers/wait.ts'
import { inspectContracts } from '../../../contracts/operations/drive-inspect.ts'
import { shown } from '../../helpers/perceived.ts'

t.test('network log and evaluate', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const page = (p: string) => `http://example.com/${p}`
  const rest = async (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await rest(method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.body
  }

  t.test('the two tools are listed with their annotations; evaluate names its own scope', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const tools = (await mcp.listTools()).tools
    for (const c of inspectContracts) {
      const tool = tools.find((x) => x.name === c.name)
      t.same(tool?.annotations, c.annotations, `${c.name}: annotations`)
      t.ok(tool?.outputSchema, `${c.name}: an output schema`)
    }
    t.match(tools.find((x) => x.name === 'evaluate')?.description, /\(scope: sessions:evaluate\)$/)
    t.match(tools.find((x) => x.name === 'network_requests')?.description, /\(scope: sessions:drive\)$/)
  })

  t.test('[REST] [MCP] the network log lists the page’s requests with status and type, and nothing of a query, header or body', async (t) => {
    // only ever compared with includes(), never printed
    const MARKER = `nlm${randomBytes(8).toString('hex')}`
    const id = (await ok('POST', '/v1/sessions', {})).id as string
    const nav = await ok('POST', `/v1/sessions/${id}/navigate`, { url: page(`netlog-page.html?m=${MARKER}#h-${MARKER}`) })
    t.equal(nav.status, 200)
    await ok('POST', `/v1/sessions/${id}/wait-for`, { text: 'fetched 200 200 404' })
    const ends = ['netlog-page.html', 'netlog-pixel.png', 'netlog-data.html', 'echo', 'netlog-missing.html']
    const done = (items: any[]) => ends.every((p) => items.some((r) => r.url === page(p) && r.durationMs !== null))
    const log = await waitFor(async () => {
      const r = await rest('GET', `/v1/sessions/${id}/network`)
      return r.status === 200 && done(r.body.requests) ? r : null
    }, { what: 'every request finished in the log' })
    const find = (p: string) => log.body.requests.find((r: any) => r.url === page(p))
    t.match(find('netlog-page.html'), { method: 'GET', status: 200, resourceType: 'document', failure: null })
    t.match(find('netlog-pixel.png'), { method: 'GET', status: 404, resourceType: 'image' })
    t.match(find('netlog-data.html'), { method: 'GET', status: 200, resourceType: 'fetch' })
    t.match(find('echo'), { method: 'POST', status: 200, resourceType: 'fetch' })
    t.match(find('netlog-missing.html'), { method: 'GET', status: 404, resourceType: 'fetch' })
    for (const r of log.body.requests) {
      t.same(Object.keys(r).sort(), ['durationMs', 'failure', 'method', 'resourceType', 'startedAt', 'status', 'url'], `${r.url}: these fields and no other`)
      t.ok(r.startedAt > Date.now() - 600_000 && r.durationMs >= 0, `${r.url}: timing`)
      t.notOk(/[?#]/.test(r.url), `${r.url}: no query or fragment`)
    }
    const order = ['netlog-page.html', 'netlog-data.html', 'echo', 'netlog-missing.html'].map((p) => log.body.requests.indexOf(find(p)))
    t.same(order, [...order].sort((a, b) => a - b), 'oldest first')
    t.equal(log.body.total, log.body.requests.length)
    t.equal(log.body.dropped, 0)

    const fetches = await ok('GET', `/v1/sessions/${id}/network?resourceType=fetch`)
    t.same(fetches.requests.map((r: any) => r.url), ['netlog-data.html', 'echo', 'netlog-missing.html'].map(page), 'filter: resource type')
    const posts = await ok('GET', `/v1/sessions/${id}/network?method=post`)
    t.same(posts.requests.map((r: any) => r.url), [page('echo')], 'filter: method, any case')
    const missing = await ok('GET', `/v1/sessions/${id}/network?urlContains=missing`)
    t.same(missing.requests.map((r: any) => r.status), [404], 'filter: part of the url')
    const last = await ok('GET', `/v1/sessions/${id}/network?resourceType=fetch&limit=2`)
    t.same(last.requests.map((r: any) => r.url), [page('echo'), page('netlog-missing.html')], 'limit: the newest that match')
    t.equal((await rest('GET', `/v1/sessions/${id}/network?limit=501`)).status, 400, 'limit is bounded')

    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const viaMcp = await mcp.callTool({ name: 'network_requests', arguments: { sessionId: id } })
    t.notOk(viaMcp.isError)
    t.same((viaMcp.structuredContent as any).requests.map((r: any) => r.url), log.body.requests.map((r: any) => r.url), 'MCP lists the same requests')

    const journal = await rest('GET', `/v1/sessions/${id}/journal`)
    const everything = [log.text, JSON.stringify([fetches, posts, missing, last]), JSON.stringify(viaMcp), journal.text].join('\n')
    t.notOk(everything.includes(MARKER), 'the marker (query, fragment, cookie, body, headers, response) is in no reply and no journal row')
    t.notOk(/authorization|cookie|x-marker|bearer|content-type/i.test(everything), 'no header name or value anywhere')
    t.notOk(/secret=|token=/.test(everything), 'no body or query text')
    // the marker did travel: the server saw it in the queries the log cut off
    t.ok((await web.requests()).some((r) => r.url.includes(MARKER)), 'the page did send the marker')
    await rest('DELETE', `/v1/sessions/${id}`)
  })

  t.test('the log is a ring: it keeps the newest 500 and counts what it dropped', async (t) => {
    const id = (await ok('POST', '/v1/sessions', {})).id as string
    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('netlog-data.html') })
    const sent = await ok('POST', `/v1/sessions/${id}/evaluate`, {
      // six at a time, as many as Chromium opens to one host
      expression: 'let n = 0; for (let b = 0; b < 520; b += 6) n += (await Promise.all(Array.from({ length: Math.min(6, 520 - b) }, (_, i) => fetch("/netlog-data.html?i=" + (b + i)).then((r) => r.text())))).length; return n',
      timeoutMs: 60_000,
    })
    t.same(sent, { value: 520, type: 'number' })
    const log = await waitFor(async () => {
      const r = await ok('GET', `/v1/sessions/${id}/network`)
      return r.total >= 521 && r.requests.every((x: any) => x.durationMs !== null) ? r : null
    }, { what: 'the 520 fetches in the log' })
    t.equal(log.requests.length, 500, 'the newest 500')
    t.equal(log.dropped, log.total - 500)
    t.ok(log.dropped >= 21, `the document and the oldest fetches were dropped (${log.dropped})`)
    t.ok(log.requests.every((x: any) => x.url === page('netlog-data.html') && x.status === 200), 'all the same url, without its ?i=')
    await rest('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[REST] [MCP] evaluate returns JSON values; errors are typed', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const id = (await ok('POST', '/v1/sessions', {})).id as string
    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('netlog-data.html') })
    const ev = (expression: string, extra: Record<string, unknown> = {}) => rest('POST', `/v1/sessions/${id}/evaluate`, { expression, ...extra })

    t.same((await ev('document.title')).body, { value: 'Netlog data', type: 'string' }, 'an expression')
    t.same((await ev('1 + 2')).body, { value: 3, type: 'number' })
    t.same((await ev('const xs = [1, 2, 3]; return xs.map((x) => x * 2)')).body, { value: [2, 4, 6], type: 'array' }, 'a function body')
    t.same((await ev('({ a: 1, b: [true, null], c: { d: "e" } })')).body, { value: { a: 1, b: [true, null], c: { d: 'e' } }, type: 'object' })
    t.same((await ev('await new Promise((r) => setTimeout(() => r("later"), 20))')).body, { value: 'later', type: 'string' }, 'a promise is awaited')
    t.same((await ev('undefined')).body, { value: null, type: 'undefined' })
    t.same((await ev('window.value = "the page’s own"; window.json = 7; return [value, json]')).body, { value: ['the page’s own', 7], type: 'array' }, 'the page’s globals, whatever their names')
    t.same((await ev('document.querySelector("p").textContent = "changed"; return null')).body, { value: null, type: 'null' })
    t.match(shown(await ok('POST', `/v1/sessions/${id}/perceive`, {})), /changed/, 'the code ran in the page')
    const viaMcp = await mcp.callTool({ name: 'evaluate', arguments: { sessionId: id, expression: '[location.pathname, 2 ** 10]' } })
    t.notOk(viaMcp.isError)
    t.same(viaMcp.structuredContent, { value: ['/netlog-data.html', 1024], type: 'array' }, 'over MCP')

    const threw = await ev('throw new TypeError("bad thing")')
    t.equal(threw.status, 400)
    t.same(threw.body.error, { code: 'bad_request', reason: 'evaluate_threw', message: 'the expression threw TypeError: bad thing' })
    t.equal((await ev('Promise.reject(new Error("no"))')).body.error.reason, 'evaluate_threw', 'a rejected promise')
    t.equal((await ev('missingName + 1')).body.error.message, 'the expression threw ReferenceError: missingName is not defined')
    const node = await ev('document.body')
    t.same(node.body.error, { code: 'bad_request', reason: 'not_serializable', message: 'the result is not JSON-serialisable (a DOM node)' })
    t.equal((await ev('[...document.querySelectorAll("p")]')).body.error.message, 'the result is not JSON-serialisable (a DOM node)', 'nested too')
    t.equal((await ev('const a = {}; a.self = a; return a')).body.error.message, 'the result is not JSON-serialisable (a circular structure)')
    t.equal((await ev('() => 1')).body.error.message, 'the result is not JSON-serialisable (a function)')
    t.equal((await ev('10n')).body.error.message, 'the result is not JSON-serialisable (a bigint)')
    t.equal((await ev('window')).body.error.message, 'the result is not JSON-serialisable (a window)')
    const big = await ev('"x".repeat(600 * 1024)')
    t.equal(big.status, 400)
    t.equal(big.body.error.reason, 'result_too_large')
    const syntax = await ev('return return')
    t.same(syntax.body.error, { code: 'bad_request', reason: 'evaluate_syntax', message: 'expression is neither a JavaScript expression nor a function body' })
    const mcpError = await mcp.callTool({ name: 'evaluate', arguments: { sessionId: id, expression: 'document.body' } })
    t.equal(mcpError.isError, true)
    t.equal((mcpError.structuredContent as any).error.reason, 'not_serializable', 'a typed tool error over MCP')

    const hung = await ev('while (true) {}', { timeoutMs: 300 })
    t.equal(hung.status, 504, 'a script that never ends times out')
    t.equal(hung.body.error.message, 'evaluate timed out')
    t.same((await ev('1 + 1')).body, { value: 2, type: 'number' }, 'and was stopped: the page answers again')
    const pending = await ev('new Promise(() => {})', { timeoutMs: 200 })
    t.equal(pending.status, 504, 'a promise that never settles times out')
    t.same((await ev('"still here"')).body, { value: 'still here', type: 'string' })

    const journal = await ok('GET', `/v1/sessions/${id}/journal?limit=500`)
    const rows = journal.items.filter((e: any) => e.op === 'evaluate')
    t.ok(rows.length >= 20, 'every evaluate is journalled')
    t.same(rows[0].detail, { expressionLength: 'document.title'.length }, 'the code’s length only')
    t.notOk(JSON.stringify(journal).includes('querySelector'), 'never the code')
    await rest('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[ERR-04] evaluate without sessions:evaluate: 403 missing scope, on both doors', async (t) => {
    const minted = await ok('POST', '/v1/keys', { name: 'driver', scopes: ['sessions:read', 'sessions:write', 'sessions:drive'] })
    t.notOk(minted.scopes.includes('sessions:evaluate'))
    const key = minted.secret as string
    const id = (await ok('POST', '/v1/sessions', {})).id as string
    t.equal((await rest('POST', `/v1/sessions/${id}/navigate`, { url: page('netlog-data.html') }, key)).status, 200, 'the key drives')
    t.equal((await rest('GET', `/v1/sessions/${id}/network`, undefined, key)).status, 200, 'and reads the network log')
    const denied = await rest('POST', `/v1/sessions/${id}/evaluate`, { expression: 'document.title = "pwned"' }, key)
    t.equal(denied.status, 403)
    t.same(denied.body.error, { code: 'forbidden', reason: 'missing_scope', message: 'missing required scope: sessions:evaluate' })

    const mcp = await mcpClient(t, s.url, key)
    t.ok((await mcp.listTools()).tools.some((x) => x.name === 'evaluate'), 'listed, but its call is refused')
    await t.rejects(mcp.callTool({ name: 'evaluate', arguments: { sessionId: id, expression: 'document.title = "pwned"' } }), 'the SDK client is refused')
    const raw = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'evaluate', arguments: { sessionId: id, expression: 'document.title = "pwned"' } } }),
    })
    t.equal(raw.status, 403)
    t.match(raw.headers.get('www-authenticate'), /insufficient_scope.*scope="sessions:evaluate"/)
    t.equal((await ok('POST', `/v1/sessions/${id}/perceive`, {})).title, 'Netlog data', 'nothing ran in the page')
    await rest('DELETE', `/v1/sessions/${id}`)
  })

  t.test('evaluate on a session with a bound identity: a typed 403 before anything reaches the page', async (t) => {
    const persona = await createPersona(s, acme.apiKey, { name: 'evaluated', value: `pw-${randomBytes(6).toString('hex')}`, originAllowlist: ['example.com'], agentId: acme.agentId })
    const started = await rest('POST', '/v1/sessions', { identity: persona.identityId })
    t.equal(started.status, 201)
    t.equal(started.body.identity, persona.identityId)
    const id = started.body.id as string
    await ok('POST', `/v1/sessions/${id}/navigate`, { url: page('netlog-data.html') })
    const refused = await rest('POST', `/v1/sessions/${id}/evaluate`, { expression: 'document.title = "pwned"' })
    t.equal(refused.status, 403)
    t.same(refused.body.error, { code: 'forbidden', reason: 'evaluate_identity_bound', message: 'evaluate is refused on a session with a bound identity' })
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const viaMcp = await mcp.callTool({ name: 'evaluate', arguments: { sessionId: id, expression: 'document.title = "pwned"' } })
    t.equal(viaMcp.isError, true)
    t.same(viaMcp.structuredContent, { status: 403, error: refused.body.error }, 'the same refusal over MCP')
    t.equal((await ok('POST', `/v1/sessions/${id}/perceive`, {})).title, 'Netlog data', 'nothing ran in the page')
    t.equal((await rest('GET', `/v1/sessions/${id}/network`)).status, 200, 'the network log stays readable')
    const journal = await ok('GET', `/v1/sessions/${id}/journal`)
    const rows = journal.items.filter((e: any) => e.op === 'evaluate')
    t.same(rows.map((e: any) => [e.outcome, e.errorCode]), [['error', 'evaluate_identity_bound'], ['error', 'evaluate_identity_bound']], 'each refusal is journalled')
    await rest('DELETE', `/v1/sessions/${id}`)
  })
})
