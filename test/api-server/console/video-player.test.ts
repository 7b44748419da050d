// The console's video player, in real Chromium: a session filmed as video (real Chromium in
// its pod, Debian's ffmpeg, the real API server and Postgres) ends; its owner's console
// lists it, plays it in the page's <video> element (the browser decodes its VP9 and seeks
// it by ranges) and can download it; another org's member gets the one 404 for it, and a
// session without a video gives the same.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { signIn } from '../../helpers/console.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'

const PAGE = (n: number) => 'data:text/html,' + encodeURIComponent(`<title>Scene ${n}</title><h1 style="font-size:72px">Scene ${n}</h1>`)

t.test('[ISSUE-51] a video in the console: listed, played, seeked, downloaded; one 404 for others', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const filmed = await rest('POST', '/v1/sessions', { video: { format: 'webm', fps: 5, width: 480 } })
  t.equal(filmed.status, 201, filmed.text)
  const plain = await rest('POST', '/v1/sessions', {})
  const id = filmed.body.id as string
  for (let n = 1; n <= 4; n++) t.equal((await rest('POST', `/v1/sessions/${id}/navigate`, { url: PAGE(n) })).status, 200)
  t.equal((await rest('DELETE', `/v1/sessions/${id}`)).status, 200)
  t.equal((await rest('DELETE', `/v1/sessions/${plain.body.id as string}`)).status, 200)
  const row = (await s.services.db.query('select duration_ms, bytes from session_videos where session_id = $1', [id])).rows[0]

  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const list = await signIn(s, ctx, acme.email, acme.password, '/console/videos')
  t.match(await list.textContent(`#video-${id}`), /stored/, 'the list shows the video and what became of it')
  await list.click(`#video-${id} a:not(.inspect)`)
  await list.waitForURL((u) => u.pathname === `/console/sessions/${id}/video`)

  // the page's own <video> element loads it: metadata, then a seek to the middle decodes a frame there
  const played = await list.evaluate(async () => {
    const v = document.getElementById('video') as HTMLVideoElement
    if (v.readyState < 1) await new Promise((r, j) => { v.addEventListener('loadedmetadata', r, { once: true }); v.addEventListener('error', () => j(new Error(`media error ${v.error?.code}`)), { once: true }) })
    // a webm written live may not say its duration in its header; seeking far past the end makes the element find it
    if (!Number.isFinite(v.duration)) { v.currentTime = 1e6; await new Promise((r) => v.addEventListener('durationchange', r, { once: true })) }
    const duration = v.duration
    v.currentTime = duration / 2
    await new Promise((r) => v.addEventListener('seeked', r, { once: true }))
    return { duration, at: v.currentTime, width: v.videoWidth, height: v.videoHeight }
  })
  t.comment(`played: ${JSON.stringify(played)}; row: ${row.duration_ms} ms, ${row.bytes} bytes`)
  t.equal(played.width, 480, 'the browser decodes frames of the width asked for')
  t.ok(played.height > 0)
  t.ok(Math.abs(played.duration * 1000 - row.duration_ms) <= 500, 'it plays for the video’s duration')
  t.ok(Math.abs(played.at - played.duration / 2) < 0.5, 'it seeks')

  const file = `/console/sessions/${id}/video/file`
  const ranged = await ctx.request.get(`${s.url}${file}`, { headers: { range: 'bytes=0-99' } })
  t.equal(ranged.status(), 206, 'the file answers ranges, as a player asks for them')
  t.equal((await ranged.body()).length, 100)
  t.equal(ranged.headers()['content-range'], `bytes 0-99/${row.bytes}`)
  const [download] = await Promise.all([list.waitForEvent('download'), list.click('#download')])
  t.equal(download.suggestedFilename(), `${id}.webm`, 'the download is named for the session')

  // another org's member and a session never filmed: the one 404, for the page and the file
  const gctx = await browser.newContext()
  t.teardown(() => gctx.close())
  const gpage = await signIn(s, gctx, globex.email, globex.password, '/console/videos')
  t.ok(await gpage.isVisible('#no-videos'), "globex's list is empty")
  const foreignFile = await gctx.request.get(`${s.url}${file}`)
  const unknownFile = await gctx.request.get(`${s.url}/console/sessions/nses_unknown/video/file`)
  const unfilmed = await ctx.request.get(`${s.url}/console/sessions/${plain.body.id as string}/video/file`)
  t.equal(foreignFile.status(), 404)
  t.equal(await foreignFile.text(), await unknownFile.text(), 'another org’s video and an unknown session: the same 404')
  t.equal(await unfilmed.text(), await unknownFile.text(), 'a session never filmed: the same 404')
  const foreignPage = await gpage.goto(`${s.url}/console/sessions/${id}/video`)
  t.equal(foreignPage?.status(), 404, 'the player page too')
})
