// The operator's configure call (operator/pod-client.ts), against a stand-in pod: the
// outcome both runtimes act on, and error text that never carries the token or the body.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { configurePod, type ConfigureInput } from '../../operator/pod-client.ts'

const TOKEN = 'pod-token-under-test'
const BODY: ConfigureInput = { sessionId: 'nsess_cfg', egress: { mode: 'platform', declaredHosts: [] }, storageState: { cookies: [{ value: 'cookie-value-under-test' }], origins: [] } }

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void

async function standInPod(t: Test, handle: Handler): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

function noSecrets(t: Test, outcome: { ok: boolean; message?: string }) {
  if (outcome.ok) return
  t.notMatch(outcome.message ?? '', TOKEN)
  t.notMatch(outcome.message ?? '', 'cookie-value-under-test')
}

t.test('POST /v1/configure with the bearer token and the body; 2xx is ok', async (t) => {
  let seen: { method?: string; url?: string; auth?: string; body?: unknown } = {}
  const endpoint = await standInPod(t, (req, body, res) => {
    seen = { method: req.method, url: req.url, auth: req.headers.authorization, body: JSON.parse(body) }
    json(res, 200, { ok: true, sessionId: 'nsess_cfg' })
  })
  t.same(await configurePod(endpoint, TOKEN, BODY, 2000), { ok: true })
  t.same(seen, { method: 'POST', url: '/v1/configure', auth: `Bearer ${TOKEN}`, body: BODY })
})

t.test('a 4xx is final, a 5xx retryable; only the error code is kept', async (t) => {
  let status = 400
  const endpoint = await standInPod(t, (_req, body, res) => json(res, status, { error: { code: 'bad_request', message: `echo ${body} ${TOKEN}` } }))
  const bad = await configurePod(endpoint, TOKEN, BODY, 2000)
  t.same(bad, { ok: false, retryable: false, message: 'configure rejected: HTTP 400 bad_request' })
  status = 503
  const down = await configurePod(endpoint, TOKEN, BODY, 2000)
  t.same(down, { ok: false, retryable: true, message: 'configure rejected: HTTP 503 bad_request' })
  noSecrets(t, bad)
  noSecrets(t, down)
})

t.test('409: ok when the pod reports itself configured (an earlier attempt of ours), final otherwise', async (t) => {
  let configured = true
  const endpoint = await standInPod(t, (req, _body, res) => {
    if (req.method === 'GET' && req.url === '/healthz') return json(res, 200, { ok: true, configured })
    json(res, 409, { error: { code: 'conflict', message: 'session already configured' } })
  })
  t.same(await configurePod(endpoint, TOKEN, BODY, 2000), { ok: true })
  configured = false
  t.same(await configurePod(endpoint, TOKEN, BODY, 2000), { ok: false, retryable: false, message: 'configure rejected: HTTP 409 conflict' })
})

t.test('no answer in time, or nobody listening: retryable', async (t) => {
  const endpoint = await standInPod(t, () => {}) // never answers
  const slow = await configurePod(endpoint, TOKEN, BODY, 200)
  t.same(slow, { ok: false, retryable: true, message: 'configure request failed (TimeoutError)' })
  const refused = await configurePod('http://127.0.0.1:1', TOKEN, BODY, 2000)
  t.same(refused, { ok: false, retryable: true, message: 'configure request failed (ECONNREFUSED)' })
})
