// Webhooks without browser sessions: registration (the deny floor, a description a person
// can read, the cap per org), the secret shown once and never stored in clear, deliveries
// signed per Standard Webhooks and checked by a receiver with its own HMAC, retries,
// redirects not followed, the address judged again at send time, the delivery log, another
// org's ids, a restart with a delivery pending, two replicas sending each delivery once, and
// an endpoint disabled after failing and enabled again. Events come from credential
// requests; session events: session-events.test.ts; fairness: fair-delivery.alone.test.ts.
import t, { type Test } from 'tap'
import { createServer } from 'node:net'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { checkedPayload, startReceiver, switchableReceiver, verifySignature, type Receiver } from '../../helpers/webhook-receiver.ts'
import { waitFor } from '../../helpers/wait.ts'
import { dumpAllTables } from '../../helpers/db.ts'
import { answerCredentialRequest } from '../../../api-server/personas/credential-requests.ts'

// loopback receivers are reachable only because the test names them (the documented knob);
// 169.254.169.254 is named too, to show the deny floor holds even for an allowed host. One KMS
// key file for every server here: a restarted process, or another replica, opens the secrets.
const keyDir = mkdtempSync(join(tmpdir(), 'nightjar-webhooks-'))
t.teardown(() => rmSync(keyDir, { recursive: true, force: true }))
const ENV = {
  NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,169.254.169.254', NIGHTJAR_WEBHOOK_RETRY_SECONDS: '1,1', NIGHTJAR_KMS_KEY_FILE: join(keyDir, 'kms.key'),
}

interface Org { orgId: string; apiKey: string; userId: string }

function helpers(s: TestServer, org: Org) {
  const rest = (method: string, path: string, body?: unknown, token = org.apiKey) => s.request(method, path, { token, body })
  let n = 0
  return {
    rest,
    /** a credential_request: the credential_request.created event */
    async ask(reason = 'sign in to the shop') {
      const ident = await rest('POST', '/v1/identities', { name: `shop-${++n}-${randomBytes(3).toString('hex')}` })
      const r = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'login', originAllowlist: ['shop.example.com'], reason })
      if (r.status !== 201) throw new Error(`credential request: ${r.status}`)
      return r.body as { id: string; identityId: string }
    },
    /** a person answers it: the credential_request.answered event */
    answer: (requestId: string, value: string) =>
      answerCredentialRequest(s.services, { orgId: org.orgId, requestId, userId: org.userId, kind: 'password', value, now: s.services.now() }),
  }
}

/** The endpoint's delivery log once `ready` holds of its items. */
async function logWhen(h: ReturnType<typeof helpers>, webhookId: string, ready: (items: any[]) => boolean, o: { what: string; timeoutMs?: number }) {
  return waitFor(async () => {
    const r = await h.rest('GET', `/v1/webhooks/${webhookId}/deliveries`)
    return ready(r.body.items) ? r : undefined
  }, o)
}

/** The received deliveries, each checked against the secret and its contract (strictly); fails the test on a bad signature or an unlisted field. */
function verified(t: Test, r: Receiver, secret: string) {
  return r.received.map((x) => {
    const id = String(x.headers['webhook-id']), ts = String(x.headers['webhook-timestamp']), sig = String(x.headers['webhook-signature'])
    t.ok(verifySignature(secret, id, ts, x.body, sig), `the signature of ${id} verifies`)
    return { id, ts: Number(ts), payload: checkedPayload(x.body), answered: x.answered }
  })
}

