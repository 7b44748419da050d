// The session inspector, in real Chromium: a session filmed and recorded (real Chromium in its
// pod, Debian's ffmpeg, the real API server and Postgres) loads a page with requests, logs to
// its console, answers a dialog, and a person takes control and hands it back. Live and after
// it ended, its inspector shows all of it on one timeline; a click on an event moves the video
// there, and while the video plays the event it reached is marked. A recorded-only session
// replays its rrweb recording in step the same way. The page is measured at 1,000 px and on a
// phone's width (and saved as PNGs, their paths printed); another org's member and an unknown
// id get the one 404.
import t from 'tap'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { signIn } from '../../helpers/console.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { waitFor } from '../../helpers/wait.ts'

const NOTES = 'data:text/html,' + encodeURIComponent(`<title>Notes</title><h1 style="font-size:64px">Notes</h1>
<script>console.log('inspector-note-1')</script><button id="ask" onclick="document.title = confirm('Go on?') ? 'yes' : 'no'">Ask</button>`)

interface Row { kind: string; title: string; detail: string; at: number; current: boolean; hidden: boolean | string }
const rows = (p: Page): Promise<Row[]> => p.$$eval('#timeline li', (lis) => lis.map((li) => ({
  kind: (li as HTMLElement).dataset.kind!, at: Number((li as HTMLElement).dataset.at),
  title: li.querySelector('.title')!.textContent!, detail: li.querySelector('.detail')!.textContent!,
  current: li.getAttribute('aria-current') === 'true', hidden: (li as HTMLElement).hidden,
})))

async function shoot(t: { comment(s: string): void }, p: Page, name: string): Promise<void> {
  const path = join(tmpdir(), `nightjar-inspector-${name}-${process.pid}.png`)
  await p.screenshot({ path, fullPage: true })
  t.comment(`screenshot: ${path}`)
}

/** where the two columns sit, and whether anything is wider than the window */
const layout = (p: Page) => p.evaluate(() => {
  // no named functions in here: the test's transpiler would wrap them in a helper the page lacks
  const [replay, timeline] = ['#replay-box', '#timeline'].map((sel) => {
    const r = document.querySelector(sel)!.closest('section')!.getBoundingClientRect()
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }
  })
  return { replay, timeline, overflow: document.documentElement.scrollWidth > window.innerWidth }
})

