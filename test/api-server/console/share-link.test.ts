// Share links for a session's live view, in real Chromium: a person makes a
// view-only link on the session page; a stranger's browser (no console session) opening it
// sees the session's frames and cannot take control; the link stops working once revoked,
// or once it has expired (an injected clock, no waiting); the token never appears in a
// request line, so never in the server's log.
import t from 'tap'
import type { Page } from 'playwright-core'
import { startTestServer } from '../../helpers/server.ts'
import { signIn } from '../../helpers/console.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { waitFor } from '../../helpers/wait.ts'


const frames = async (page: Page) => Number(await page.getAttribute('#live', 'data-frames'))
const state = async (page: Page) => page.getAttribute('#live', 'data-state')

t.test('a view-only share link: watch without signing in, until revoked or expired', async (t) => {
  let clock = Date.now()
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, now: () => clock, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const browser = await launchTestBrowser(t)
  const req = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const opened = await req('POST', '/v1/sessions', {})
  t.equal(opened.status, 201, opened.text)
  const sessionId = opened.body.id as string
  t.teardown(() => req('DELETE', `/v1/sessions/${sessionId}`))
  t.equal((await req('POST', `/v1/sessions/${sessionId}/navigate`, { url: 'http://example.com/index.html' })).status, 200)

  const person = await browser.newContext()
  t.teardown(() => person.close())
  const sessionPage = await signIn(s, person, acme.email, acme.password, `/console/sessions/${sessionId}`)
  const makeLink = async (ttl: string) => {
    await sessionPage.goto(`${s.url}/console/sessions/${sessionId}`)
    await sessionPage.selectOption('#share-ttl', ttl)
    await sessionPage.click('#share-create')
    return sessionPage.inputValue('#share-link')
  }
  const stranger = await browser.newContext()
  t.teardown(() => stranger.close())

  const link = await makeLink('60')
  t.match(link, new RegExp(`^${s.config.baseUrl}/console/share#njs_[0-9A-Za-z]{43}$`), 'the link carries its token in the fragment')
  const token = link.split('#')[1]

  await t.test('a stranger’s browser watches the session, view only', async (t) => {
    t.equal((await stranger.cookies()).length, 0, 'no console session in this browser')
    const view = await stranger.newPage()
    await view.goto(link)
    await waitFor(async () => (await frames(view)) > 0, { what: 'frames on the shared view', timeoutMs: 20_000 })
    t.equal(await state(view), 'live')
    t.notOk(await view.isVisible('#take'), 'there is no Take control')
    t.equal(await view.textContent('#url'), 'http://example.com/index.html', 'the page’s URL is shown')
    await view.close()
  })

  await t.test('the session page lists the link; revoking it stops a viewer within a second', async (t) => {
    const view = await stranger.newPage()
    await view.goto(link)
    await waitFor(async () => (await frames(view)) > 0, { what: 'frames before the revoke', timeoutMs: 20_000 })
    await sessionPage.goto(`${s.url}/console/sessions/${sessionId}`)
    t.equal(await sessionPage.locator('#shares tbody tr').count(), 1, 'one working link')
    t.notOk((await sessionPage.content()).includes(token), 'the session page never shows the token again')
    await sessionPage.click('#shares .revoke')
    await sessionPage.waitForURL((u) => u.pathname === `/console/sessions/${sessionId}`)
    t.ok(await sessionPage.isVisible('#no-shares'), 'no working links left')
    await waitFor(async () => (await state(view)) === 'link not working', { what: 'the open viewer to stop', timeoutMs: 10_000 })
    const again = await stranger.newPage()
    await again.goto(link)
    await waitFor(async () => (await state(again)) === 'link not working', { what: 'a new viewer refused', timeoutMs: 10_000 })
    t.equal(await frames(again), 0, 'no frame reached the revoked link')
  })

  await t.test('an expired link stops working', async (t) => {
    const short = await makeLink('15')
    const view = await stranger.newPage()
    await view.goto(short)
    await waitFor(async () => (await frames(view)) > 0, { what: 'frames before expiry', timeoutMs: 20_000 })
    clock += 16 * 60_000
    await waitFor(async () => (await state(view)) === 'link not working', { what: 'the viewer to stop at expiry', timeoutMs: 10_000 })
    const again = await stranger.newPage()
    await again.goto(short)
    await waitFor(async () => (await state(again)) === 'link not working', { what: 'the expired link refused', timeoutMs: 10_000 })
  })

  await t.test('a made-up token and a token of the right shape both read as a link that does not work', async (t) => {
    for (const bogus of ['nothing', `njs_${'A'.repeat(43)}`]) {
      const view = await stranger.newPage()
      await view.goto(`${s.url}/console/share#${bogus}`)
      await waitFor(async () => (await state(view)) === 'link not working', { what: 'a bogus link refused', timeoutMs: 10_000 })
      t.equal(await frames(view), 0)
    }
  })

  t.notOk(s.logs().includes(token), 'the token never reached the server’s log')
  const audit = (await s.testDb.db.query(`select action from audit_events where session_id = $1 and action like 'session.share_%' order by id`, [sessionId])).rows.map((r) => r.action)
  t.same(audit, ['session.share_created', 'session.share_revoked', 'session.share_created'], 'made and revoked links are audited')
})
