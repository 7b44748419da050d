// The console's Webhooks pages in real Chromium: a description is another party's text —
// the form refuses a text-direction character in the API's words, and one stored before
// the rule is shown isolated with the character written out; an endpoint disabled after
// failing is announced on the list and its own page, and its Enable button sends the
// delivery that waited.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { signIn } from '../../helpers/console.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { waitFor } from '../../helpers/wait.ts'
import { switchableReceiver } from '../../helpers/webhook-receiver.ts'

t.test('the console’s webhooks pages', async (t) => {
  // one failed attempt disables an endpoint here, so the page shows it without waiting a day
  const s = await startTestServer(t, { env: {
    NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', NIGHTJAR_WEBHOOK_RETRY_SECONDS: '1,1,1',
    NIGHTJAR_WEBHOOK_DISABLE_AFTER_FAILURES: '1', NIGHTJAR_WEBHOOK_DISABLE_AFTER_SECONDS: '0',
  } })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const page = await signIn(s, ctx, acme.email, acme.password, '/console/webhooks')

  t.test('a description with a right-to-left override is refused, and one stored before the rule is shown isolated', async (t) => {
    await page.fill('#webhook-url', 'https://example.com/described')
    await page.check('input[name=events][value="session.live"]')
    await page.fill('#webhook-description', 'abc\u202Eevil')
    await page.click('#webhook-create button[type=submit]')
    const refused = await rest('POST', '/v1/webhooks', { url: 'https://example.com/described', events: ['session.live'], description: 'abc\u202Eevil' })
    t.equal(refused.status, 400)
    t.equal((await page.textContent('[role=alert]'))!.trim(), refused.body.error.message, 'the API’s words')
    t.equal((await rest('GET', '/v1/webhooks')).body.length, 0, 'nothing registered')

    const made = await rest('POST', '/v1/webhooks', { url: 'https://example.com/billing', events: ['session.live'], description: 'billing' })
    const id: string = made.body.webhook.id
    await s.testDb.db.query('update webhook_endpoints set description = $2 where id = $1', [id, 'abc\u202Eevil\u2066x\u2069\u200B'])
    await page.goto(`${s.url}/console/webhooks`)
    const shown = 'abc[U+202E]evil[U+2066]x[U+2069][U+200B]'
    t.equal(await page.$eval(`#webhook-${id} .webhook-description > *`, (el) => el.tagName), 'BDI', 'the list isolates it')
    t.equal(await page.textContent(`#webhook-${id} .webhook-description bdi`), shown, 'each hidden character written out')
    await page.goto(`${s.url}/console/webhooks/${id}`)
    t.equal(await page.$eval('#webhook-description > *', (el) => el.tagName), 'BDI', 'its own page isolates it')
    t.equal(await page.textContent('#webhook-description bdi'), shown)
    await rest('DELETE', `/v1/webhooks/${id}`)
  })

  t.test('an endpoint disabled after failing is announced, and its Enable button sends the delivery that waited', async (t) => {
    const failing = await switchableReceiver(t, 500)
    const made = await rest('POST', '/v1/webhooks', { url: failing.url, events: ['credential_request.created'] })
    const id: string = made.body.webhook.id
    const ident = await rest('POST', '/v1/identities', { name: 'shop' })
    const asked = await rest('POST', '/v1/credential-requests', { identity: ident.body.id, credentialName: 'login', originAllowlist: ['shop.example.com'], reason: 'sign in' })
    await waitFor(async () => (await rest('GET', '/v1/webhooks')).body[0]?.disabled, { what: 'the endpoint disabled' })

    await page.goto(`${s.url}/console/webhooks`)
    t.match(await page.textContent('#webhooks-disabled-notice'), /One endpoint was disabled after failing/, 'the list says so up front')
    t.equal(await page.getAttribute('#webhooks-disabled-notice a', 'href'), `/console/webhooks/${id}`)
    t.equal((await page.textContent(`#webhook-${id} .webhook-disabled`))!.trim(), 'disabled')
    await page.click('#webhooks-disabled-notice a')
    await page.waitForURL((u) => u.pathname === `/console/webhooks/${id}`)
    t.match(await page.textContent('#webhook-disabled'), /Disabled since .*: its last 1 attempts failed/, 'its page says since when and why')
    t.equal(failing.received.length, 1, 'one attempt, then nothing')

    failing.status.code = 204
    await page.click('#webhook-enable button[type=submit]')
    t.match(await page.textContent('[role=status]'), /Webhook enabled/)
    t.notOk(await page.isVisible('#webhook-disabled'), 'no longer announced')
    t.equal((await rest('GET', '/v1/webhooks')).body[0].disabled, null, 'enabled for REST too')
    await waitFor(() => failing.received.length === 2, { what: 'the delivery that waited' })
    t.ok(failing.received[1].includes(asked.body.id), 'the waiting delivery is the one sent')
    await page.goto(`${s.url}/console/webhooks`)
    t.notOk(await page.isVisible('#webhooks-disabled-notice'), 'the list has nothing to announce')
  })
})
