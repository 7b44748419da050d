// Session recordings, end to end: real Chromium, the "public web"
// namespace, the real API server. A session started with record: true navigates, clicks,
// has a credential filled into a password field and a text field, and has a page copy the
// secret into its title; its recording lists and downloads over REST, the console lists it
// and replays it to the end in a real Chromium page (rrweb's Replayer `finish`), and the
// timeline holds neither the secret nor its common encodings. Another org's session, an
// unknown id and a session not recorded answer the same 404 byte for byte.
// Canary values are only ever checked with includes(), never printed.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import type { BrowserContext, Page } from 'playwright-core'
import { startTestServer, type Reply, type TestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'

const CORE = randomBytes(6).toString('hex')
const CANARY = `Rec&${CORE} "x"/+`
const FORMS: Array<[string, string]> = [
  ['raw', CANARY],
  ['its random core', CORE],
  ['URL-encoded', encodeURIComponent(CANARY)],
  ['form-encoded', new URLSearchParams({ p: CANARY }).toString().slice(2)],
  ['JSON-escaped', JSON.stringify(CANARY).slice(1, -1)],
  ['HTML-escaped', CANARY.replace(/&/g, '&amp;').replace(/"/g, '&quot;')],
  ['base64', Buffer.from(CANARY).toString('base64').replace(/=+$/, '')],
  ['base64url', Buffer.from(CANARY).toString('base64url')],
]
const hits = (text: string) => FORMS.filter(([, f]) => text.includes(f)).map(([name]) => name)

async function signIn(s: TestServer, ctx: BrowserContext, email: string, password: string, path: string): Promise<Page> {
  const page = await ctx.newPage()
  await page.goto(`${s.url}${path}`)
  await page.fill('#email', email)
  await page.fill('#password', password)
  await page.click('button[type=submit]')
  await page.waitForURL((u) => u.pathname === path)
  return page
}

t.test('session recordings', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const replies: string[] = []
  const req = async (method: string, path: string, body?: unknown, token = acme.apiKey): Promise<Reply> => {
    const r = await s.request(method, path, { token, body })
    replies.push(r.text)
    return r
  }
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await req(method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${hits(r.text).length ? '(reply withheld)' : r.text}`)
    return r.body
  }
  const persona = await createPersona(s, acme.apiKey, { name: 'recorded', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })

  const started = await req('POST', '/v1/sessions', { identity: persona.identityId, record: true })
  t.equal(started.status, 201, 'a recorded session starts')
  const id = started.body.id as string
  t.teardown(() => s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey }))

  // drive: a page, a click that changes it, a fill into a password and a text field, a page echoing the secret
  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/index.html' })
  await ok('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#go' })
  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
  const pw = await ok('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
  t.equal(pw.fieldKind, 'password')
  const text = await ok('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#user' })
  t.equal(text.fieldKind, 'text')
  await ok('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#submit' })
  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/echo-title.html' })
  await ok('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
  await ok('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#go' })
  // a page with a custom element (the recorder cannot read the registry from its isolated world)
  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'data:text/html,' + encodeURIComponent('<title>Cards</title><x-card>A card</x-card><article>Plain</article><script>customElements.define("x-card", class extends HTMLElement {})</script>') })

  // awaited: the DELETE below must not run until the live checks are done
  await t.test('a live session’s recording is listed, and downloads up to now', async (t) => {
    const meta = await ok('GET', `/v1/sessions/${id}/recording`)
    t.equal(meta.sessionId, id)
    t.equal(meta.format, 'rrweb')
    t.equal(meta.endedAt, null, 'still recording')
    t.equal(meta.eventsUrl, `${s.url}/v1/sessions/${id}/recording/events`)
    const live = await ok('GET', `/v1/sessions/${id}/recording/events`)
    t.ok(live.events.length > 2, 'events were read from the pod while the session runs')
  })

  await ok('DELETE', `/v1/sessions/${id}`)

  let events: any[] = []
  t.test('the ended recording lists and downloads', async (t) => {
    const meta = await ok('GET', `/v1/sessions/${id}/recording`)
    t.type(meta.endedAt, 'string', 'closed when the session ended')
    t.ok(meta.bytes > 0)
    t.equal(meta.dropped, 0)
    const body = await ok('GET', `/v1/sessions/${id}/recording/events`)
    events = body.events
    t.equal(meta.events, events.length, 'the metadata counts what downloads')
    t.ok(events.some((e) => e.type === 4 && String(e.data?.href).startsWith('http://example.com/index.html')), 'a meta event for the first page')
    t.ok(events.some((e) => e.type === 4 && String(e.data?.href).startsWith('http://login.example.com/fill-check.html')), 'and for the login page')
    t.equal(events.filter((e) => e.type === 2).length >= 3, true, 'a full snapshot per document')
    const json = JSON.stringify(events)
    t.ok(json.includes('clicked'), 'the click’s effect on the page is in the timeline')
    t.ok(json.includes('Fill check'), 'the login page is in the timeline')
    t.ok(events.some((e) => e.type === 3 && e.data?.source === 5), 'input events are recorded (masked)')
    const nodes: any[] = []
    const walk = (n: any) => { nodes.push(n); for (const c of n.childNodes ?? []) walk(c) }
    for (const e of events) if (e.type === 2) walk(e.data.node)
    t.equal(nodes.find((n) => n.tagName === 'x-card')?.isCustom, true, 'a custom element is recorded as one, so the replay can define it')
    t.notOk(nodes.find((n) => n.tagName === 'article')?.isCustom, 'a built-in element is not')
  })

  t.test('canary: the secret filled into a password and a text field is nowhere in the recording', async (t) => {
    const json = JSON.stringify(events)
    t.same(hits(json), [], 'no form of the secret in the downloaded timeline')
    const raw = (await req('GET', `/v1/sessions/${id}/recording/events`)).text
    t.same(hits(raw), [], 'nor in the reply as sent')
    t.ok(json.includes('••••••••'), 'the title the page set from the secret is masked by the echo guard')
    t.same(hits(replies.join('\n')), [], 'no reply of this test carried it')
    t.same(hits(s.logs()), [], 'nor the server log')
  })

  t.test('another org, an unknown id and a session not recorded: the same 404, byte for byte', async (t) => {
    const plain = await req('POST', '/v1/sessions', {})
    t.equal(plain.status, 201)
    await req('DELETE', `/v1/sessions/${plain.body.id}`)
    const unknown = 'nsess_' + 'Z'.repeat(22)
    for (const suffix of ['recording', 'recording/events']) {
      const foreign = await req('GET', `/v1/sessions/${id}/${suffix}`, undefined, globex.apiKey)
      const missing = await req('GET', `/v1/sessions/${unknown}/${suffix}`)
      const notRecorded = await req('GET', `/v1/sessions/${plain.body.id}/${suffix}`)
      t.equal(foreign.status, 404)
      t.equal(foreign.text, missing.text, `${suffix}: cross-org is the unknown id’s 404`)
      t.equal(notRecorded.text, missing.text, `${suffix}: not recorded is the same 404`)
    }
  })

  t.test('the console lists the recording and replays it to the end', async (t) => {
    const browser = await launchTestBrowser(t)
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const sessions = await signIn(s, ctx, acme.email, acme.password, '/console/sessions')
    await sessions.click('#recordings-link')
    await sessions.waitForURL((u) => u.pathname === '/console/recordings')
    t.ok(await sessions.isVisible(`#recording-${id}`), 'listed')
    await sessions.click(`#recording-${id} a:not(.inspect)`)
    await sessions.waitForURL((u) => u.pathname === `/console/sessions/${id}/recording`)
    const page = await ctx.newPage()
    await page.goto(`${s.url}/console/sessions/${id}/recording?speed=64`)
    await page.waitForSelector('#replay[data-state="finished"]', { timeout: 60_000 })
    t.equal(await page.getAttribute('#replay', 'data-count'), String(events.length), 'the replay played every event')
    const frame = page.frameLocator('#player iframe')
    t.equal((await frame.locator('x-card').textContent())?.trim(), 'A card', 'the last page is drawn, its custom element too')
    const drawn = await page.frames().find((f) => f !== page.mainFrame())?.content()
    t.same(hits(drawn ?? ''), [], 'the replayed DOM holds no form of the secret')
    const otherCtx = await browser.newContext()
    t.teardown(() => otherCtx.close())
    const foreign = await signIn(s, otherCtx, globex.email, globex.password, '/console/sessions')
    const r = await foreign.goto(`${s.url}/console/sessions/${id}/recording`)
    t.equal(r?.status(), 404, 'another org’s person gets the 404')
    const ev = await foreign.goto(`${s.url}/console/sessions/${id}/recording/events.json`)
    t.equal(ev?.status(), 404)
  })
})
