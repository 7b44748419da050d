// Field masking after a secure fill, in real Chromium: a secret filled
// into a text or email field renders as bullets from the fill onward — the computed style,
// the pixels of the screenshot tool, and perception all agree — and a page that rewrites
// or replaces the element gets it masked again before the next frame. The pod runs
// in-process so the test can drive its page directly; the page is served by a route on
// the pod's context (no network). Secrets are only ever compared with includes() or
// inside the page, never printed.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import type { ApiError } from '../../contracts/errors.ts'
import { perceive } from '../../browser-pod/perception/perceive.ts'
import { MASK } from '../../browser-pod/perception/redaction.ts'
import { fingerprints } from '../../browser-pod/secrets/field-mask.ts'
import { waitFor } from '../helpers/wait.ts'
import { startPagePod } from './harness.ts'

const CANARY = `Mask-S3cret-${randomBytes(4).toString('hex')}`
/** below the echo guard's minimum length: only perception's own redaction hides it */
const SHORT = 'k9!'
const HOST = 'mask.example'
const URL_ = `http://${HOST}/form.html`

const PAGE = `<!doctype html><html><head><title>mask</title><style>
  body { margin: 0; font: 16px monospace; background: #fff; color: #000 }
  input, textarea { display: block; margin: 8px; width: 420px; font: 16px monospace; padding: 4px; border: 1px solid #000; outline: none; caret-color: transparent }
  .plain { -webkit-text-security: none !important }
</style></head><body>
  <label>User <input id="user" type="text"></label>
  <label>Email <input id="email" type="email"></label>
  <label>Pin <input id="pin" type="text"></label>
  <label>Password <input id="pw" type="password"></label>
  <label>Notes <textarea id="notes"></textarea></label>
  <div id="slot"></div>
</body></html>`

