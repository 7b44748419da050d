// What a person reads is what happens: the credential-request page and the OAuth consent
// page show what another party wrote, and neither may be dressed up. A long host cannot
// hide its registrable domain (measured in real Chromium at 1,000 px); a right-to-left
// override is refused in a client name or an agent's reason, and one stored before the
// rule cannot reorder the page; the credential-request form refuses a NUL as REST does.
// Each page is also saved as a PNG (its path printed) for a person to look at.
import t from 'tap'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { startTestServer } from '../../helpers/server.ts'
import { signIn } from '../../helpers/console.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { authorizeUrl, consoleLogin, hiddenFields, pkce } from '../oauth/helpers.ts'
import { validateClientMetadata } from '../../../api-server/oauth/clients.ts'
import { newId } from '../../../contracts/ids.ts'

const VIEWPORT = { width: 1000, height: 800 }
const LABEL = (c: string) => c.repeat(60)
/** the host: the part that decides where the password goes is at the very end */
const LONG_HOST = `accounts.google.com.${LABEL('a')}.${LABEL('b')}.${LABEL('c')}.evil.test`

/** A message as the page's HTML carries it */
const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** PNG width and height from its header */
const pngSize = (png: Buffer) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) })

async function screenshot(t: { comment(s: string): void }, page: Page, name: string) {
  const path = join(tmpdir(), `nightjar-issue40-${name}-${process.pid}.png`)
  const png = await page.screenshot({ path, fullPage: true })
  t.comment(`screenshot: ${path}`)
  return pngSize(png)
}

/**
 * The characters of an element's text in the order they are laid out on screen: grouped
 * into lines by their vertical position, each line read left to right.
 */
function visualOrder(page: Page, selector: string): Promise<{ logical: string; visual: string }> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel)!
    const chars: Array<{ c: string; x: number; top: number; bottom: number; i: number }> = []
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent ?? ''
      for (let i = 0; i < text.length; i++) {
        const r = document.createRange()
        r.setStart(n, i)
        r.setEnd(n, i + 1)
        const box = r.getBoundingClientRect()
        if (box.height > 0) chars.push({ c: text[i], x: box.left, top: box.top, bottom: box.bottom, i: chars.length })
      }
    }
    const logical = chars.map((ch) => ch.c).join('')
    // lines: a character whose middle is below the current line's bottom starts the next one
    const byHeight = [...chars].sort((a, b) => (a.top + a.bottom) - (b.top + b.bottom))
    const lines: Array<typeof chars> = []
    for (const ch of byHeight) {
      const line = lines.at(-1)
      if (line && (ch.top + ch.bottom) / 2 <= Math.max(...line.map((l) => l.bottom))) line.push(ch)
      else lines.push([ch])
    }
    const visual = lines.map((line) => line.sort((a, b) => a.x - b.x || a.i - b.i).map((ch) => ch.c).join('')).join('')
    return { logical, visual }
  }, selector)
}

