// A `standardwebhooks` receiver (the pinned library, as a backend installs it) against a
// running server, through a secret rotation: during the overlap a receiver still holding
// the old secret and one holding the new verify the same delivery; once it ends, only the
// new verifies and the old secret is gone from the database. The server's clock is the
// test's, moved past the window instead of waiting for it (by less than the library's
// five-minute timestamp tolerance).
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { startTestServer } from '../helpers/server.ts'
import { checkedPayload, startReceiver, type Received } from '../helpers/webhook-receiver.ts'
import { waitFor } from '../helpers/wait.ts'

/** Does the library, holding `secret`, accept this delivery as it arrived? */
function accepts(secret: string, r: Received): boolean {
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]))
  try {
    new Webhook(secret).verify(r.body, headers)
    return true
  } catch {
    // WebhookVerificationError: the answer sought
    return false
  }
}

t.test('[ISSUE-50] a standardwebhooks 1.1.1 receiver with the old secret and one with the new both verify deliveries during a rotation’s overlap; after it only the new does', async (t) => {
  let skewMs = 0
  const s = await startTestServer(t, { now: () => Date.now() + skewMs, env: { NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const ask = async () => {
    const ident = await rest('POST', '/v1/identities', { name: `shop-${randomBytes(3).toString('hex')}` })
    const r = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'login', originAllowlist: ['shop.example.com'], reason: 'sign in' })
    t.equal(r.status, 201)
  }
  const receiver = await startReceiver(t)
  const made = await rest('POST', '/v1/webhooks', { url: receiver.url, events: ['credential_request.created'] })
  t.equal(made.status, 201)
  const id: string = made.body.webhook.id
  const oldSecret: string = made.body.secret
  t.equal(made.body.webhook.previousSecretExpiresAt, null, 'a new endpoint has one secret')

  await ask()
  await waitFor(() => receiver.received.length === 1, { what: 'the first delivery' })
  t.ok(accepts(oldSecret, receiver.received[0]), 'before the rotation the secret verifies')

  const overlapSeconds = 120
  const rotated = await rest('POST', `/v1/webhooks/${id}/rotate-secret`, { overlapSeconds })
  t.equal(rotated.status, 200)
  const newSecret: string = rotated.body.secret
  const until = Date.parse(rotated.body.webhook.previousSecretExpiresAt)
  t.ok(Math.abs(until - (Date.now() + overlapSeconds * 1000)) < 5000, 'the view says when the old secret stops signing')

  await ask()
  await waitFor(() => receiver.received.length === 2, { what: 'a delivery during the overlap' })
  const during = receiver.received[1]
  t.equal(String(during.headers['webhook-signature']).split(' ').length, 2, 'two v1 signatures')
  t.ok(accepts(oldSecret, during), 'a receiver still holding the old secret verifies it')
  t.ok(accepts(newSecret, during), 'a receiver holding the new secret verifies the same delivery')
  t.equal(checkedPayload(during.body).type, 'credential_request.created')

  // past the window, as the server reckons time
  skewMs = overlapSeconds * 1000 + 1000
  await waitFor(async () => {
    const r = await s.testDb.db.query('select previous_secret_sealed from webhook_endpoints where id = $1', [id])
    return r.rows[0].previous_secret_sealed === null
  }, { what: 'the old secret dropped' })
  t.equal((await rest('GET', '/v1/webhooks')).body[0].previousSecretExpiresAt, null, 'the view says only the new secret signs')
  await ask()
  await waitFor(() => receiver.received.length === 3, { what: 'a delivery after the overlap' })
  const after = receiver.received[2]
  t.equal(String(after.headers['webhook-signature']).split(' ').length, 1, 'one signature')
  t.notOk(accepts(oldSecret, after), 'the old secret no longer verifies')
  t.ok(accepts(newSecret, after), 'the new one does')
})