t.test('a filled secret never renders', async (t) => {
  const { pod, client, logs } = await startPagePod(t, 'nsess_mask', HOST, PAGE)
  const page = () => pod.session.page
  const responses: string[] = []
  const open = async () => {
    await client.drive('navigate', { url: URL_ })
  }
  const fill = async (selector: string, secret = CANARY) => {
    const value = Buffer.from(secret)
    try {
      const r = await client.secureType({ selector, value, allowlist: [HOST] })
      responses.push(JSON.stringify(r))
      return r
    } catch (e) {
      responses.push(JSON.stringify({ ...(e as ApiError).toBody(), message: (e as Error).message }))
      throw e
    } finally {
      value.fill(0)
    }
  }
  /** the computed -webkit-text-security of the element `selector` names (never its value) */
  const security = (selector: string) => page().locator(selector).evaluate((el) => getComputedStyle(el).getPropertyValue('-webkit-text-security'))
  /** runs `script` in the page, then reads the style in the next animation frame, i.e. what the next paint shows */
  const afterScript = (script: string, selector: string) =>
    page().evaluate(
      ([s, sel]) => {
        new Function(s)()
        return new Promise<string>((resolve) =>
          requestAnimationFrame(() => resolve(getComputedStyle(document.querySelector(sel)!).getPropertyValue('-webkit-text-security'))),
        )
      },
      [script, selector] as [string, string],
    )
  const holds = (selector: string) => page().locator(selector).evaluate((el, c) => (el as HTMLInputElement).value === c, CANARY)
  const shot = async () => {
    const r = await client.drive('screenshot', {})
    responses.push(JSON.stringify(r))
    return Buffer.from(r.png, 'base64')
  }
  /** the screenshot tool on the one field */
  const fieldShot = async (selector: string) => {
    const r = await client.drive('screenshot', { selector })
    responses.push(JSON.stringify(r))
    return Buffer.from(r.png, 'base64')
  }

  // Taken before any fill (no watcher yet): the same page with the secret typed in plain text.
  await open()
  await client.drive('act', { verb: 'type', selector: '#user', text: CANARY })
  const plain = await shot()
  const plainField = await fieldShot('#user')

  t.test('a text and an email field render masked from the fill on, and perceive redacts them', async (t) => {
    await open()
    t.equal(await security('#user'), 'none', 'a text field is not masked before the fill')
    t.has(await fill('#email'), { ok: true, fieldKind: 'email', host: HOST })
    t.has(await fill('#user'), { ok: true, fieldKind: 'text', host: HOST })
    t.ok(await holds('#user'), 'the field holds the value')
    t.equal(await security('#user'), 'disc')
    t.equal(await security('#email'), 'disc')
    t.equal(await security('#pin'), 'none', 'a field that was not filled is left alone')

    // perception itself (below the pod API, whose echo guard masks the value too)
    const direct = await perceive(pod.session)
    t.notOk(JSON.stringify(direct).includes(CANARY), 'the snapshot and text carry no filled value')
    t.match(direct.snapshot, new RegExp(`- textbox "User" \\[ref=\\w+\\]: ${MASK}`))
    t.match(direct.snapshot, new RegExp(`- textbox "Email" \\[ref=\\w+\\]: ${MASK}`))
    // a value too short for the echo guard is still redacted as a textbox value
    t.has(await fill('#pin', SHORT), { ok: true, fieldKind: 'text', host: HOST })
    const seen = await client.drive('perceive', {})
    responses.push(JSON.stringify(seen))
    t.match(seen.snapshot, new RegExp(`- textbox "Pin" \\[ref=\\w+\\]: ${MASK}`))
    t.notOk(seen.snapshot.includes(`: ${SHORT}`), 'the short value is not shown')
    t.notOk(JSON.stringify(seen).includes(CANARY))
  })

  t.test('the screenshot tool, of the page or the field alone, shows bullets: pixel-equal to a masked string of the same length, unlike plain text', async (t) => {
    await open()
    await fill('#user')
    const masked = await shot()
    const maskedField = await fieldShot('#user')
    t.notOk(masked.toString('base64').includes(Buffer.from(CANARY).toString('base64')), 'no screenshot-derived text carries it')
    // the same page, the same field focused with the caret at the end, holding a known
    // string of the secret's length under the same mask: byte-for-byte the same PNG
    await open()
    await page().evaluate((n) => {
      const el = document.getElementById('user') as HTMLInputElement
      el.style.setProperty('-webkit-text-security', 'disc', 'important')
      el.value = 'x'.repeat(n)
      el.focus()
      el.setSelectionRange(n, n)
    }, CANARY.length)
    const reference = await shot()
    t.ok(masked.equals(reference), 'the filled field renders exactly as bullets do')
    t.notOk(masked.equals(plain), 'and not as the characters typed in plain text do')
    const referenceField = await fieldShot('#user')
    t.ok(maskedField.equals(referenceField), 'a screenshot of the field alone shows the same bullets')
    t.notOk(maskedField.equals(plainField), 'not the characters')
  })

  t.test('the mask comes back when the page rewrites the element, before the next frame', async (t) => {
    await open()
    await fill('#user')
    await fill('#pw')
    const rewrites: Array<[string, string, string]> = [
      ['the style attribute removed', `document.getElementById('user').removeAttribute('style')`, '#user'],
      ['the style rewritten', `document.getElementById('user').style.cssText = '-webkit-text-security: none'`, '#user'],
      ['a class unmasking it, style dropped', `const u = document.getElementById('user'); u.removeAttribute('style'); u.className = 'plain'`, '#user'],
      ['the type switched', `const u = document.getElementById('user'); u.type = 'search'; u.removeAttribute('style')`, '#user'],
      ['a password field switched to text ("show password")', `const p = document.getElementById('pw'); p.type = 'text'; p.removeAttribute('style')`, '#pw'],
      [
        'the element replaced by a new one holding the value',
        `const o = document.getElementById('user'); const n = document.createElement('input'); n.id = 'user'; n.value = o.value; o.replaceWith(n)`,
        '#user',
      ],
      [
        'a re-render through innerHTML, the value set right after',
        `const v = document.getElementById('user').value; const s = document.getElementById('slot'); s.innerHTML = '<label>Again <input id="again"></label>'; document.getElementById('again').value = v`,
        '#again',
      ],
      [
        'a new textarea holding the value',
        `const t = document.createElement('textarea'); t.id = 'notes2'; t.value = document.getElementById('user').value; document.getElementById('slot').append(t)`,
        '#notes2',
      ],
    ]
    for (const [what, script, selector] of rewrites) {
      t.equal(await afterScript(script, selector), 'disc', `${what}: masked in the next frame`)
      await waitFor(async () => (await security(selector)) === 'disc', { what })
      t.pass(`${what}: masked`)
    }
    t.ok(await holds('#again'), 'the re-rendered field does hold the value')
    const seen = await perceive(pod.session)
    t.notOk(JSON.stringify(seen).includes(CANARY), 'perceive redacts every field holding it')
    t.equal(await afterScript(`document.getElementById('pin').value = 'visible'`, '#pin'), 'none', 'other values are not masked')
  })

  t.test('a later document of the same tab holding the value renders masked too', async (t) => {
    await open()
    await fill('#user')
    await page().evaluate((c) => {
      // a server re-rendering the form with the username filled in
      document.open()
      document.write(`<title>again</title><input id="user" aria-label="User" value="${c}">`)
      document.close()
    }, CANARY)
    await waitFor(async () => (await security('#user')) === 'disc', { what: 're-rendered document' })
    t.pass('masked')
    await client.drive('navigate', { url: `http://${HOST}/other.html` })
    await page().evaluate((c) => {
      const el = document.createElement('input')
      el.id = 'late'
      el.value = c
      document.body.append(el)
    }, CANARY)
    await waitFor(async () => (await security('#late')) === 'disc', { what: 'a new document' })
    t.pass('a field holding it in a new document is masked')
  })

  t.test('the fingerprints carry no plaintext', async (t) => {
    const json = JSON.stringify(fingerprints(Buffer.from(CANARY)))
    t.notOk(json.includes(CANARY), 'no secret in the watcher’s parameters')
    t.notOk(json.includes('S3cret'), 'not even a part of it')
  })

  t.test('the secret appears in no response, screenshot text or log line', async (t) => {
    const b64 = Buffer.from(CANARY).toString('base64')
    t.ok(responses.length >= 8)
    t.ok(responses.every((r) => !r.includes(CANARY) && !r.includes(b64)), 'no response carries the value')
    t.ok(logs.every((l) => !l.includes(CANARY) && !l.includes(b64)), 'no log line carries the value')
    const console = await client.drive('console_messages', {})
    t.notOk(JSON.stringify(console).includes(CANARY))
  })
})
