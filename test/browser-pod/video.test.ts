// Video of a session at the pod: real Chromium, the real pod API, Debian's ffmpeg and
// ffprobe. A video-recorded page has secrets filled into a text and a password field
// through the real fill path; the file is read back over the pod API, ffprobe reports its
// codec, frames and duration, and every decoded frame is compared in the fields' boxes:
// each shows the field empty or exactly as another secret of the same length renders it
// (differential, as the live-view canary), never the canary. Secrets are compared with
// includes(), never printed.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { video } from '../../browser-pod/video.ts'
import type { Page } from 'playwright-core'
import type { VideoFormat } from '../../contracts/pod-api.ts'
import type { PodClient } from '../../api-server/sessions/pod-client.ts'
import { waitFor } from '../helpers/wait.ts'
import { startPagePod } from './harness.ts'
import { fieldCanaryPage } from '../helpers/field-canary-page.ts'

const run = promisify(execFile)
const CANARY = `Vid-S3cret-${randomBytes(6).toString('hex')}`
/** another secret of the same length, different at (nearly) every position */
const OTHER = `Ref0#Decoy!${randomBytes(7).toString('hex').toUpperCase().slice(0, 12)}`
const HOST = 'video-canary.example'
const URL_ = `http://${HOST}/login.html`
const FPS = 5
/** the video's width: half the viewport's 1280 CSS px */
const WIDTH = 640
const SCALE = WIDTH / 1280
/**
 * Mean absolute difference per channel (0..255) under which two crops render the same. VP9
 * at crf 40 refines a region that changed over the frames after it, a little differently
 * run to run: equal content measured up to 3–4 apart here, while the canary in plain text
 * differs from the other string by about 40 and a filled field from the empty one by 20.
 */
const TOLERANCE = 5
/** the positive control must differ by at least this much */
const CONTROL_MIN = 4 * TOLERANCE
/** frames each phase waits for (the animation keeps the screencast painting) */
const FRAMES_PER_PHASE = 8

const PAGE = fieldCanaryPage({ title: 'video canary', secretLength: CANARY.length, fontPx: 40 })

interface Box { x: number; y: number; width: number; height: number }
interface Frames { width: number; height: number; count: number; rgb: Buffer }
interface Crop { w: number; h: number; rgb: Uint8Array }

/** The whole file read over the pod API, chunk by chunk, as the api-server reads it. */
async function readAll(client: PodClient): Promise<Buffer> {
  const parts: Buffer[] = []
  for (let offset = 0; ;) {
    const r = await client.videoRead({ offset })
    const b = Buffer.from(r.data, 'base64')
    parts.push(b)
    offset += b.length
    if (r.eof) return Buffer.concat(parts)
  }
}

async function probe(file: string) {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_name,width,height,nb_read_frames:format=format_name,duration', '-of', 'json', file])
  const j = JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; height: number; nb_read_frames: string }>; format: { format_name: string; duration: string } }
  return { codec: j.streams[0].codec_name, width: j.streams[0].width, height: j.streams[0].height, frames: Number(j.streams[0].nb_read_frames), format: j.format.format_name, durationMs: Number(j.format.duration) * 1000 }
}

/** Every frame of the file decoded to RGB by ffmpeg. */
async function decodeAll(file: string, width: number, height: number): Promise<Frames> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { encoding: 'buffer', maxBuffer: 512 * 1024 * 1024 })
  return { width, height, count: stdout.length / (width * height * 3), rgb: stdout }
}

/** The RGB pixels of `box` (CSS pixels) in frame `i`. */
function crop(f: Frames, i: number, box: Box): Crop {
  const x0 = Math.floor(box.x * SCALE)
  const y0 = Math.floor(box.y * SCALE)
  const w = Math.min(f.width, Math.ceil((box.x + box.width) * SCALE)) - x0
  const h = Math.min(f.height, Math.ceil((box.y + box.height) * SCALE)) - y0
  const rgb = new Uint8Array(w * h * 3)
  const base = i * f.width * f.height * 3
  for (let y = 0; y < h; y++) rgb.set(f.rgb.subarray(base + ((y0 + y) * f.width + x0) * 3, base + ((y0 + y) * f.width + x0 + w) * 3), y * w * 3)
  return { w, h, rgb }
}

