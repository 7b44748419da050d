// The live-view canary: frames captured during and after a fill never show the secret.
// JPEG is lossy, so the proof is differential: every frame a live viewer receives is
// decoded and the field's pixels compared with a fill of another secret of the same length
// (equal within TOLERANCE); a positive control, the two strings in plain text, differs by
// far more. Determinism: no caret or focus ring on the fields, and an animated square far
// from them keeps frames coming. Secrets are compared with includes(), never printed.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import jpeg from 'jpeg-js'
import { WebSocket } from 'ws'
import { liveView } from '../../browser-pod/screencast.ts'
import { POD_LIVE_PATH } from '../../contracts/operations/live-view.ts'
import { waitFor } from '../helpers/wait.ts'
import { startPagePod } from './harness.ts'
import { fieldCanaryPage } from '../helpers/field-canary-page.ts'

const CANARY = `Live-S3cret-${randomBytes(6).toString('hex')}`
/** another secret of the same length, different at (nearly) every position */
const OTHER = `Ref0#Decoy!${randomBytes(7).toString('hex').toUpperCase().slice(0, 13)}`
const HOST = 'live-canary.example'
const URL_ = `http://${HOST}/login.html`
/** mean absolute difference per channel (0..255) under which two crops render the same */
const TOLERANCE = 2
/** the positive control must differ by at least this much (10× the tolerance) */
const CONTROL_MIN = 10 * TOLERANCE
/** frames each phase waits for after a fill (the animation keeps them coming) */
const FRAMES_PER_PHASE = 3

const PAGE = fieldCanaryPage({ title: 'live canary', secretLength: CANARY.length, fontPx: 28 })

interface Message { type: string; jpeg?: string; width?: number; height?: number; url?: string; tabs?: Array<{ id: string; url: string; active: boolean }> }
interface Seen { msg: Message; raw: string }
interface Box { x: number; y: number; width: number; height: number }
interface Crop { w: number; h: number; rgb: Uint8Array }

/** A viewer on the pod's live WebSocket, keeping every message in arrival order. */
function viewer(t: { teardown(fn: () => unknown): void }, endpoint: string, token: string) {
  const seen: Seen[] = []
  const ws = new WebSocket(endpoint.replace(/^http/, 'ws') + POD_LIVE_PATH, { headers: { authorization: `Bearer ${token}` } })
  ws.on('message', (d) => {
    const raw = d.toString()
    seen.push({ msg: JSON.parse(raw) as Message, raw })
  })
  t.teardown(() => ws.terminate())
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)))
    ws.once('error', reject)
  })
  /** indexes (into seen) of the messages of one type */
  const at = (type: string) => seen.flatMap((s, i) => (s.msg.type === type ? [i] : []))
  /** the frames with an index in [from, to) */
  const frames = (from = 0, to = Infinity) => seen.slice(from, to).filter((s) => s.msg.type === 'frame').map((s) => s.msg)
  return { ws, seen, opened, at, frames }
}

/** A frame decoded to RGBA, with the factor from CSS pixels to its pixels. */
function decode(frame: Message): { width: number; height: number; data: Uint8Array; scale: number } {
  const img = jpeg.decode(Buffer.from(frame.jpeg!, 'base64'), { useTArray: true, formatAsRGBA: true })
  return { width: img.width, height: img.height, data: img.data, scale: img.width / frame.width! }
}

/** The RGB pixels of `box` (CSS pixels, the element's border box) in a decoded frame. */
function crop(img: ReturnType<typeof decode>, box: Box): Crop {
  const x0 = Math.floor(box.x * img.scale)
  const y0 = Math.floor(box.y * img.scale)
  const x1 = Math.min(img.width, Math.ceil((box.x + box.width) * img.scale))
  const y1 = Math.min(img.height, Math.ceil((box.y + box.height) * img.scale))
  const w = x1 - x0
  const h = y1 - y0
  const rgb = new Uint8Array(w * h * 3)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const src = ((y0 + y) * img.width + (x0 + x)) * 4
      const dst = (y * w + x) * 3
      rgb[dst] = img.data[src]
      rgb[dst + 1] = img.data[src + 1]
      rgb[dst + 2] = img.data[src + 2]
    }
  }
  return { w, h, rgb }
}

