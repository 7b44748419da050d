// Traces, end to end: a real OTLP/HTTP receiver on loopback, this process
// tracing as the api-server (with the embedded operator in it) and real browser pods tracing
// as themselves. A session start is one trace from the REST request through the reconcile to
// the pod's configure; a driving call is one trace from the request to the pod. A canary
// credential value and a canary page text never appear in any byte exported.
import t from 'tap'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../helpers/server.ts'
import { PAGES_DIR, startPublicWeb } from '../helpers/netns.ts'
import { createPersona } from '../helpers/personas.ts'
import { waitFor } from '../helpers/wait.ts'
import { mcpClient } from '../helpers/mcp.ts'
import { otlpReceiver } from '../helpers/otlp-receiver.ts'
import { startTracing, tracingRequested } from '../../telemetry/tracing.ts'

const CANARY = 'Cnry-' + randomBytes(6).toString('hex') + '-pw'
const PAGE_CANARY = 'PageCnry' + randomBytes(6).toString('hex')

t.test('[ISSUE-38] tracing is off unless an OTLP endpoint is configured', async (t) => {
  t.notOk(tracingRequested({}), 'no endpoint: off')
  t.notOk((await startTracing('nightjar-api-server', {})).enabled, 'nothing is exported')
  t.ok(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), 'the standard endpoint turns it on')
  t.ok(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), 'so does the traces endpoint')
  t.notOk(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }), 'OTEL_SDK_DISABLED wins')
  t.notOk(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }), 'as does OTEL_TRACES_EXPORTER=none')
})

