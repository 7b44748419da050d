// Fair delivery: one org floods endpoints that accept a connection and never answer, with
// hundreds of deliveries queued, on two replicas sharing one database; another org's one
// healthy endpoint, and the flooding org's own healthy endpoint, still get each delivery
// within the bound docs/webhooks.md states, and the silent endpoints never hold more
// attempts than the per-endpoint and per-org bounds, whichever replica claimed them.
// Alone: it holds the service to a latency bound.
import t, { type Test } from 'tap'
import { createServer, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts'
import { waitFor, within } from '../../helpers/wait.ts'

/** The bound docs/webhooks.md states for a delivery whose endpoint is healthy: the attempt timeout, a poll, a claim. */
const FIRST_ATTEMPT_BOUND_MS = 12_000
const SILENT_ENDPOINTS = 30
const FLOOD_EVENTS = 20
/** docs/configuration.md's default: attempts in flight per org, half of them at most to endpoints not answering */
const ORG_CONCURRENCY = 16

// one KMS key file for both replicas: either one opens the endpoints' secrets
const keyDir = mkdtempSync(join(tmpdir(), 'nightjar-fair-'))
t.teardown(() => rmSync(keyDir, { recursive: true, force: true }))
const ENV = {
  NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', NIGHTJAR_WEBHOOK_RETRY_SECONDS: '5,300', NIGHTJAR_KMS_KEY_FILE: join(keyDir, 'kms.key'),
  // the flood registers more than the default cap allows; the cap itself is in webhooks.test.ts
  NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG: String(SILENT_ENDPOINTS + 1),
}

/** Loopback servers that accept every connection and never answer, counting what each holds open. */
async function silentReceivers(t: Test, n: number) {
  const open: Array<Set<Socket>> = []
  const peak: number[] = []
  let totalPeak = 0
  const urls: string[] = []
  const total = () => open.reduce((s, x) => s + x.size, 0)
  for (let i = 0; i < n; i++) {
    const sockets = new Set<Socket>()
    open.push(sockets)
    peak.push(0)
    const server = createServer((sock) => {
      sockets.add(sock)
      // read and drop the request, so the socket sees the sender hang up (an unread one never ends)
      sock.resume()
      peak[i] = Math.max(peak[i], sockets.size)
      totalPeak = Math.max(totalPeak, total())
      sock.on('close', () => sockets.delete(sock))
      sock.on('error', () => sockets.delete(sock))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    urls.push(`http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`)
    t.teardown(() => {
      for (const s of sockets) s.destroy()
      server.close()
    })
  }
  return {
    urls, peak, total,
    totalPeak: () => totalPeak,
    /** drops every held connection: the attempts in flight end at once */
    release: () => { for (const s of open) for (const x of s) x.destroy() },
  }
}

function org(s: TestServer, apiKey: string) {
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: apiKey, body })
  return {
    rest,
    /** a credential request: one credential_request.created event, its request id */
    async ask(): Promise<string> {
      const ident = await rest('POST', '/v1/identities', { name: `shop-${randomBytes(4).toString('hex')}` })
      const r = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'login', originAllowlist: ['shop.example.com'], reason: 'sign in' })
      if (r.status !== 201) throw new Error(`credential request: ${r.status}`)
      return r.body.id as string
    },
    async register(url: string) {
      const r = await rest('POST', '/v1/webhooks', { url, events: ['credential_request.created'] })
      if (r.status !== 201) throw new Error(`webhook: ${r.status} ${r.text}`)
      return r.body.webhook.id as string
    },
  }
}

/**
 * How long from just before the event's request until `receiver` got that request's
 * delivery; Infinity when it has not come in twice the bound (the assertion then says so).
 */
async function latencyOf(receiver: Receiver, ask: () => Promise<string>): Promise<number> {
  const started = Date.now()
  const requestId = await ask()
  try {
    await waitFor(() => receiver.received.some((x) => x.body.includes(requestId)), { what: 'the delivery', timeoutMs: 2 * FIRST_ATTEMPT_BOUND_MS, intervalMs: 10 })
  } catch {
    return Infinity
  }
  return Date.now() - started
}

t.test('one org’s endpoints that never answer do not hold another org’s deliveries, nor its own healthy endpoint’s', async (t) => {
  const a = await startTestServer(t, { env: ENV })
  const b = await startTestServer(t, { env: ENV, sharing: a })
  const flood = await a.bootstrap()
  const calm = await a.bootstrap()
  const floodOrg = org(a, flood.apiKey)
  const calmOrg = org(b, calm.apiKey)

  // the flooding org's own healthy endpoint, which has answered before the flood
  const ownHealthy = await startReceiver(t)
  await floodOrg.register(ownHealthy.url)
  await floodOrg.ask()
  await waitFor(() => ownHealthy.received.length === 1, { what: 'the first delivery to the healthy endpoint' })
  const calmReceiver = await startReceiver(t)
  await calmOrg.register(calmReceiver.url)

  const silent = await silentReceivers(t, SILENT_ENDPOINTS)
  const silentIds: string[] = []
  for (const url of silent.urls) silentIds.push(await floodOrg.register(url))
  for (let i = 0; i < FLOOD_EVENTS; i++) await floodOrg.ask()
  await waitFor(() => silent.total() >= ORG_CONCURRENCY / 2, { what: 'the flood in flight' })

  const pending = async () => Number((await a.testDb.db.query(
    `select count(*) as n from webhook_deliveries where org_id = $1 and state = 'pending'`, [flood.orgId])).rows[0].n)
  const calmLatencies: number[] = []
  const ownLatencies: number[] = []
  for (let i = 0; i < 3; i++) {
    const backlog = await pending()
    const calmMs = await latencyOf(calmReceiver, () => calmOrg.ask())
    const ownMs = await latencyOf(ownHealthy, () => floodOrg.ask())
    t.comment(`other org's delivery in ${calmMs} ms, the flooding org's healthy endpoint in ${ownMs} ms, beside the flooding org's backlog of ${backlog} pending deliveries (${silent.total()} attempts held open by its silent endpoints)`)
    calmLatencies.push(calmMs)
    ownLatencies.push(ownMs)
    t.ok(backlog >= 300, 'the flood is still queued while the other deliveries go out')
  }
  t.ok(Math.max(...calmLatencies) <= FIRST_ATTEMPT_BOUND_MS, `the other org's deliveries arrive within the bound (${calmLatencies.join(', ')} ms)`)
  t.ok(Math.max(...ownLatencies) <= FIRST_ATTEMPT_BOUND_MS, `the flooding org's healthy endpoint is served within the bound too (${ownLatencies.join(', ')} ms)`)
  t.ok(Math.max(...silent.peak) <= 1, `an endpoint that never answered holds one attempt at a time, across both replicas (peak ${Math.max(...silent.peak)})`)
  t.ok(silent.totalPeak() <= ORG_CONCURRENCY / 2, `the flooding org's silent endpoints never hold more than half its bound, across both replicas (peak ${silent.totalPeak()})`)

  // deleting the silent endpoints ends their attempts and their backlog
  const deleted: number[] = []
  for (const id of silentIds) deleted.push((await floodOrg.rest('DELETE', `/v1/webhooks/${id}`)).status)
  t.same([...new Set(deleted)], [204], 'every silent endpoint is deleted')
  silent.release()
  await within(Promise.all([a.services.webhooks.idle(), b.services.webhooks.idle()]), 'both replicas\' deliveries settling once the silent endpoints are gone')
})