t.test('webhooks', async (t) => {
  const s = await startTestServer(t, { env: { ...ENV, NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const h = helpers(s, acme)
  const responses: string[] = []
  const create = async (body: unknown, token = acme.apiKey) => {
    const r = await s.request('POST', '/v1/webhooks', { token, body })
    responses.push(r.text)
    return r
  }

  t.test('an endpoint URL under the deny floor, private or not https is refused, after DNS too', async (t) => {
    // (a public name that does not resolve yet is accepted: each delivery judges its addresses again, below)
    const refused = [
      'http://example.com/hooks', // not https (http only for an allowed host)
      'https://user:pw@example.com/hooks',
      'https://127.0.0.2/hooks', // loopback, not an allowed host
      'https://localhost/hooks', // a name that resolves to loopback
      'https://[::1]/hooks',
      'https://10.1.2.3/hooks',
      'https://192.168.1.1/hooks',
      'https://169.254.169.254/latest/meta-data', // the floor holds even for an allowed host
      'https://[::ffff:169.254.169.254]/x', // the same address written as IPv6
      'https://100.64.0.1/x',
      'not a url',
    ]
    for (const url of refused) {
      const r = await create({ url, events: ['session.live'] })
      t.equal(r.status, 400, `${url} refused`)
      t.equal(r.body.error.reason, 'webhook_url_refused')
      if (url !== 'not a url') t.notOk(r.text.includes(new URL(url).hostname), 'the refusal does not echo the address')
    }
    t.equal((await h.rest('GET', '/v1/webhooks')).body.length, 0, 'nothing was registered')
    const bad = await create({ url: 'https://example.com/x', events: [] })
    t.equal(bad.status, 400, 'at least one event')
    const member = await create({ url: 'https://example.com/x', events: ['session.live'] }, (await h.rest('POST', '/v1/keys', { name: 'drv', scopes: ['sessions:drive'] })).body.secret)
    t.equal(member.status, 403, 'org:admin is needed')
  })

  t.test('a description with a text-direction, invisible or control character is refused, naming the character', async (t) => {
    const cases: Array<[string, string]> = [
      ['abc\u202Eevil', 'U+202E'], ['\u2066isolated\u2069', 'U+2066'], ['zero\u200Bwidth', 'U+200B'], ['two\nlines', 'U+000A'],
    ]
    for (const [description, codePoint] of cases) {
      const r = await create({ url: 'https://example.com/described', events: ['session.live'], description })
      t.equal(r.status, 400, `${codePoint} refused`)
      t.equal(r.body.error.message, `invalid request: description: must not contain control, invisible or text-direction characters (found ${codePoint})`)
    }
    t.equal((await h.rest('GET', '/v1/webhooks')).body.length, 0, 'nothing was registered')
  })

  t.test('an org registers at most NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG endpoints, however many requests race', async (t) => {
    const max = s.config.webhooks.maxEndpointsPerOrg
    t.equal(max, 20, 'the documented default')
    const first = await Promise.all(Array.from({ length: max - 2 }, (_, i) => create({ url: `https://example.com/cap-${i}`, events: ['session.live'] })))
    t.same(first.map((r) => r.status), first.map(() => 201))
    // five at once for the last two places
    const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => create({ url: `https://example.com/burst-${i}`, events: ['session.live'] })))
    t.same(burst.map((r) => r.status).sort(), [201, 201, 409, 409, 409], 'two fit, three are refused')
    const refused = burst.find((r) => r.status === 409)!
    t.same(refused.body, { error: {
      code: 'conflict', reason: 'too_many_webhooks',
      message: `the org already has its limit of ${max} webhook endpoints: delete one first (the limit is NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG)`,
    } })
    const listed = (await h.rest('GET', '/v1/webhooks')).body as Array<{ id: string }>
    t.equal(listed.length, max)
    t.equal((await create({ url: 'https://example.com/other-org', events: ['session.live'] }, other.apiKey)).status, 201, 'another org has its own count')
    await h.rest('DELETE', `/v1/webhooks/${listed[0].id}`)
    t.equal((await create({ url: 'https://example.com/after-delete', events: ['session.live'] })).status, 201, 'a place freed by a delete is taken again')
    for (const w of (await h.rest('GET', '/v1/webhooks')).body as Array<{ id: string }>) await h.rest('DELETE', `/v1/webhooks/${w.id}`)
    for (const w of (await s.request('GET', '/v1/webhooks', { token: other.apiKey })).body as Array<{ id: string }>) {
      await s.request('DELETE', `/v1/webhooks/${w.id}`, { token: other.apiKey })
    }
  })

  t.test('the signing secret is shown once and stored only sealed', async (t) => {
    const r = await create({ url: 'https://example.com/nightjar', events: ['session.live', 'session.ended'], description: 'prod backend' })
    t.equal(r.status, 201)
    t.match(r.body.webhook, { url: 'https://example.com/nightjar', events: ['session.live', 'session.ended'], description: 'prod backend' })
    t.match(r.body.webhook.id, /^nwhk_[0-9A-Za-z]{22}$/)
    const secret: string = r.body.secret
    t.ok(/^whsec_[A-Za-z0-9+/]{43}=$/.test(secret), 'a whsec_ secret of 32 bytes')
    const listed = await h.rest('GET', '/v1/webhooks')
    responses.push(listed.text)
    const rotated = await h.rest('POST', `/v1/webhooks/${r.body.webhook.id}/rotate-secret`)
    t.equal(rotated.status, 200)
    t.ok(rotated.body.secret !== secret, 'rotation gives a new secret')
    const overlapMs = Date.parse(rotated.body.webhook.previousSecretExpiresAt) - Date.now()
    t.ok(Math.abs(overlapMs - 86_400_000) < 60_000, 'the old secret signs beside it for a day unless the rotation says otherwise')
    const secrets = [secret, rotated.body.secret as string]
    const dump = await dumpAllTables(s.testDb.db)
    const logs = s.logs()
    for (const x of secrets) {
      const key = x.slice('whsec_'.length)
      t.ok(!dump.includes(key) && !dump.includes(Buffer.from(key, 'base64').toString('hex')), 'no table holds the secret in clear (the replaced one neither)')
      t.ok(!logs.includes(key), 'no log line holds it')
      t.ok(!responses.some((text) => text !== r.text && text.includes(key)), 'no other response holds it')
    }
    t.ok(!listed.text.includes('whsec_'), 'the list never shows a secret')
    t.equal((await h.rest('DELETE', `/v1/webhooks/${r.body.webhook.id}`)).status, 204)
  })

  t.test('deliveries are signed per Standard Webhooks, carry only what was subscribed, and no secret or free text', async (t) => {
    const receiver = await startReceiver(t)
    const made = await create({ url: receiver.url, events: ['credential_request.created', 'credential_request.answered'] })
    t.equal(made.status, 201)
    const onlyCreated = await startReceiver(t)
    const second = await create({ url: onlyCreated.url, events: ['credential_request.created'] })
    const canaryReason = `CANARY-REASON-${randomBytes(8).toString('hex')}`
    const canaryValue = `CANARY-VALUE-${randomBytes(8).toString('hex')}`
    const req = await h.ask(canaryReason)
    const cred = await h.answer(req.id, canaryValue)
    await waitFor(() => receiver.received.length === 2 && onlyCreated.received.length === 1, { what: 'three deliveries' })
    const got = verified(t, receiver, made.body.secret)
    t.same(got.map((g) => g.payload.type), ['credential_request.created', 'credential_request.answered'])
    t.match(got[0].payload.data, { requestId: req.id, identityId: req.identityId, credentialName: 'login', originAllowlist: ['shop.example.com'] })
    t.match((got[0].payload.data as { url: string }).url, `/console/credential-requests/${req.id}`)
    t.same(got[1].payload.data, { requestId: req.id, identityId: req.identityId, credentialName: 'login', credentialId: cred.id })
    for (const g of got) {
      t.match(g.id, /^nevt_[0-9A-Za-z]{22}$/)
      t.ok(Math.abs(g.ts - Date.now() / 1000) < 60, 'webhook-timestamp is the attempt time, in seconds')
    }
    const [other1] = verified(t, onlyCreated, second.body.secret)
    t.equal(other1.id, got[0].id, 'one event has one webhook-id at every endpoint')
    t.notOk(verifySignature(made.body.secret, other1.id, String(other1.ts), onlyCreated.received[0].body, String(onlyCreated.received[0].headers['webhook-signature'])),
      'each endpoint signs with its own secret')
    const bodies = [...receiver.received, ...onlyCreated.received].map((x) => x.body).join('\n')
    t.ok(!bodies.includes(canaryValue), 'no credential value in a payload')
    t.ok(!bodies.includes(canaryReason), 'no free text of the agent in a payload')
    t.ok(!bodies.includes('whsec_') && !bodies.includes(made.body.secret.slice(6)), 'no secret in a payload')
    t.equal(receiver.received[0].headers['content-type'], 'application/json')

    // the receiver has answered; the worker records each outcome right after
    const log = await logWhen(h, made.body.webhook.id, (items) => items.length === 2 && items.every((d) => d.state !== 'pending'), { what: 'both outcomes recorded' })
    t.equal(log.status, 200)
    t.same(log.body.items.map((d: any) => [d.eventType, d.state, d.attempts.map((a: any) => a.responseStatus)]),
      [['credential_request.answered', 'delivered', [204]], ['credential_request.created', 'delivered', [204]]], 'the log, newest first, with response statuses')
    t.same(log.body.items.map((d: any) => d.eventId), [got[1].id, got[0].id], 'the log names each webhook-id')
    const page1 = await h.rest('GET', `/v1/webhooks/${made.body.webhook.id}/deliveries?limit=1`)
    t.equal(page1.body.items.length, 1)
    const page2 = await h.rest('GET', `/v1/webhooks/${made.body.webhook.id}/deliveries?limit=1&before=${page1.body.next}`)
    t.equal(page2.body.items[0].eventId, got[0].id, 'paged with before/next')
  })

  t.test('a failing receiver is retried with the same webhook-id until it answers 2xx; the log shows every attempt', async (t) => {
    const receiver = await startReceiver(t)
    receiver.answerWith(500, 503)
    const made = await create({ url: receiver.url, events: ['credential_request.created'] })
    await h.ask()
    await waitFor(() => receiver.received.length === 3, { what: 'three attempts', timeoutMs: 15_000 })
    const got = verified(t, receiver, made.body.secret)
    t.same(got.map((g) => g.answered), [500, 503, 204])
    t.equal(new Set(got.map((g) => g.id)).size, 1, 'one webhook-id on every attempt')
    t.ok(got[1].ts >= got[0].ts + 1, 'the retry waited for the schedule (1 s here)')
    const log = await logWhen(h, made.body.webhook.id, (items) => items[0]?.state === 'delivered', { what: 'delivered in the log' })
    t.same(log.body.items[0].attempts.map((a: any) => [a.responseStatus, a.error]), [[500, 'http_error'], [503, 'http_error'], [204, null]])
    t.equal(log.body.items[0].nextAttemptAt, null)

    // a receiver that never answers 2xx: the schedule (1,1) runs out after three attempts
    const down = await startReceiver(t)
    down.answerWith(500, 500, 500, 500)
    const gone = await create({ url: down.url, events: ['credential_request.created'] })
    await h.ask()
    const failed = await logWhen(h, gone.body.webhook.id, (items) => items[0]?.state === 'failed', { what: 'failed in the log', timeoutMs: 15_000 })
    t.equal(failed.body.items[0].attempts.length, 3, 'bounded: the first attempt and the two retries of the schedule')
    t.equal(down.received.length, 3)
    for (const id of [made.body.webhook.id, gone.body.webhook.id]) await h.rest('DELETE', `/v1/webhooks/${id}`)
  })

  t.test('a redirect is not followed, and the address is judged again when sending', async (t) => {
    const target = await startReceiver(t)
    const redirecting = await startReceiver(t)
    redirecting.answerWith({ status: 307, headers: { location: target.url } }, { status: 307, headers: { location: target.url } }, { status: 307, headers: { location: target.url } })
    const made = await create({ url: redirecting.url, events: ['credential_request.created'] })
    await h.ask()
    const log = await logWhen(h, made.body.webhook.id, (items) => items[0]?.state === 'failed', { what: 'the redirecting endpoint failed', timeoutMs: 15_000 })
    t.same(log.body.items[0].attempts.map((a: any) => [a.responseStatus, a.error]), [[307, 'redirect_not_followed'], [307, 'redirect_not_followed'], [307, 'redirect_not_followed']])
    t.equal(target.received.length, 0, 'the redirect target got nothing')
    await h.rest('DELETE', `/v1/webhooks/${made.body.webhook.id}`)

    // the URL registered fine, then its name came to mean loopback (as after a DNS change):
    // the send-time lookup refuses it before any connection is made
    let connections = 0
    const trap = createServer((sock) => { connections++; sock.destroy() })
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve))
    t.teardown(() => trap.close())
    const port = (trap.address() as { port: number }).port
    const later = await create({ url: 'https://example.com/hooks', events: ['credential_request.created'] })
    await s.testDb.db.query('update webhook_endpoints set url = $2 where id = $1', [later.body.webhook.id, `https://localhost:${port}/hooks`])
    await h.ask()
    const refused = await logWhen(h, later.body.webhook.id, (items) => items[0]?.attempts.length >= 1, { what: 'an attempt' })
    t.same(refused.body.items[0].attempts.map((a: any) => [a.responseStatus, a.error]).slice(0, 1), [[null, 'address_refused']])
    t.equal(connections, 0, 'no connection reached the loopback listener')
    await h.rest('DELETE', `/v1/webhooks/${later.body.webhook.id}`)
  })

  t.test('[ISSUE-50] a rotation’s overlap: both signatures until it ends, 0 for none, bounded, and a second rotation leaves one old secret', async (t) => {
    const receiver = await startReceiver(t)
    const made = await create({ url: receiver.url, events: ['credential_request.created'] })
    const id: string = made.body.webhook.id
    const first: string = made.body.secret
    const rotate = (body: unknown) => h.rest('POST', `/v1/webhooks/${id}/rotate-secret`, body)
    /** which of the secrets verify the newest delivery, and how many signatures it carries */
    const next = async () => {
      const n = receiver.received.length
      await h.ask()
      await waitFor(() => receiver.received.length === n + 1, { what: 'the delivery' })
      const x = receiver.received[n]
      const sig = String(x.headers['webhook-signature'])
      const ok = (secret: string) => verifySignature(secret, String(x.headers['webhook-id']), String(x.headers['webhook-timestamp']), x.body, sig)
      checkedPayload(x.body)
      return { ok, signatures: sig.split(' ').length }
    }

    for (const overlapSeconds of [-1, 604_801, 1.5]) {
      const r = await rotate({ overlapSeconds })
      t.equal(r.status, 400, `overlapSeconds ${overlapSeconds} refused`)
    }
    const second = await rotate({ overlapSeconds: 3600 })
    t.equal(second.status, 200)
    t.ok(Math.abs(Date.parse(second.body.webhook.previousSecretExpiresAt) - Date.now() - 3_600_000) < 60_000, 'the overlap asked for')
    const during = await next()
    t.equal(during.signatures, 2, 'the old and the new signature')
    t.ok(during.ok(first) && during.ok(second.body.secret), 'each secret verifies it')

    // rotating again within the overlap: the secret just replaced signs beside the new one, the first no longer
    const third = await rotate({})
    const again = await next()
    t.equal(again.signatures, 2)
    t.ok(again.ok(second.body.secret) && again.ok(third.body.secret), 'the two newest secrets verify it')
    t.notOk(again.ok(first), 'the first secret no longer does')

    // a secret that leaked: no overlap, and nothing kept
    const leaked = await rotate({ overlapSeconds: 0 })
    t.equal(leaked.body.webhook.previousSecretExpiresAt, null, 'no overlap')
    const stored = await s.testDb.db.query('select previous_secret_sealed, previous_secret_expires_at from webhook_endpoints where id = $1', [id])
    t.same(stored.rows[0], { previous_secret_sealed: null, previous_secret_expires_at: null }, 'the replaced secret is not kept')
    const now = await next()
    t.equal(now.signatures, 1)
    t.ok(now.ok(leaked.body.secret), 'the new secret verifies')
    t.notOk(now.ok(third.body.secret), 'the leaked one does not')
    await h.rest('DELETE', `/v1/webhooks/${id}`)
  })

  t.test('another org’s endpoint is the same 404 as an unknown one', async (t) => {
    const receiver = await startReceiver(t)
    const made = await create({ url: receiver.url, events: ['credential_request.created'] })
    const unknown = 'nwhk_' + '0'.repeat(22)
    for (const [method, suffix] of [['GET', '/deliveries'], ['DELETE', ''], ['POST', '/rotate-secret']] as const) {
      const foreign = await s.request(method, `/v1/webhooks/${made.body.webhook.id}${suffix}`, { token: other.apiKey })
      const none = await s.request(method, `/v1/webhooks/${unknown}${suffix}`, { token: other.apiKey })
      t.equal(foreign.status, 404, `${method} ${suffix || '/'}`)
      t.equal(foreign.text, none.text, 'byte-identical')
    }
    t.same((await s.request('GET', '/v1/webhooks', { token: other.apiKey })).body, [], 'the other org lists none')
    // the other org's events never reach this org's endpoint
    await helpers(s, other).ask()
    await s.services.webhooks.idle()
    t.equal(receiver.received.length, 0)
    await h.rest('DELETE', `/v1/webhooks/${made.body.webhook.id}`)
  })
})