/** mean absolute difference per channel between two crops of the same size (0 = identical, 255 = inverted) */
function meanDiff(a: Crop, b: Crop): number {
  if (a.w !== b.w || a.h !== b.h) throw new Error(`crops differ in size: ${a.w}×${a.h} vs ${b.w}×${b.h}`)
  let sum = 0
  for (let i = 0; i < a.rgb.length; i++) sum += Math.abs(a.rgb[i] - b.rgb[i])
  return sum / a.rgb.length
}

const round = (n: number) => Math.round(n * 1000) / 1000

t.test('the live view never shows a filled secret', async (t) => {
  t.equal(OTHER.length, CANARY.length, 'the reference secret has the canary’s length')
  t.not(OTHER, CANARY)
  const { pod, client, logs, token } = await startPagePod(t, 'nsess_livecanary', HOST, PAGE)
  const page = () => pod.session.page
  const view = liveView(pod.session)
  const open = () => client.drive('navigate', { url: URL_ })
  const box = (selector: string) =>
    page().locator(selector).evaluate((el) => {
      const r = el.getBoundingClientRect()
      return { x: r.x, y: r.y, width: r.width, height: r.height }
    })
  /** the real credential fill path of the pod (pod API secure_type, as the api-server calls it) */
  const fill = async (selector: string, secret: string) => {
    const value = Buffer.from(secret)
    try {
      return await client.secureType({ selector, value, allowlist: [HOST] })
    } finally {
      value.fill(0)
    }
  }
  /** the last viewer is gone and the screencast fully stopped: the next viewer starts a fresh one */
  const closeViewer = async (v: ReturnType<typeof viewer>) => {
    v.ws.close()
    await waitFor(() => view.viewers === 0 && !view.streaming, { what: 'the screencast to stop' })
  }
  /** every viewer of the test, for the byte search at the end */
  const viewers: Array<ReturnType<typeof viewer>> = []
  const watch = async () => {
    const v = viewer(t, pod.endpoint, token)
    viewers.push(v)
    await v.opened
    return v
  }

  let boxes: { user: Box; pw: Box } | undefined
  /** the field crops of the plain-text control, per string */
  const plain = new Map<string, { user: Crop; pw: Crop }>()

  // Taken before any fill: no watcher is armed in the tab yet, so nothing masks a field.
  t.test('positive control: the canary in plain text renders unlike another string of its length (the detector can fail)', async (t) => {
    for (const text of [CANARY, OTHER]) {
      await open()
      boxes ??= { user: await box('#user'), pw: await box('#pw') }
      // a password field shows its characters only as a text field ("show password"); the box stays the same
      await page().locator('#pw').evaluate((el) => { (el as HTMLInputElement).type = 'text' })
      await page().locator('#user').fill(text)
      await page().locator('#pw').fill(text)
      // a viewer connecting now starts a fresh screencast: every frame it gets shows this state
      const v = await watch()
      await waitFor(() => v.frames().length >= FRAMES_PER_PHASE, { what: 'frames of the plain page' })
      await closeViewer(v)
      const last = decode(v.frames().at(-1)!)
      plain.set(text, { user: crop(last, boxes.user), pw: crop(last, boxes.pw) })
    }
    const user = meanDiff(plain.get(CANARY)!.user, plain.get(OTHER)!.user)
    const pw = meanDiff(plain.get(CANARY)!.pw, plain.get(OTHER)!.pw)
    t.comment(`plain text, canary vs other: text field ${round(user)}, password field (unmasked) ${round(pw)} (mean abs diff per channel)`)
    t.ok(user > CONTROL_MIN, `text field: plain canary vs plain other differ clearly (${round(user)} > ${CONTROL_MIN})`)
    t.ok(pw > CONTROL_MIN, `password field box: plain canary vs plain other differ clearly (${round(pw)} > ${CONTROL_MIN})`)
  })

  interface Run {
    v: ReturnType<typeof viewer>
    paused: number[]
    resumed: number[]
  }
  /**
   * Waits until a frame after seen[from] shows the field changed from `empty` (the fill has
   * been painted), then FRAMES_PER_PHASE frames more. Under CPU load the compositor keeps
   * streaming the animated square from the last committed paint while the page's main
   * thread has not yet painted the fill: several frames after `resumed` can still show the
   * field empty, and the reference must not be one of those.
   */
  const framesShowingFill = (v: ReturnType<typeof viewer>, from: number, field: Box, empty: Crop, what: string) => {
    const changed = new Map<number, boolean>()
    return waitFor(() => {
      for (let i = from; i < v.seen.length; i++) {
        if (v.seen[i].msg.type !== 'frame') continue
        if (!changed.has(i)) changed.set(i, meanDiff(crop(decode(v.seen[i].msg), field), empty) > 5 * TOLERANCE)
        if (changed.get(i)) return v.frames(i + 1).length >= FRAMES_PER_PHASE
      }
      return false
    }, { what })
  }
  /** Fills `secret` into the text field, then the password field, with a viewer connected throughout. */
  const filledRun = async (t: Test, secret: string): Promise<Run> => {
    if (!boxes) throw new Error('the positive control measured the field boxes')
    const b = boxes
    await open()
    const v = await watch()
    await waitFor(() => v.frames().length >= FRAMES_PER_PHASE, { what: 'frames before the fill' })
    const before = decode(v.frames().at(-1)!)
    t.same(await fill('#user', secret), { ok: true, fieldKind: 'text', host: HOST })
    await waitFor(() => v.at('resumed').length === 1, { what: 'the view to resume after the text fill' })
    await framesShowingFill(v, v.at('resumed')[0], b.user, crop(before, b.user), 'frames showing the text fill')
    t.same(await fill('#pw', secret), { ok: true, fieldKind: 'password', host: HOST })
    await waitFor(() => v.at('resumed').length === 2, { what: 'the view to resume after the password fill' })
    await framesShowingFill(v, v.at('resumed')[1], b.pw, crop(before, b.pw), 'frames showing the password fill')
    await closeViewer(v)
    t.ok(await page().locator('#user').evaluate((el, s) => (el as HTMLInputElement).value === s, secret), 'the text field holds the secret')
    t.ok(await page().locator('#pw').evaluate((el, s) => (el as HTMLInputElement).value === s, secret), 'the password field holds the secret')
    return { v, paused: v.at('paused'), resumed: v.at('resumed') }
  }

  let canary: Run | undefined
  let reference: Run | undefined
  t.test('[INV-03] live-view canary: no decoded frame after a fill shows the secret — text and password fields pixel-equal to another secret of the same length', async (t) => {
    // the reference first: the same page, the same real fill path, another secret of the same length
    reference = await filledRun(t, OTHER)
    canary = await filledRun(t, CANARY)
    if (!boxes) return t.fail('the positive control measured the field boxes')
    const b = boxes
    const refLast = decode(reference.v.frames(reference.resumed[1]).at(-1)!)
    const refUser = crop(refLast, b.user)
    const refPw = crop(refLast, b.pw)

    // every frame streamed after the text fill, each decoded and cropped
    const afterText = canary.v.frames(canary.resumed[0])
    const afterPw = canary.v.frames(canary.resumed[1])
    // the screencast may still deliver a frame painted before the fill landed: it shows the
    // field empty, as before any fill — a picture that does not depend on the secret either
    const empty = decode(canary.v.frames(0, canary.paused[0]).at(-1)!)
    const emptyUserCrop = crop(empty, b.user)
    const emptyPwCrop = crop(empty, b.pw)
    let worstUser = 0
    let worstPw = 0
    for (const f of afterText) {
      const img = decode(f)
      worstUser = Math.max(worstUser, Math.min(meanDiff(crop(img, b.user), refUser), meanDiff(crop(img, b.user), emptyUserCrop)))
      if (afterPw.includes(f)) worstPw = Math.max(worstPw, Math.min(meanDiff(crop(img, b.pw), refPw), meanDiff(crop(img, b.pw), emptyPwCrop)))
    }
    const last = decode(afterPw.at(-1)!)
    const lastUser = meanDiff(crop(last, b.user), refUser)
    const lastPw = meanDiff(crop(last, b.pw), refPw)
    t.comment(`frames decoded after the text fill: ${afterText.length} (${afterPw.length} after the password fill), ${last.width}×${last.height} px at ${last.scale} px per CSS px`)
    t.comment(`masked, canary vs other (last frame): text field ${round(lastUser)}, password field ${round(lastPw)}; worst frame: ${round(worstUser)}, ${round(worstPw)}`)
    t.ok(afterText.length >= 2 * FRAMES_PER_PHASE && afterPw.length >= FRAMES_PER_PHASE, 'frames were streamed after each fill')
    t.ok(worstUser < TOLERANCE, `text field: every frame after the fill renders as the other secret does, or as the empty field (worst ${round(worstUser)} < ${TOLERANCE})`)
    t.ok(worstPw < TOLERANCE, `password field: every frame after the fill renders as the other secret does, or as the empty field (worst ${round(worstPw)} < ${TOLERANCE})`)
    t.ok(lastUser < TOLERANCE && lastPw < TOLERANCE, 'the last frame shows both fields filled, exactly as the other secret renders')

    // the same crops would have told: the plain canary is far from what was streamed
    const p = plain.get(CANARY)
    if (p) {
      const user = meanDiff(crop(last, b.user), p.user)
      const pw = meanDiff(crop(last, b.pw), p.pw)
      t.comment(`streamed (masked) vs the canary in plain text: text field ${round(user)}, password field ${round(pw)}`)
      t.ok(user > CONTROL_MIN, 'the streamed text field is not the canary in plain text')
      t.ok(pw > CONTROL_MIN, 'the streamed password field box is not the canary in plain text')
    } else t.fail('the positive control ran first')
    // and the crops are of the fields: the fill did change them (empty field before, bullets after)
    const before = decode(canary.v.frames(0, canary.paused[0]).at(-1)!)
    const emptyUser = meanDiff(crop(before, b.user), crop(last, b.user))
    const emptyPw = meanDiff(crop(before, b.pw), crop(last, b.pw))
    t.comment(`empty (before the fill) vs filled: text field ${round(emptyUser)}, password field ${round(emptyPw)}`)
    t.ok(emptyUser > 5 * TOLERANCE && emptyPw > 5 * TOLERANCE, 'the crops see the fields change when filled')
  })

  t.test('[INV-03] the URL and the tab list the live view shows never carry a filled secret the page put into its URL', async (t) => {
    if (!canary) return t.fail('the canary run happened')
    // the page copies the filled value into its URL (as a GET form or a script would)
    await page().evaluate((s) => history.pushState(null, '', '/after-login?pw=' + encodeURIComponent(s)), CANARY)
    const v = await watch()
    await waitFor(() => v.at('page').some((i) => v.seen[i].msg.url?.includes('/after-login')), { what: 'the page event with the new URL' })
    const events = v.at('page').map((i) => v.seen[i])
    await closeViewer(v)
    const last = events.at(-1)!.msg
    t.match(last.url, /^http:\/\/live-canary\.example\/after-login\?pw=/, 'the URL is shown')
    t.equal(last.tabs?.length, 1, 'with the one tab')
    t.ok(last.tabs![0].active, 'active')
    t.equal(last.tabs![0].url, last.url, 'the tab shows the same, masked URL')
    t.notOk(events.some((e) => e.raw.includes(CANARY)), 'no page event carries the secret')
    t.notOk(last.url!.includes(CANARY), 'the secret is masked in the URL')
  })

  t.test('[INV-03] not one frame while a fill runs, and no frame’s bytes carry the canary (base64, JPEG, decoded pixels)', async (t) => {
    for (const [name, run] of [['reference', reference], ['canary', canary]] as const) {
      if (!run) {
        t.fail(`the ${name} run happened`)
        continue
      }
      t.equal(run.paused.length, 2, `${name}: two fills, two pauses`)
      t.equal(run.resumed.length, 2, `${name}: and two resumes`)
      t.ok(run.v.frames(0, run.paused[0]).length >= FRAMES_PER_PHASE, `${name}: frames flowed before the fill`)
      for (let i = 0; i < run.paused.length; i++) {
        t.ok(run.paused[i] < run.resumed[i], `${name}: fill ${i + 1} paused before it resumed`)
        t.same(run.v.frames(run.paused[i], run.resumed[i]), [], `${name}: not one frame while fill ${i + 1} ran`)
      }
    }
    const text = Buffer.from(CANARY)
    const b64 = text.toString('base64')
    let frames = 0
    for (const v of viewers) {
      for (const { msg, raw } of v.seen) {
        if (raw.includes(CANARY) || raw.includes(b64)) t.fail(`a ${msg.type} message carries the canary`)
        if (msg.type !== 'frame') continue
        frames++
        const file = Buffer.from(msg.jpeg!, 'base64')
        if (file.includes(text)) t.fail('a JPEG file carries the canary’s bytes')
        if (Buffer.from(decode(msg).data).includes(text)) t.fail('decoded pixels carry the canary’s bytes')
      }
    }
    t.ok(frames > 0, `searched ${frames} frames`)
    t.pass('no message, JPEG file or decoded frame carries the canary')
    t.notOk(logs.some((l) => l.includes(CANARY) || l.includes(b64)), 'no pod log line carries it')
  })
})