t.test('[ISSUE-51] the session inspector: one timeline beside the replay, in step, live and ended', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const rest = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.body
  }
  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 800 } })
  t.teardown(() => ctx.close())

  const id = (await rest('POST', '/v1/sessions', { record: true, video: { format: 'webm', fps: 5, width: 480 } })).id as string
  await rest('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/netlog-page.html' })
  await rest('POST', `/v1/sessions/${id}/wait-for`, { text: 'fetched 200 200 404' })
  await rest('POST', `/v1/sessions/${id}/navigate`, { url: NOTES })
  await rest('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#ask' })
  await rest('POST', `/v1/sessions/${id}/wait-for`, { text: 'Notes' })

  // a person takes control from the live page and hands it back
  const live = await signIn(s, ctx, acme.email, acme.password, `/console/sessions/${id}`)
  await live.click('#take')
  await waitFor(async () => (await live.getAttribute('#live', 'data-control')) === 'mine', { what: 'control to be mine' })
  await live.click('#hand-back')
  await waitFor(async () => (await live.getAttribute('#live', 'data-control')) === 'agent', { what: 'control handed back' })

  await t.test('live: the timeline reads the browser’s network and console now', async (t) => {
    await live.click('#inspect-link')
    await live.waitForURL((u) => u.pathname === `/console/sessions/${id}/inspect`)
    await live.waitForSelector('#inspector[data-state=ready]')
    t.match(await live.textContent('#trail-note'), /read from the live browser/)
    const kinds = new Set((await rows(live)).map((r) => r.kind))
    t.same([...kinds].sort(), ['call', 'console', 'dialog', 'navigation', 'person', 'request'], 'every kind of event is on it')
    t.equal(await live.getAttribute('#inspector', 'data-replay'), 'recording', 'a live session replays its recording (its video plays once it ends)')
  })

  await rest('DELETE', `/v1/sessions/${id}`)
  const page = await ctx.newPage()
  await page.goto(`${s.url}/console/sessions/${id}/inspect`)
  await page.waitForSelector('#inspector[data-state=ready]')

  await t.test('ended: the calls, the requests, the console, the dialog and the take-over, oldest first', async (t) => {
    t.match(await page.textContent('#trail-note'), /kept when the session ended/)
    const all = await rows(page)
    const find = (kind: string, title: RegExp) => all.findIndex((r) => r.kind === kind && title.test(r.title))
    const order = [
      find('call', /^session_start$/),
      find('navigation', /^navigate$/),
      find('navigation', /^GET http:\/\/example\.com\/netlog-page\.html$/),
      find('request', /^GET http:\/\/example\.com\/netlog-pixel\.png$/),
      find('console', /^console\.log$/),
      find('call', /^act$/),
      find('dialog', /^dialog$/),
      find('person', /^human_take_control$/),
      find('person', /^human_hand_back$/),
    ]
    t.notOk(order.includes(-1), `each is there (${JSON.stringify(order)})`)
    t.same([...order].sort((a, b) => a - b), order, 'in the order they happened')
    t.match(all.find((r) => r.title.endsWith('netlog-pixel.png'))!.detail, /404 · image/, 'a request says its status and type')
    t.ok(all.some((r) => r.kind === 'console' && r.detail.includes('inspector-note-1')), 'a console line says what was logged')
    t.match(all.find((r) => r.title === 'navigate')!.detail, /netlog-page\.html/, 'a call shows its arguments as journalled')
    t.same(all.map((r) => r.at), [...all.map((r) => r.at)].sort((a, b) => a - b), 'the timeline is in time order')

    // the kinds can be hidden and shown again
    await page.uncheck('#kinds input[value=request]')
    t.ok((await rows(page)).filter((r) => r.kind === 'request').every((r) => r.hidden), 'requests hidden')
    await page.check('#kinds input[value=request]')
    t.ok((await rows(page)).every((r) => !r.hidden), 'and shown again')
  })

  await t.test('a click on an event moves the video there; playing marks the event it reached', async (t) => {
    t.equal(await page.getAttribute('#inspector', 'data-replay'), 'video', 'an ended filmed session replays its video')
    await page.waitForFunction(() => (document.getElementById('replay-video') as HTMLVideoElement).readyState >= 1)
    const all = await rows(page)
    const target = all.findIndex((r) => r.kind === 'dialog')
    await page.click(`#timeline li[data-index="${target}"] button`)
    const at = Number(await page.getAttribute('#inspector', 'data-replay-at'))
    const seeked = await page.evaluate(() => (document.getElementById('replay-video') as HTMLVideoElement).currentTime * 1000)
    t.ok(at > 0, `the dialog came after the video began (${at} ms in)`)
    t.ok(Math.abs(seeked - at) < 50, `the video moved to it (${Math.round(seeked)} ms)`)
    t.ok((await rows(page))[target].current, 'and the event is marked')

    // back to the first event, then play from just before the take-over: the marked event follows the video
    await page.click('#timeline li[data-index="0"] button')
    const takeover = all.findIndex((r) => r.title === 'human_take_control')
    // the video's time 0 on the timeline's clock, from the seek above
    const videoBegan = all[target].at - at
    const firstAt = Number(await page.getAttribute('#inspector', 'data-replay-at'))
    const firstSeeked = await page.evaluate(() => (document.getElementById('replay-video') as HTMLVideoElement).currentTime * 1000)
    // an event from before the video began (the start call) goes to its first frame
    const firstExpected = Math.max(0, all[0].at - videoBegan)
    t.ok(Math.abs(firstAt - firstExpected) < 50 && Math.abs(firstSeeked - firstAt) < 50, `the first event moved the video to ${Math.round(firstSeeked)} ms (expected ${Math.round(firstExpected)} ms)`)
    // the take-over is this far into the video
    const takeoverMs = all[takeover].at - videoBegan
    await page.evaluate((ms) => { const v = document.getElementById('replay-video') as HTMLVideoElement; v.muted = true; v.currentTime = Math.max(0, ms - 300) / 1000; return v.play() }, takeoverMs)
    await page.waitForFunction((i) => Number(document.querySelector('#timeline li[aria-current=true]')?.getAttribute('data-index')) >= i, takeover)
    t.pass('the video reached the take-over and its event is marked')
    await page.evaluate(() => (document.getElementById('replay-video') as HTMLVideoElement).pause())
  })

  await t.test('at 1,000 px the replay and the timeline sit side by side; on a phone they stack, nothing wider than the screen', async (t) => {
    const wide = await layout(page)
    t.ok(wide.timeline.left >= wide.replay.right, 'side by side')
    t.notOk(wide.overflow, 'nothing wider than the window')
    await shoot(t, page, 'wide')
    await page.setViewportSize({ width: 390, height: 844 })
    const phone = await layout(page)
    t.ok(phone.timeline.top >= phone.replay.bottom, 'stacked on a phone')
    t.notOk(phone.overflow, 'nothing wider than the phone')
    t.ok(phone.replay.right <= 390 && phone.timeline.right <= 390, 'both fit its width')
    await shoot(t, page, 'phone')
    await page.setViewportSize({ width: 1000, height: 800 })
  })

  await t.test('a recorded session without video replays its recording in step', async (t) => {
    const rec = (await rest('POST', '/v1/sessions', { record: true })).id as string
    await rest('POST', `/v1/sessions/${rec}/navigate`, { url: 'http://example.com/netlog-page.html' })
    await rest('POST', `/v1/sessions/${rec}/wait-for`, { text: 'fetched 200 200 404' })
    await rest('POST', `/v1/sessions/${rec}/navigate`, { url: NOTES })
    await rest('DELETE', `/v1/sessions/${rec}`)
    const p = await ctx.newPage()
    await p.goto(`${s.url}/console/sessions/${rec}/inspect`)
    await p.waitForSelector('#inspector[data-state=ready]')
    t.equal(await p.getAttribute('#inspector', 'data-replay'), 'recording')
    const all = await rows(p)
    const second = all.findIndex((r, i) => r.title === 'navigate' && i > all.findIndex((x) => x.title === 'navigate'))
    await p.click(`#timeline li[data-index="${second}"] button`)
    const at = Number(await p.getAttribute('#inspector', 'data-replay-at'))
    t.ok(at > 0, 'the second navigation is after the recording began')
    // the replay is at that point: it draws the page the session had then (netlog-page, about to leave it)
    await waitFor(async () => (await p.frameLocator('#replay-player iframe').locator('body').textContent())?.includes('fetched') ?? false, { what: 'the replay at the second navigation' })
    t.pass('the replay shows the page the session was on at that moment')
  })

  await t.test('another org’s member and an unknown id: the one 404, page and timeline', async (t) => {
    const gctx = await browser.newContext()
    t.teardown(() => gctx.close())
    const gpage = await signIn(s, gctx, globex.email, globex.password, '/console/sessions')
    const foreign = await gpage.goto(`${s.url}/console/sessions/${id}/inspect`)
    t.equal(foreign?.status(), 404)
    const foreignJson = await gctx.request.get(`${s.url}/console/sessions/${id}/inspect/timeline.json`)
    const unknownJson = await gctx.request.get(`${s.url}/console/sessions/nses_unknown/inspect/timeline.json`)
    t.equal(foreignJson.status(), 404)
    t.equal(await foreignJson.text(), await unknownJson.text(), 'byte-identical to an unknown id')
  })
})