t.test('[ISSUE-38] a session start and driving calls, traced across api-server, operator and pod', async (t) => {
  const receiver = await otlpReceiver(t)
  // the standard variables, as a deployment sets them; the embedded pods inherit them
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' })
  const tracing = await startTracing('nightjar-api-server')
  t.ok(tracing.enabled)
  t.teardown(() => tracing.shutdown())

  const pages = mkdtempSync(join(tmpdir(), 'nightjar-trace-pages-'))
  t.teardown(() => rmSync(pages, { recursive: true, force: true }))
  copyFileSync(join(PAGES_DIR, 'fill-check.html'), join(pages, 'fill-check.html'))
  writeFileSync(join(pages, 'canary-page.html'), `<!doctype html><title>${PAGE_CANARY}</title><p>${PAGE_CANARY}</p>`)
  const web = await startPublicWeb(t, { pagesDir: pages })
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'login.example.com': web.ip, 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const persona = await createPersona(s, acme.apiKey, { name: 'shopper', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })

  // the caller's own trace: Nightjar continues it (W3C traceparent)
  const traced = (traceId: string) => ({ traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` })
  const startTrace = randomBytes(16).toString('hex')
  const started = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: { identity: persona.identityId }, headers: traced(startTrace) })
  t.equal(started.status, 201)
  const id = started.body.id as string

  const driveTrace = randomBytes(16).toString('hex')
  const nav = await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: `http://example.com/canary-page.html?q=${PAGE_CANARY}` }, headers: traced(driveTrace) })
  t.equal(nav.status, 200)
  const seen = await s.request('POST', `/v1/sessions/${id}/perceive`, { token: acme.apiKey, body: {} })
  t.ok(seen.text.includes(PAGE_CANARY), 'the page (and so its canary) was read back to the caller')
  t.equal((await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: 'http://login.example.com/fill-check.html' } })).status, 200)
  const fillTrace = randomBytes(16).toString('hex')
  const fill = await s.request('POST', `/v1/sessions/${id}/fill-credential`, { token: acme.apiKey, body: { credentialName: 'login', selector: '#pw' }, headers: traced(fillTrace) })
  t.equal(fill.status, 200, 'the canary credential was typed')

  // over MCP: the client sends no trace context, so the request starts the trace
  const mcp = await mcpClient(t, s.url, acme.apiKey)
  const viaMcp = await mcp.callTool({ name: 'session_start', arguments: {} })
  t.notOk(viaMcp.isError, 'a session started over MCP')
  const mcpSessionId = (viaMcp.structuredContent as { id: string }).id

  await tracing.flush()
  const inTrace = (traceId: string) => receiver.spans.filter((sp) => sp.traceId === traceId)
  const names = (traceId: string) => inTrace(traceId).map((sp) => `${sp.service}: ${sp.name}`)
  // the pod exports on its own schedule: the test goes on the moment its spans arrive
  await waitFor(async () => {
    await tracing.flush()
    return ['pod POST /v1/configure', 'pod POST /v1/navigate', 'pod POST /v1/secure_type'].every((n) => receiver.spans.some((sp) => sp.name === n))
  }, { timeoutMs: 20_000, what: 'the pod\'s spans' })

  t.test('the start is one trace: request → operation → start → reconcile → configure → the pod', async (t) => {
    const got = names(startTrace)
    for (const want of [
      'nightjar-api-server: POST /v1/sessions',
      'nightjar-api-server: operation session_start',
      'nightjar-api-server: session.start',
      'nightjar-api-server: BrowserSession reconcile',
      'nightjar-api-server: pod.configure',
      'nightjar-browser-pod: pod POST /v1/configure',
    ]) t.ok(got.includes(want), `${want} is in the start's trace`)
    // one tree: every span's parent is in the trace, or is the caller's own span
    const spans = inTrace(startTrace)
    const ids = new Set(spans.map((sp) => sp.spanId))
    const roots = spans.filter((sp) => !sp.parentSpanId || !ids.has(sp.parentSpanId))
    t.same(roots.map((sp) => sp.name), ['POST /v1/sessions'], 'one root: the request, whose parent is the caller\'s span')
    const byName = (n: string) => spans.find((sp) => sp.name === n)!
    t.equal(byName('BrowserSession reconcile').parentSpanId, byName('session.start').spanId, 'the reconcile is a child of the start (through the BrowserSession\'s annotation)')
    t.equal(byName('pod POST /v1/configure').parentSpanId, byName('pod.configure').spanId, 'the pod\'s span is a child of the operator\'s configure call (through traceparent)')
    t.equal(byName('session.start').attributes['nightjar.session.id'], id)
    t.equal(byName('session.start').attributes['nightjar.outcome'], 'ok')
  })

  t.test('over MCP, the start is one trace too, from POST /mcp to the pod', async (t) => {
    const start = await waitFor(() => receiver.spans.find((sp) => sp.name === 'session.start' && sp.attributes['nightjar.session.id'] === mcpSessionId), { what: 'the MCP start\'s span' })
    const spans = await waitFor(() => {
      const found = inTrace(start.traceId)
      return found.some((sp) => sp.name === 'pod POST /v1/configure') ? found : undefined
    }, { timeoutMs: 20_000, what: 'the MCP start\'s pod span' })
    const got = spans.map((sp) => sp.name)
    for (const want of ['POST /mcp', 'operation session_start', 'session.start', 'BrowserSession reconcile', 'pod.configure', 'pod POST /v1/configure']) t.ok(got.includes(want), `${want} is in the MCP start's trace`)
    t.equal(spans.find((sp) => sp.name === 'operation session_start')!.attributes['nightjar.via'], 'mcp')
    const ids = new Set(spans.map((sp) => sp.spanId))
    t.same(spans.filter((sp) => !sp.parentSpanId || !ids.has(sp.parentSpanId)).map((sp) => sp.name), ['POST /mcp'], 'one root: the MCP request')
  })

  t.test('a driving call is one trace from the request to the pod', async (t) => {
    const got = names(driveTrace)
    for (const want of ['nightjar-api-server: POST /v1/sessions/:sessionId/navigate', 'nightjar-api-server: operation navigate', 'nightjar-api-server: drive navigate', 'nightjar-browser-pod: pod POST /v1/navigate']) {
      t.ok(got.includes(want), `${want} is in the call's trace`)
    }
    const spans = inTrace(driveTrace)
    t.equal(spans.find((sp) => sp.name === 'pod POST /v1/navigate')!.parentSpanId, spans.find((sp) => sp.name === 'drive navigate')!.spanId)
    t.same(names(fillTrace).filter((n) => /secure_type|credential\.fill/.test(n)).sort(), ['nightjar-api-server: credential.fill', 'nightjar-browser-pod: pod POST /v1/secure_type'], 'the fill too, by route only')
  })

  t.test('no credential value, page content, URL or session token in any exported byte', async (t) => {
    const all = Buffer.concat(receiver.bodies).toString('utf8')
    t.ok(receiver.spans.length > 10, `spans were exported (${receiver.spans.length})`)
    t.notOk(all.includes(CANARY), 'the credential\'s value never enters a span')
    t.notOk(all.includes(Buffer.from(CANARY).toString('base64')), 'nor its base64 (the pod API\'s encoding of it)')
    t.notOk(all.includes(PAGE_CANARY), 'nor the page\'s contents, title or URL query')
    t.notOk(all.includes('canary-page.html') || all.includes('fill-check.html'), 'no URL is recorded')
    t.notOk(all.includes(acme.apiKey), 'nor the caller\'s API key')
    t.notOk(/Bearer /i.test(all), 'nor any authorization header')
  })
})