t.test('what a person reads is what happens', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const ident = await rest('POST', '/v1/identities', { name: 'shop' })
  const mcp = async (name: string, args: unknown) => {
    const r = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    })
    return (await r.json()).result.structuredContent
  }
  const ask = (body: Record<string, unknown>) => rest('POST', '/v1/credential-requests', { identity: 'shop', credentialName: `c${Math.random().toString(36).slice(2, 8)}`, originAllowlist: ['login.example.com'], reason: 'sign in', ...body })

  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext({ viewport: VIEWPORT })
  t.teardown(() => ctx.close())
  const page = await signIn(s, ctx, acme.email, acme.password, '/console/identities')

  await t.test('[ISSUE-40 row 1] [FLD-09] a long host shows its registrable domain first, inside a 1,000 px viewport; unreasonable hosts are refused', async (t) => {
    // refused at request time, each with the limit it breaks
    const refusals: Array<[unknown[], string]> = [
      [[`${'a'.repeat(61)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.evil.test`], 'originAllowlist.0: must be at most 253 characters'],
      [['a.b.c.d.e.f.g.h.i.evil.test'], 'originAllowlist.0: must have at most 10 labels (dot-separated parts)'],
      [[`${'a'.repeat(64)}.evil.test`], 'originAllowlist.0: each label (dot-separated part) must be at most 63 characters'],
      [['evil\u202e.test'], 'originAllowlist.0: must not contain control, invisible or text-direction characters (found U+202E)'],
      [Array.from({ length: 21 }, (_, i) => `h${i}.example.com`), 'originAllowlist: must list at most 20 hosts'],
    ]
    for (const [hosts, rule] of refusals) {
      const r = await ask({ originAllowlist: hosts })
      t.same({ status: r.status, message: r.body.error.message }, { status: 400, message: `invalid request: ${rule}` }, rule)
    }
    const cred = await rest('POST', `/v1/identities/${ident.body.id}/credentials`, { name: 'deep', value: 'pw-1234567', originAllowlist: ['a.b.c.d.e.f.g.h.i.evil.test'] })
    t.equal(cred.body.error.message, 'invalid request: originAllowlist.0: must have at most 10 labels (dot-separated parts)', 'a credential’s allowlist has the same limits')

    // the request: twenty such hosts (the most a request may name), and a reason that names another site
    const hosts = [LONG_HOST, ...Array.from({ length: 19 }, (_, i) => `login${i}.accounts.google.com.${LABEL(String.fromCharCode(100 + (i % 20)))}.evil.test`)]
    const r = await ask({ originAllowlist: hosts, reason: 'Sign in to accounts.google.com' })
    t.equal(r.status, 201, 'a long but reasonable host is accepted')
    await page.goto(r.body.url)
    // (no named helper inside: the test loader would wrap it in a function the page does not have)
    const m = await page.evaluate(() => {
      const sites = [...document.querySelectorAll('#request-hosts .host-site')]
      const fulls = [...document.querySelectorAll('#request-hosts .host-full')] as HTMLElement[]
      const card = document.getElementById('credential-request')!.getBoundingClientRect()
      return {
        viewport: window.innerWidth,
        pageWidth: document.documentElement.scrollWidth,
        card: { left: card.left, right: card.right },
        sites: sites.map((e) => ({ text: e.textContent, left: e.getBoundingClientRect().left, right: e.getBoundingClientRect().right, size: parseFloat(getComputedStyle(e).fontSize), weight: getComputedStyle(e).fontWeight })),
        fulls: fulls.map((e) => ({ text: e.textContent, right: e.getBoundingClientRect().right, clipped: e.scrollWidth > e.clientWidth })),
        firstChild: document.querySelector('#request-hosts li .host')!.firstElementChild!.className,
      }
    })
    t.equal(m.viewport, 1000)
    t.ok(m.pageWidth <= m.viewport, `the page is no wider than the viewport (${m.pageWidth} px)`)
    t.equal(m.sites.length, 20)
    t.same([...new Set(m.sites.map((x) => x.text))], ['evil.test'], 'every host is shown as what it is: evil.test')
    t.equal(m.firstChild, 'host-site', 'the registrable domain comes first')
    t.ok(m.sites.every((x) => x.left >= m.card.left && x.right <= m.card.right && x.right <= m.viewport), 'each registrable domain’s box is inside the card and the viewport')
    t.ok(m.sites.every((x) => Number(x.weight) >= 700 && x.size >= 16), 'and prominent: bold, larger than the text around it')
    t.equal(m.fulls[0].text, LONG_HOST, 'the full host is there, whole')
    t.ok(m.fulls.every((x) => !x.clipped && x.right <= m.card.right), 'the full host wraps inside the card: never clipped or scrolled off')
    const shot = await screenshot(t, page, 'credential-request-long-hosts')
    t.equal(shot.width, 1000, 'the full-page screenshot is the viewport’s width')
  })

  await t.test('[ISSUE-40 row 2] a client name cannot reorder the consent page', async (t) => {
    const register = (client_name: string) => fetch(`${s.url}/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name, redirect_uris: ['http://127.0.0.1:33418/callback'] }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }))
    for (const [name, cp] of [['Claude Code \u202e', 'U+202E'], ['Claude\u2066 Code', 'U+2066'], ['Cla\u200bude', 'U+200B'], ['Claude\u0007', 'U+0007'], ['Claude\u0085', 'U+0085']]) {
      const r = await register(name)
      t.same(r, { status: 400, body: { error: 'invalid_client_metadata', error_description: `client_name must not contain control, invisible or text-direction characters (found ${cp})` } }, `registration refuses ${cp}`)
    }
    const documentRule = (() => {
      try {
        validateClientMetadata({ client_name: 'Claude Code \u202e', redirect_uris: ['http://127.0.0.1:1/cb'] })
        return 'accepted'
      } catch (e) {
        return (e as { error?: string }).error
      }
    })()
    t.equal(documentRule, 'invalid_client_metadata', 'a client metadata document is held to the same rule')
    t.equal((await register('Claude Code ✓ — عربي')).status, 201, 'letters of any script and symbols are fine')

    // a client stored before the rule: the page isolates the name and writes the override out
    const legacy = newId('ncli_')
    await s.testDb.db.query(
      `insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types, scope, created_at) values ($1, $2, $3, $4, $5, $6, now())`,
      [legacy, 'Claude Code \u202e', ['http://127.0.0.1:33418/callback'], ['authorization_code', 'refresh_token'], ['code'], 'sessions:write sessions:drive identities:read'],
    )
    await page.goto(s.url + authorizeUrl({ clientId: legacy, redirectUri: 'http://127.0.0.1:33418/callback', challenge: pkce().challenge }))
    t.equal(await page.textContent('#client-name'), 'Claude Code [U+202E]', 'the override is shown, not obeyed')
    const warning = await visualOrder(page, '#client-warning')
    t.equal(warning.logical, '(a self-registered application; its name is not verified)')
    t.equal(warning.visual, warning.logical, 'the warning’s characters are laid out in reading order')
    const sentence = await visualOrder(page, 'p:has(#client-name)')
    t.match(sentence.logical, /^Claude Code \[U\+202E\] \(a self-registered application; its name is not verified\) asks to act as an agent of /)
    t.equal(sentence.visual, sentence.logical, 'and so is the whole sentence: org, e-mail and workspace after it')
    await screenshot(t, page, 'consent-legacy-override')
  })

  await t.test('[ISSUE-40 row 3] an agent’s reason cannot reorder the credential-request page', async (t) => {
    const reason = '\u202eevil.com moc.elgoog\u202c please'
    const words = 'invalid request: reason: must not contain control, invisible or text-direction characters (found U+202E)'
    const viaRest = await ask({ reason })
    t.same({ status: viaRest.status, message: viaRest.body.error.message }, { status: 400, message: words }, 'REST refuses it')
    const viaMcp = await mcp('credential_request', { identity: 'shop', credentialName: 'x1', originAllowlist: ['login.example.com'], reason })
    t.same({ status: viaMcp.status, message: viaMcp.error.message }, { status: 400, message: words }, 'MCP refuses it with the same words')
    for (const [bad, cp] of [['please\u2067 sign in', 'U+2067'], ['sign\u200d in', 'U+200D'], ['line one\nline two', 'U+000A'], ['tab\there', 'U+0009']]) {
      const r = await ask({ reason: bad })
      t.equal(r.body.error?.message, `invalid request: reason: must not contain control, invisible or text-direction characters (found ${cp})`, `and ${cp}`)
    }
    const human = await rest('POST', '/v1/sessions/nsess_x/request-human', { reason })
    t.equal(human.body.error?.message, words, 'request_human’s reason too, before anything else')

    // a grant's reason typed in the console gets the API's refusal, word for word
    await page.goto(`${s.url}/console/identities/${ident.body.id}`)
    await page.fill('#grant-reason', 'ok\u202e reversed')
    await page.click('#grant-create button[type=submit]')
    t.equal((await page.textContent('#grants [role=alert]'))?.trim(), words, 'the console grant form: the same 400, the same words')

    // a request stored before the rule: the reason is isolated and its overrides written out
    const id = newId('ncreq_')
    await s.testDb.db.query(
      `insert into credential_requests (id, org_id, identity_id, credential_name, origin_allowlist, reason, requested_by, expires_at)
       values ($1, $2, $3, 'legacy', $4, $5, $6, now() + interval '10 minutes')`,
      [id, acme.orgId, ident.body.id, ['accounts.google.com'], reason, acme.agentId],
    )
    await page.goto(`${s.url}/console/credential-requests/${id}`)
    t.equal(await page.textContent('#request-reason'), '[U+202E]evil.com moc.elgoog[U+202C] please', 'the reason reads as the agent wrote it, its overrides shown')
    const order = await visualOrder(page, '#request-reason')
    t.equal(order.visual, order.logical, 'laid out in reading order')
    await screenshot(t, page, 'credential-request-legacy-reason')
  })

  await t.test('[ISSUE-40 row 4] [FLD-07] the credential-request form refuses what REST refuses, in its words, and the request stays open', async (t) => {
    const cookie = await consoleLogin(s, acme)
    const r = await ask({ credentialName: 'nul-test' })
    const path = new URL(r.body.url).pathname
    const open = async () => (await fetch(s.url + path, { headers: { cookie } })).status
    const post = async (fields: Record<string, string>) => {
      const form = await fetch(s.url + path, { headers: { cookie } })
      const { csrf } = hiddenFields(await form.text())
      const res = await fetch(s.url + path, {
        method: 'POST', redirect: 'manual',
        headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, ...fields }),
      })
      const text = await res.text()
      return { status: res.status, alert: /<p class="error" role="alert">([^<]*)<\/p>/.exec(text)?.[1] ?? '' }
    }
    const restSays = async (body: Record<string, unknown>) =>
      (await rest('POST', `/v1/identities/${ident.body.id}/credentials`, { name: 'rest-twin', originAllowlist: ['login.example.com'], ...body })).body.error.message
    const cases: Array<[string, Record<string, string>, Record<string, unknown>]> = [
      ['a NUL inside a short secret', { kind: 'password', value: 'a\u0000b' }, { kind: 'password', value: 'a\u0000b' }],
      ['a NUL at the end of a long one (a 500 before)', { kind: 'password', value: 'Zq12345\u0000' }, { kind: 'password', value: 'Zq12345\u0000' }],
      ['a secret over 4096 characters', { kind: 'password', value: 'x'.repeat(4097) }, { kind: 'password', value: 'x'.repeat(4097) }],
      ['an empty secret', { kind: 'password', value: '' }, { kind: 'password', value: '' }],
      ['a kind that does not exist', { kind: 'pin', value: 'pw-1234567' }, { kind: 'pin', value: 'pw-1234567' }],
    ]
    for (const [what, form, body] of cases) {
      const answered = await post(form)
      const expected = await restSays(body)
      t.same(answered, { status: 400, alert: escaped(expected) }, `${what}: 400 with REST’s message`)
      t.equal(await open(), 200, `${what}: the request is still open`)
    }
    const creds = await rest('GET', `/v1/identities/${ident.body.id}/credentials`)
    t.notOk(creds.body.some((c: { name: string }) => c.name === 'nul-test'), 'nothing was saved')
    const saved = await post({ kind: 'password', value: 'a-good-password-1' })
    t.equal(saved.status, 201, 'a good secret is saved')
    t.equal(await open(), 404, 'and the request is closed')

    // the API-key form is held to key_create's rules the same way
    const keyForm = async (name: string) => {
      const form = await fetch(`${s.url}/console/keys`, { headers: { cookie } })
      const { csrf } = hiddenFields(await form.text())
      const res = await fetch(`${s.url}/console/keys`, {
        method: 'POST', redirect: 'manual',
        headers: { cookie, origin: s.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, name, scopes: 'sessions:read' }),
      })
      return { status: res.status, alert: /<p class="error" role="alert">([^<]*)<\/p>/.exec(await res.text())?.[1] ?? '' }
    }
    for (const name of ['bot\u0000', 'bot \u202eevil', 'x'.repeat(81)]) {
      const viaRest = await rest('POST', '/v1/keys', { name, scopes: ['sessions:read'] })
      t.same(await keyForm(name), { status: 400, alert: escaped(viaRest.body.error.message) }, `the key form: ${JSON.stringify(name.slice(0, 12))} refused as REST refuses it`)
    }
  })
})