function meanDiff(a: Crop, b: Crop): number {
  if (a.w !== b.w || a.h !== b.h) throw new Error(`crops differ in size: ${a.w}×${a.h} vs ${b.w}×${b.h}`)
  let sum = 0
  for (let i = 0; i < a.rgb.length; i++) sum += Math.abs(a.rgb[i] - b.rgb[i])
  return sum / a.rgb.length
}
const round = (n: number) => Math.round(n * 1000) / 1000

interface Recorded {
  file: string
  bytes: Buffer
  finished: { format: string; bytes: number; durationMs: number; frames: number; truncated: boolean }
  frames: Frames
  boxes: { user: Box; pw: Box }
  logs: string[]
}

const dir = mkdtempSync(join(tmpdir(), 'video-test-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

/**
 * One pod, one video: the page, then `fill` (the secure fill of a secret, or plain text for
 * the control), FRAMES_PER_PHASE frames after each step; the finished file read back.
 */
async function record(t: Test, name: string, fill: (client: PodClient, page: () => Page, selector: string) => Promise<void>, format: VideoFormat = 'webm'): Promise<Recorded> {
  const { pod, client, logs } = await startPagePod(t, `nsess_video${name}`, HOST, PAGE)
  const page = () => pod.session.page
  const v = video(pod.session)
  await client.drive('navigate', { url: URL_ })
  await client.videoStart({ format, fps: FPS, width: WIDTH, maxDurationMs: 120_000, maxBytes: 64 * 1024 * 1024 })
  const box = (selector: string) => page().locator(selector).evaluate((el) => {
    const r = el.getBoundingClientRect()
    return { x: r.x, y: r.y, width: r.width, height: r.height }
  })
  const boxes = { user: await box('#user'), pw: await box('#pw') }
  const more = async (what: string) => {
    const from = v.counts.written
    await waitFor(() => v.counts.written >= from + FRAMES_PER_PHASE, { what, timeoutMs: 30_000 })
  }
  await more('frames before the fill')
  await fill(client, page, '#user')
  await more('frames after the text fill')
  await fill(client, page, '#pw')
  await more('frames after the password fill')
  const finished = await client.videoFinish()
  const bytes = await readAll(client)
  const file = join(dir, `${name}.${format}`)
  writeFileSync(file, bytes)
  const p = await probe(file)
  return { file, bytes, finished, frames: await decodeAll(file, p.width, p.height), boxes, logs }
}

const secure = (secret: string) => async (client: PodClient, _page: () => Page, selector: string) => {
  const value = Buffer.from(secret)
  try {
    await client.secureType({ selector, value, allowlist: [HOST] })
  } finally {
    value.fill(0)
  }
}

t.test('[ISSUE-51] a video of a session: ffprobe reads its codec, size, frames and duration (webm and mp4)', async (t) => {
  for (const format of ['webm', 'mp4'] as const) {
    const r = await record(t, `probe${format}`, async (_c, page, selector) => { await page().locator(selector).fill('hello') }, format)
    const p = await probe(r.file)
    t.comment(`${format}: ${r.finished.frames} frames, ${r.finished.durationMs} ms, ${r.finished.bytes} bytes; ffprobe ${p.format} ${p.codec} ${p.width}×${p.height}, ${p.frames} frames, ${Math.round(p.durationMs)} ms`)
    t.equal(r.finished.bytes, r.bytes.length, `${format}: the bytes read are the file's`)
    t.equal(p.codec, format === 'webm' ? 'vp9' : 'h264', `${format}: the codec`)
    t.match(p.format, format === 'webm' ? /webm/ : /mp4/, `${format}: the container`)
    t.equal(p.width, WIDTH, `${format}: the width asked for`)
    t.equal(p.height, 360, `${format}: the viewport's aspect`)
    t.ok(r.finished.frames >= 3 * FRAMES_PER_PHASE, `${format}: frames were written`)
    t.equal(p.frames, r.finished.frames, `${format}: every frame written is in the file`)
    t.ok(Math.abs(p.durationMs - r.finished.durationMs) <= 2 * (1000 / FPS), `${format}: the file's duration is the frames' (${Math.round(p.durationMs)} ms vs ${r.finished.durationMs} ms)`)
    t.equal(r.finished.truncated, false, `${format}: within its bounds`)
    t.equal(r.frames.count, p.frames, `${format}: every frame decodes`)
  }
})

t.test('[ISSUE-51] video mask canary: no decoded frame shows a filled secret', async (t) => {
  t.equal(OTHER.length, CANARY.length, 'the reference secret has the canary’s length')
  // the control: the canary typed in plain text into the text field, the other string into the
  // password field shown as text (the same box) — the detector can tell them apart
  const control = await record(t, 'control', async (_c, page, selector) => {
    if (selector === '#pw') await page().locator('#pw').evaluate((el) => { (el as HTMLInputElement).type = 'text' })
    await page().locator(selector).fill(selector === '#user' ? CANARY : OTHER)
  })
  const reference = await record(t, 'reference', secure(OTHER))
  const canary = await record(t, 'canary', secure(CANARY))
  const b = canary.boxes
  t.same(reference.boxes, b, 'the same page, the same boxes')
  const last = (r: Recorded) => r.frames.count - 1
  const plainUser = crop(control.frames, last(control), b.user)
  const plainOther = crop(control.frames, last(control), control.boxes.pw)
  const control1 = meanDiff(plainUser, plainOther)
  t.comment(`plain text, canary vs other: ${round(control1)} (mean abs diff per channel)`)
  t.ok(control1 > CONTROL_MIN, `positive control: the plain canary and the plain other string differ clearly (${round(control1)} > ${CONTROL_MIN})`)

  const refUser = crop(reference.frames, last(reference), b.user)
  const refPw = crop(reference.frames, last(reference), b.pw)
  const emptyUser = crop(canary.frames, 0, b.user)
  const emptyPw = crop(canary.frames, 0, b.pw)
  t.ok(meanDiff(emptyUser, crop(reference.frames, 0, b.user)) < TOLERANCE, 'both videos begin with the fields empty')
  t.ok(meanDiff(emptyUser, refUser) > 3 * TOLERANCE && meanDiff(emptyPw, refPw) > 3 * TOLERANCE, 'the crops see the fields change when filled')
  // Every reference frame, not only its last: a lossy encoder refines a region that just
  // changed over the next frames, and the reference run went through the same refinement.
  const refCrops = (box: Box) => Array.from({ length: reference.frames.count }, (_, i) => crop(reference.frames, i, box))
  const refUsers = refCrops(b.user)
  const refPws = refCrops(b.pw)
  const nearest = (c: Crop, refs: Crop[]) => Math.min(...refs.map((r) => meanDiff(c, r)))
  let worstUser = 0
  let worstPw = 0
  for (let i = 0; i < canary.frames.count; i++) {
    worstUser = Math.max(worstUser, nearest(crop(canary.frames, i, b.user), refUsers))
    worstPw = Math.max(worstPw, nearest(crop(canary.frames, i, b.pw), refPws))
  }
  t.comment(`${canary.frames.count} frames decoded; worst frame vs the nearest frame of the other secret's video: text field ${round(worstUser)}, password field ${round(worstPw)}`)
  t.ok(worstUser < TOLERANCE, `text field: every frame shows it as a frame of the other secret's video does (worst ${round(worstUser)} < ${TOLERANCE})`)
  t.ok(worstPw < TOLERANCE, `password field: every frame shows it as a frame of the other secret's video does (worst ${round(worstPw)} < ${TOLERANCE})`)
  const lastUser = crop(canary.frames, last(canary), b.user)
  t.ok(meanDiff(lastUser, refUser) < TOLERANCE && meanDiff(crop(canary.frames, last(canary), b.pw), refPw) < TOLERANCE, 'the last frame shows both fields filled, as the other secret renders')
  const leak = meanDiff(lastUser, plainUser)
  t.comment(`recorded (masked) vs the canary in plain text: ${round(leak)}`)
  t.ok(leak > CONTROL_MIN, 'the recorded text field is not the canary in plain text')

  const text = Buffer.from(CANARY)
  t.notOk(canary.bytes.includes(text) || canary.bytes.includes(Buffer.from(text.toString('base64'))), 'the video file does not carry the canary’s bytes')
  t.notOk(canary.frames.rgb.includes(text), 'nor do the decoded pixels')
  t.notOk(canary.logs.some((l) => l.includes(CANARY)), 'no pod log line carries it')
})