t.test('a delivery stored before the process stopped is sent by the next one', async (t) => {
  const first = await startTestServer(t, { env: ENV })
  const acme = await first.bootstrap()
  const receiver = await startReceiver(t)
  const made = await first.request('POST', '/v1/webhooks', { token: acme.apiKey, body: { url: receiver.url, events: ['credential_request.created'] } })
  // the process stops sending (as if it died) right before the event is stored
  await first.services.webhooks.stop()
  const req = await helpers(first, acme).ask()
  const pending = await first.request('GET', `/v1/webhooks/${made.body.webhook.id}/deliveries`, { token: acme.apiKey })
  t.same(pending.body.items.map((d: any) => [d.state, d.attempts.length]), [['pending', 0]], 'stored, not yet sent')
  await first.close()
  t.equal(receiver.received.length, 0)

  const next = await startTestServer(t, { env: ENV, sharing: first })
  await waitFor(() => receiver.received.length === 1, { what: 'the delivery after the restart' })
  const [got] = verified(t, receiver, made.body.secret)
  t.match(got.payload, { type: 'credential_request.created', data: { requestId: req.id } })
  const log = await next.request('GET', `/v1/webhooks/${made.body.webhook.id}/deliveries`, { token: acme.apiKey })
  t.equal(log.body.items[0].state, 'delivered')
})

