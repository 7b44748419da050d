// The secure fill at the pod, with real Chromium and real hostnames (the "public web"
// namespace behind hostAliases). The pod runs in-process so the test can read the
// field back with a page evaluate — comparing in the page and returning a boolean, so
// the value never appears in test output.
import t from 'tap'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import type { ApiError } from '../../contracts/errors.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { fillElement } from '../../browser-pod/secrets/secure-fill.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { newToken, publicAliases, inProcessSandbox } from './harness.ts'
import { waitFor } from '../helpers/wait.ts'

const CANARY = 'Canary-S3cret-7f1d9'

t.test('secure fill at the pod', async (t) => {
  const web = await startPublicWeb(t)
  const logs: string[] = []
  const token = newToken()
  const pod = await startPod({ token, hostAliases: publicAliases(web.ip), log: (l) => logs.push(l), sandbox: inProcessSandbox() })
  t.teardown(() => pod.close())
  const client = new PodClient(pod.endpoint, token)
  t.teardown(() => client.close())
  await client.configure({ sessionId: 'nsess_fill', egress: { mode: 'platform', declaredHosts: [] } })
  const page = () => pod.session.page
  const responses: string[] = []

  const fill = async (selector: string, allowlist: string[]) => {
    const value = Buffer.from(CANARY)
    try {
      const r = await client.secureType({ selector, value, allowlist })
      responses.push(JSON.stringify(r))
      return r
    } catch (e) {
      responses.push(JSON.stringify({ ...(e as ApiError).toBody(), message: (e as Error).message }))
      throw e
    } finally {
      value.fill(0)
    }
  }
  const refusal = async (selector: string, allowlist: string[]): Promise<ApiError> => {
    try {
      await fill(selector, allowlist)
    } catch (e) {
      return e as ApiError
    }
    throw new Error('expected a refusal')
  }
  /** true when the field holds the canary (compared inside the page) */
  const holdsCanary = (selector: string, frameSel?: string) =>
    (frameSel ? page().frameLocator(frameSel).locator(selector) : page().locator(selector)).evaluate(
      (el, c) => (el as HTMLInputElement).value === c || el.textContent === c,
      CANARY,
    )
  /** the element's computed -webkit-text-security: 'disc' once the fill masked it (field-mask.ts) */
  const security = (selector: string, frameSel?: string) =>
    (frameSel ? page().frameLocator(frameSel).locator(selector) : page().locator(selector)).evaluate((el) =>
      getComputedStyle(el).getPropertyValue('-webkit-text-security'),
    )
  const isEmpty = (selector: string, frameSel?: string) =>
    (frameSel ? page().frameLocator(frameSel).locator(selector) : page().locator(selector)).evaluate((el) => (el as HTMLInputElement).value === '')

  t.test('[RULE-05] types into a password field on an allowed origin', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/login.html' })
    const r = await fill('#pw', ['example.com'])
    t.same(r, { ok: true, fieldKind: 'password', host: 'example.com' })
    t.ok(await holdsCanary('#pw'), 'the field holds the value')
    t.equal(await page().locator('#inputs').textContent(), '1', 'the page saw an input event, like typing')
    const seen = await client.drive('perceive', {})
    t.ok(!JSON.stringify(seen).includes(CANARY), 'perception never shows it')
  })

  t.test('[RULE-05] subdomains match at a dot boundary; other editable kinds work', async (t) => {
    await client.drive('navigate', { url: 'http://login.example.com/login.html' })
    t.same(await fill('#pw', ['example.com']), { ok: true, fieldKind: 'password', host: 'login.example.com' })
    t.same(await fill('#user', ['example.com']), { ok: true, fieldKind: 'text', host: 'login.example.com' })
    await client.drive('act', { verb: 'type', selector: '#email', text: 'previous@example.com' })
    t.same(await fill('#email', ['example.com']), { ok: true, fieldKind: 'email', host: 'login.example.com' })
    t.ok(await holdsCanary('#email'), 'previous content replaced')
    t.same(await fill('#shadow-host #shadow-pw', ['example.com']), { ok: true, fieldKind: 'password', host: 'login.example.com' })
    t.ok(await holdsCanary('#shadow-host #shadow-pw'), 'a field inside a shadow root')
    t.same(await fill('#notes', ['example.com']), { ok: true, fieldKind: 'textarea', host: 'login.example.com' })
    t.same(await fill('#editable', ['example.com']), { ok: true, fieldKind: 'contenteditable', host: 'login.example.com' })
    t.ok(await holdsCanary('#notes'))
    t.ok(await holdsCanary('#editable'), 'contenteditable content replaced, not appended')
    for (const sel of ['#user', '#email', '#notes', '#editable', '#shadow-host #shadow-pw']) {
      t.equal(await security(sel), 'disc', `${sel} renders masked after the fill`)
    }
    t.equal(await security('#disabled'), 'none', 'a field that was not filled is left alone')
    const seen = await client.drive('perceive', {})
    t.notOk(JSON.stringify(seen).includes(CANARY), 'perception never shows it')
    t.match(seen.snapshot, /- textbox "Username" \[ref=\w+\]: ••••••••/)
  })

  t.test('[ERR-11] [EV-03] a redirect from an allowed host to a foreign host is refused', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/redirect?to=http://evil-example.com/login.html' })
    t.equal(page().url(), 'http://evil-example.com/login.html')
    const e = await refusal('#pw', ['example.com'])
    t.equal(e.status, 403)
    t.equal(e.code, 'forbidden')
    t.equal(e.reason, 'credential.origin_denied')
    t.equal(e.message, 'origin not on the credential allowlist')
    t.same(e.details, { host: 'evil-example.com' })
    t.ok(await isEmpty('#pw'), 'nothing was typed')
  })

  t.test('[RULE-05] [ERR-11] a lookalike host does not match the allowlist', async (t) => {
    await client.drive('navigate', { url: 'http://evil-example.com/login.html' })
    const e = await refusal('#pw', ['example.com'])
    t.equal(e.reason, 'credential.origin_denied')
    t.same(e.details, { host: 'evil-example.com' })
    t.ok(await isEmpty('#pw'))
  })

  t.test('[ERR-11] a port-pinned allowlist entry does not cover another port', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/login.html' })
    const e = await refusal('#pw', ['example.com:8443'])
    t.equal(e.reason, 'credential.origin_denied')
    t.same(await fill('#pw', ['example.com:80']), { ok: true, fieldKind: 'password', host: 'example.com' })
  })

  t.test('[ERR-12] [EV-04] non-editable targets are refused with their field kind', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/login.html' })
    const cases: Array<[string, string]> = [
      ['#submit', 'button'],
      ['#remember', 'checkbox'],
      ['#submit-input', 'submit'],
      ['#choice', 'select'],
      ['#disabled', 'disabled'],
      ['h1', 'h1'],
    ]
    for (const [selector, kind] of cases) {
      const e = await refusal(selector, ['example.com'])
      t.equal(e.status, 403, selector)
      t.equal(e.code, 'forbidden')
      t.equal(e.reason, 'credential.field_denied')
      t.equal(e.message, 'target is not an editable field')
      t.same(e.details, { field_kind: kind }, selector)
    }
    t.ok(await page().locator('#remember').evaluate((el) => !(el as HTMLInputElement).checked), 'the checkbox was not touched')
  })

  t.test('[ERR-11] a foreign-origin iframe inside an allowed page is judged as itself', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/frame-foreign.html' })
    await page().frameLocator('#login-frame').locator('#pw').waitFor()
    const e = await refusal('#login-frame >> internal:control=enter-frame >> #pw', ['example.com'])
    t.equal(e.reason, 'credential.origin_denied')
    t.same(e.details, { host: 'evil-example.com' })
    t.ok(await isEmpty('#pw', '#login-frame'), 'nothing typed into the frame')
  })

  t.test('[RULE-05] an allowed iframe is allowed even when the page around it is not', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/frame-sub.html' })
    await page().frameLocator('#login-frame').locator('#pw').waitFor()
    const r = await fill('#login-frame >> internal:control=enter-frame >> #pw', ['login.example.com'])
    t.same(r, { ok: true, fieldKind: 'password', host: 'login.example.com' })
    t.ok(await holdsCanary('#pw', '#login-frame'))
    t.same(await fill('#login-frame >> internal:control=enter-frame >> #user', ['login.example.com']), { ok: true, fieldKind: 'text', host: 'login.example.com' })
    t.equal(await security('#user', '#login-frame'), 'disc', 'a field in a same-site frame renders masked')
  })

  t.test('a cross-site login frame (its own renderer process) is masked in that frame', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/frame-foreign.html' })
    await page().frameLocator('#login-frame').locator('#user').waitFor()
    const r = await fill('#login-frame >> internal:control=enter-frame >> #user', ['evil-example.com'])
    t.same(r, { ok: true, fieldKind: 'text', host: 'evil-example.com' })
    t.ok(await holdsCanary('#user', '#login-frame'))
    t.equal(await security('#user', '#login-frame'), 'disc', 'renders masked')
    // the frame's page rewrites the element: masked again (the watcher lives in the frame's own target)
    await page().frameLocator('#login-frame').locator('#user').evaluate((el) => el.removeAttribute('style'))
    await waitFor(async () => (await security('#user', '#login-frame')) === 'disc', { what: 'the mask back in the frame' })
    t.pass('re-masked after the page removed the style')
  })

  t.test('a document that navigated away after the lookup gets nothing', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/login.html' })
    const handle = await page().locator('#pw').elementHandle()
    await client.drive('navigate', { url: 'http://evil-example.com/login.html' })
    const value = Buffer.from(CANARY)
    const e = await fillElement(handle!, ['example.com', 'evil-example.com'], value).then(
      () => null,
      (err: ApiError) => err,
    )
    value.fill(0)
    t.ok(e, 'refused')
    t.equal(e?.status, 409)
    t.equal(e?.reason, 'fill_navigated')
    t.ok(await isEmpty('#pw'), 'the new document got nothing')
  })

  t.test('refusal paths: missing target, ambiguous selector, bad requests', async (t) => {
    await client.drive('navigate', { url: 'http://example.com/login.html' })
    const missing = await client.secureType({ selector: '#nope', value: Buffer.from('x'), allowlist: ['example.com'], timeoutMs: 200 }).catch((e) => e)
    t.equal(missing.status, 504)
    const ambiguous = await client.secureType({ selector: 'input', value: Buffer.from('x'), allowlist: ['example.com'] }).catch((e) => e)
    t.equal(ambiguous.status, 400)
    t.equal(ambiguous.reason, 'ambiguous_selector')
    const empty = await refusal('#pw', [])
    t.equal(empty.reason, 'credential.origin_denied', 'an empty allowlist allows nothing')
    // requireEditableField must be literally true
    const res = await fetch(pod.endpoint + '/v1/secure_type', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ selector: '#pw', value: Buffer.from(CANARY).toString('base64'), allowlist: ['example.com'], requireEditableField: false }),
    })
    const body = await res.text()
    t.equal(res.status, 400)
    t.ok(!body.includes(CANARY) && !body.includes(Buffer.from(CANARY).toString('base64')), 'the error does not echo the value')
  })

  t.test('the value appears in no response and no log line', async (t) => {
    const b64 = Buffer.from(CANARY).toString('base64')
    t.ok(responses.length >= 10)
    t.ok(responses.every((r) => !r.includes(CANARY) && !r.includes(b64)), 'no response carries the value')
    t.ok(logs.every((l) => !l.includes(CANARY) && !l.includes(b64)), 'no log line carries the value')
    const console = await client.drive('console_messages', {})
    t.ok(!JSON.stringify(console).includes(CANARY))
  })
})
