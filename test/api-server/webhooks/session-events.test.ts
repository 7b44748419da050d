// Webhooks of real sessions: session.live, human.requested,
// session.ended and session.failed (a killed browser pod, with the reason) reach a receiver
// that checks every signature with its own HMAC; a page's text and the agent's words never
// reach a payload (canary). Then the console: a person adds an endpoint, sees its secret
// once, and reads the delivery log with the response statuses.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { checkedPayload, startReceiver, verifySignature } from '../../helpers/webhook-receiver.ts'
import { waitFor } from '../../helpers/wait.ts'
import { signIn } from '../../helpers/console.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'

t.test('session events as webhooks', async (t) => {
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', NIGHTJAR_WEBHOOK_RETRY_SECONDS: '1' } })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const receiver = await startReceiver(t)
  const made = await rest('POST', '/v1/webhooks', { url: receiver.url, events: ['session.live', 'session.ended', 'session.failed', 'human.requested'] })
  t.equal(made.status, 201)
  const secret: string = made.body.secret
  const payloads = () => receiver.received.map((x) => {
    if (!verifySignature(secret, String(x.headers['webhook-id']), String(x.headers['webhook-timestamp']), x.body, String(x.headers['webhook-signature']))) throw new Error('a delivery with a bad signature')
    // strictly: a field the contract does not list fails here
    return checkedPayload(x.body)
  })
  const of = (sessionId: string) => payloads().filter((p) => (p.data as { sessionId?: string }).sessionId === sessionId)

  const pageCanary = `CANARY-PAGE-${randomBytes(8).toString('hex')}`
  const reasonCanary = `CANARY-REASON-${randomBytes(8).toString('hex')}`

  t.test('[ISSUE-50] live, a person asked for, ended: each payload holds what its contract lists, strictly (sandbox on session.live; no reason on human.requested)', async (t) => {
    const started = await rest('POST', '/v1/sessions', {})
    t.equal(started.status, 201)
    const id: string = started.body.id
    const nav = await rest('POST', `/v1/sessions/${id}/navigate`, { url: `data:text/html,<title>${pageCanary}</title><p>${pageCanary}</p>` })
    t.equal(nav.status, 200)
    t.equal((await rest('POST', `/v1/sessions/${id}/perceive`, {})).status, 200)
    const asked = await rest('POST', `/v1/sessions/${id}/request-human`, { reason: `solve the captcha ${reasonCanary}` })
    t.equal(asked.status, 200)
    t.equal((await rest('DELETE', `/v1/sessions/${id}`)).body.status, 'ended')
    await waitFor(() => of(id).length === 3, { what: 'three events of the session' })
    const events = of(id)
    t.same(events.map((p) => p.type), ['session.live', 'human.requested', 'session.ended'])
    t.ok(started.body.sandbox, `the session says what isolates it (${started.body.sandbox})`)
    t.same(events[0].data, { sessionId: id, agentId: acme.agentId, identityId: null, egress: started.body.egress, browserKind: 'chromium', sandbox: started.body.sandbox })
    t.same(events[1].data, { sessionId: id, agentId: acme.agentId, url: asked.body.url }, 'the live view’s URL, not the agent’s words')
    t.same(events[2].data, { sessionId: id, agentId: acme.agentId, reason: 'session_end' })
    const bodies = receiver.received.map((x) => x.body).join('\n')
    t.ok(!bodies.includes(pageCanary), 'no page content in a payload')
    t.ok(!bodies.includes(reasonCanary), 'no free text of the agent in a payload')
  })

  t.test('a killed browser pod: session.failed with the reason', async (t) => {
    const started = await rest('POST', '/v1/sessions', {})
    const id: string = started.body.id
    const pod = s.plane!.pods.processes().find((p) => p.sessionId === id)!
    process.kill(pod.pid!, 'SIGKILL')
    await waitFor(() => of(id).some((p) => p.type === 'session.failed'), { what: 'session.failed', timeoutMs: 20_000 })
    const failed = of(id).find((p) => p.type === 'session.failed')!
    const row = await rest('GET', `/v1/sessions/${id}`)
    t.equal(row.body.status, 'failed')
    t.same(failed.data, { sessionId: id, agentId: acme.agentId, reason: row.body.failureReason }, 'the reason the session shows')
    t.ok(row.body.failureReason, 'a reason is given')
  })

  t.test('the console: add an endpoint, its secret once, the delivery log with statuses', async (t) => {
    const browser = await launchTestBrowser(t)
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await signIn(s, ctx, acme.email, acme.password, '/console/webhooks')
    t.ok(await page.isVisible(`#webhook-${made.body.webhook.id}`), 'the endpoint made over REST is listed')
    const second = await startReceiver(t)
    second.answerWith(500)
    await page.fill('#webhook-url', second.url)
    await page.check('input[name=events][value="session.live"]')
    await page.fill('#webhook-description', 'from the console')
    await page.click('#webhook-create button[type=submit]')
    const shown = (await page.textContent('#webhook-secret'))!.trim()
    t.match(shown, /^whsec_/, 'the secret is shown on the answer')
    const id = await page.getAttribute('#webhook-create-card ~ .card tr[id^="webhook-"]:last-child', 'id')
    await page.goto(`${s.url}/console/webhooks`)
    t.notOk((await page.content()).includes(shown.slice(6)), 'and never again')

    const started = await rest('POST', '/v1/sessions', {})
    await rest('DELETE', `/v1/sessions/${started.body.id}`)
    await waitFor(() => second.received.length === 2, { what: 'a failed attempt and its retry', timeoutMs: 15_000 })
    t.ok(verifySignature(shown, String(second.received[1].headers['webhook-id']), String(second.received[1].headers['webhook-timestamp']), second.received[1].body,
      String(second.received[1].headers['webhook-signature'])), 'signed with the secret the page showed')
    await page.goto(`${s.url}/console/webhooks/${id!.slice('webhook-'.length)}`)
    const attempts = await waitFor(async () => {
      await page.reload()
      const text = (await page.textContent('#deliveries'))!
      return text.includes('delivered') && text
    }, { what: 'the log shows it delivered' })
    t.match(attempts, /HTTP 500[\s\S]*HTTP 204/, 'every attempt with its response status')
    t.match(attempts, /session\.live/)
  })
})