t.test('two replicas send each delivery once', async (t) => {
  const a = await startTestServer(t, { env: ENV })
  const b = await startTestServer(t, { env: ENV, sharing: a })
  const acme = await a.bootstrap()
  const receiver = await startReceiver(t)
  const made = await a.request('POST', '/v1/webhooks', { token: acme.apiKey, body: { url: receiver.url, events: ['credential_request.created'] } })
  const events = 12
  // half the events are emitted on each replica; both workers claim from the one table
  await Promise.all(Array.from({ length: events }, (_, i) => helpers(i % 2 ? b : a, acme).ask()))
  await waitFor(async () => {
    const r = await a.request('GET', `/v1/webhooks/${made.body.webhook.id}/deliveries`, { token: acme.apiKey })
    return r.body.items.length === events && r.body.items.every((d: any) => d.state === 'delivered')
  }, { what: 'every delivery delivered' })
  await Promise.all([a.services.webhooks.idle(), b.services.webhooks.idle()])
  const ids = verified(t, receiver, made.body.secret).map((g) => g.id)
  t.equal(ids.length, events, 'as many requests as events')
  t.equal(new Set(ids).size, events, 'no webhook-id twice')
})

t.test('an endpoint that keeps failing is disabled, with an event and an audit row, and an admin enables it again', async (t) => {
  // three failed attempts in a row spanning two seconds at least; a retry every second
  const s = await startTestServer(t, { env: {
    ...ENV, NIGHTJAR_WEBHOOK_RETRY_SECONDS: '1,1,1,1,1,1,1,1', NIGHTJAR_WEBHOOK_DISABLE_AFTER_FAILURES: '3', NIGHTJAR_WEBHOOK_DISABLE_AFTER_SECONDS: '2',
  } })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const h = helpers(s, acme)
  const failing = await switchableReceiver(t, 500)
  const made = await h.rest('POST', '/v1/webhooks', { url: failing.url, events: ['credential_request.created', 'webhook.disabled'] })
  const watcher = await startReceiver(t)
  const watching = await h.rest('POST', '/v1/webhooks', { url: watcher.url, events: ['webhook.disabled'] })
  const id: string = made.body.webhook.id
  t.equal(made.body.webhook.disabled, null, 'a new endpoint is enabled')
  const asked = await h.ask()

  const view = await waitFor(async () => {
    const r = await h.rest('GET', '/v1/webhooks')
    return (r.body as Array<{ id: string; disabled: unknown }>).find((w) => w.id === id && w.disabled)
  }, { what: 'the endpoint disabled', timeoutMs: 20_000 }) as { disabled: { since: string; reason: string; failures: number; failingSince: string } }
  t.equal(view.disabled.reason, 'consecutive_failures')
  t.ok(view.disabled.failures >= 3, `${view.disabled.failures} failures in a row`)
  t.ok(Date.parse(view.disabled.since) - Date.parse(view.disabled.failingSince) >= 2000, 'over two seconds at least: a burst alone does not disable')
  t.equal(failing.received.length, view.disabled.failures, 'every attempt it got failed')

  // the org's other endpoint is told; the disabled one is not sent the event about itself
  await waitFor(() => watcher.received.length === 1, { what: 'the webhook.disabled event' })
  const [told] = verified(t, watcher, watching.body.secret)
  t.same(told.payload.data, { webhookId: id, reason: 'consecutive_failures', failures: view.disabled.failures, failingSince: view.disabled.failingSince })
  t.equal(told.payload.type, 'webhook.disabled')
  t.match((await h.rest('GET', '/v1/audit?action=webhook.disable')).body.items, [{ action: 'webhook.disable', targetId: id, reason: 'consecutive_failures' }], 'an audit row')

  // its pending delivery is not attempted once due, and a new event is not queued for it
  const pending = (await h.rest('GET', `/v1/webhooks/${id}/deliveries`)).body.items
  t.same(pending.map((d: any) => d.state), ['pending'], 'the delivery waits, with retries left')
  await waitFor(() => Date.now() > Date.parse(pending[0].nextAttemptAt) + 200, { what: 'the retry to come due', timeoutMs: 5000 })
  s.services.webhooks.wake()
  await s.services.webhooks.idle()
  t.equal(failing.received.length, view.disabled.failures, 'no attempt after it was disabled')
  // (an event is stored, with its deliveries, before the request that raised it is answered)
  await h.ask()
  t.equal((await h.rest('GET', `/v1/webhooks/${id}/deliveries`)).body.items.length, 1, 'nothing new queued for it')

  // another org's id is the unknown 404; the org's admin enables it, and the waiting delivery goes out
  t.equal((await s.request('POST', `/v1/webhooks/${id}/enable`, { token: other.apiKey })).status, 404)
  failing.status.code = 204
  const enabled = await h.rest('POST', `/v1/webhooks/${id}/enable`)
  t.equal(enabled.status, 200)
  t.equal(enabled.body.disabled, null, 'enabled')
  const delivered = await logWhen(h, id, (items) => items[0]?.state === 'delivered', { what: 'the waiting delivery delivered' })
  t.equal(delivered.body.items[0].attempts.at(-1).responseStatus, 204)
  t.ok(failing.received.at(-1)!.includes(asked.id), 'the delivery that waited is the one sent')
  t.match((await h.rest('GET', '/v1/audit?action=webhook.enable')).body.items, [{ action: 'webhook.enable', targetId: id }], 'an audit row')
  t.equal((await h.rest('POST', `/v1/webhooks/${id}/enable`)).status, 200, 'enabling an enabled endpoint changes nothing')
  t.equal((await h.rest('GET', '/v1/audit?action=webhook.enable')).body.items.length, 1, 'and audits nothing')
})
