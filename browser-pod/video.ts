// Video of a session: the frames Chromium paints for the active tab (a CDP screencast, as
// the live view takes) piped to an ffmpeg child, which encodes them at a constant frame
// rate into a file of the pod's own. The latest frame is written on every tick, so a still
// page still has duration. While a credential fill runs no frame is taken (the last one
// from before it repeats); the field mask keeps a filled secret out of every later frame.
// Design: docs/sessions.md#video
import { spawn, type ChildProcess } from 'node:child_process'
import { open, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { CDPSession, Page } from 'playwright-core'
import { errors } from '../contracts/errors.ts'
import { VIDEO_READ_BYTES, type PodInput, type PodOutput } from '../contracts/pod-api.ts'
import { DEFAULT_VIEWPORT } from '../contracts/operations/fields.ts'
import { podDir } from './pod-dirs.ts'
import type { PodSession } from './session.ts'
import { tabPicture } from './tab-picture.ts'

type Settings = PodInput<'video_start'>
type Finished = PodOutput<'video_finish'>

const JPEG_QUALITY = 70
/** how often the video checks that it shows the active tab */
const FOLLOW_MS = 250
/** an encoder this far behind loses ticks rather than grow the pod's memory */
const MAX_PENDING_BYTES = 16 * 1024 * 1024
/** ffmpeg's own complaints kept for the log (its last lines) */
const STDERR_KEEP = 2048
/** a CDP step of the chain that takes longer is given up: a backstop (the browser process answers them; the one call a swapped renderer drops, the screenshot, is off the chain) */
const STEP_MS = 5_000

/** `work`, or undefined once `ms` passed: a stuck CDP call must not hold the video's chain, nor finish */
function bounded<T>(work: Promise<T>, ms = STEP_MS): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms) })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** The encoder's arguments after the input: one codec per format, tuned for a live source. */
function codecArgs(format: Settings['format'], fps: number): string[] {
  const gop = String(fps * 10)
  return format === 'webm'
    ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', '40', '-g', gop, '-f', 'webm']
    : ['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '28', '-g', gop, '-movflags', '+faststart', '-f', 'mp4']
}

/**
 * ffmpeg's whole command line: JPEG frames on stdin, one video file out. Exported for the
 * node test, which runs it with the image's own ffmpeg (built with only what this asks for).
 */
export function encoderArgs(s: Pick<Settings, 'format' | 'fps' | 'width' | 'maxBytes'> & { height: number }, file: string): string[] {
  const { width, height: h, fps } = s
  return [
    '-hide_banner', '-loglevel', 'error',
    '-f', 'image2pipe', '-c:v', 'mjpeg', '-framerate', String(fps), '-i', 'pipe:0',
    // frames of any size (a screenshot, a resized window) fit the one size, letterboxed
    '-vf', `scale=${width}:${h}:force_original_aspect_ratio=decrease,pad=${width}:${h}:(ow-iw)/2:(oh-ih)/2,format=yuv420p`,
    '-an', ...codecArgs(s.format, fps),
    '-fs', String(s.maxBytes), '-y', file,
  ]
}


export class VideoRecorder {
  #settings?: Settings
  #height = 0
  #file = ''
  #ffmpeg?: ChildProcess
  #exited?: Promise<number | null>
  #stderr = ''
  /** the latest frame Chromium painted outside a fill (JPEG) */
  #latest?: Buffer
  /** when the first frame was written; ticks are counted from it */
  #t0 = 0
  /** epoch ms of the first frame: the video's time 0 (t0 moves on when ticks are skipped; this does not) */
  #firstFrameAt: number | null = null
  #frames = 0
  #truncated = false
  /** no more frames: a bound was reached, or the video is finishing */
  #stopped = false
  #pauses = 0
  /** fills begun so far: a picture asked for before one began is not used */
  #fills = 0
  #cdp?: CDPSession
  #page?: Page
  #tick?: NodeJS.Timeout
  #follow?: NodeJS.Timeout
  /** attach, start and detach run one after the other */
  #chain: Promise<void> = Promise.resolve()
  #finished?: Promise<Finished>
  /** frames Chromium painted for the video (tests read it) */
  readonly counts = { painted: 0, written: 0, skipped: 0 }

  private readonly session: PodSession
  private readonly log: (line: string) => void
  constructor(session: PodSession, log: (line: string) => void = () => {}) {
    this.session = session
    this.log = log
  }

  get started(): boolean {
    return this.#settings !== undefined
  }

  /** Starts the encoder and the screencast of the active tab. Idempotent (the first settings hold). */
  async start(settings: Settings): Promise<void> {
    if (this.#settings) return
    if (!this.session.configured) throw errors.notConfigured()
    this.#settings = settings
    const vp = this.session.page.viewportSize() ?? DEFAULT_VIEWPORT
    this.#height = Math.max(2, Math.round((settings.width * vp.height) / vp.width / 2) * 2)
    this.#file = join(podDir('video'), `video.${settings.format}`)
    const ffmpeg = spawn('ffmpeg', encoderArgs({ ...settings, height: this.#height }, this.#file), { stdio: ['pipe', 'ignore', 'pipe'] })
    this.#ffmpeg = ffmpeg
    ffmpeg.stderr!.on('data', (d: Buffer) => { this.#stderr = (this.#stderr + d.toString('utf8')).slice(-STDERR_KEEP) })
    // the encoder quitting early (the size bound, -fs) closes the pipe under a write
    ffmpeg.stdin!.on('error', () => {})
    this.#exited = new Promise((resolve) => {
      ffmpeg.once('error', (e) => {
        this.log(`video encoder ${e.name}: ${e.message.split('\n')[0]}`)
        resolve(null)
      })
      ffmpeg.once('exit', (code) => resolve(code))
    })
    void this.#exited.then(() => {
      // before finish: the size bound ended it (or it failed); no more frames either way
      if (!this.#stopped) {
        this.#truncated = true
        this.#stop()
      }
    })
    this.#run(() => this.#attach())
    this.#follow = setInterval(() => {
      if (!this.#stopped && this.#activePage() !== this.#page) this.#run(async () => { await this.#detach(); await this.#attach() })
    }, FOLLOW_MS)
    this.#follow.unref()
    this.#tick = setInterval(() => this.#write(), Math.max(10, Math.floor(1000 / settings.fps / 2)))
    this.#tick.unref()
    await this.#chain
  }

  /** No frame is taken while a credential fill runs (pod-api.ts, around secure_type): the last one repeats. */
  pause(): () => void {
    this.#pauses++
    this.#fills++
    if (this.#pauses === 1) void this.#cdp?.send('Page.stopScreencast').catch(() => {}) // a closed page paints nothing anyway
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.#pauses > 0 || this.#stopped) return
      this.#run(() => this.#start())
    }
  }

  /** Ends the encoding and waits for ffmpeg to close the file (duration, cues). Idempotent. */
  finish(): Promise<Finished> {
    if (!this.#settings) return Promise.reject(errors.invalidRequest('video: not started'))
    this.#finished ??= this.#finish(this.#settings)
    return this.#finished
  }

  async #finish(settings: Settings): Promise<Finished> {
    if (!this.#stopped) {
      this.#write()
      // a session that ends before its first paint still has a picture: what the tab shows
      if (!this.#frames) await this.#snapshot()
      if (!this.#frames && this.#latest) this.#put(this.#latest)
    }
    this.#stop()
    await bounded(this.#chain)
    const code = await this.#exited
    if (code !== 0) this.log(`video encoder exited ${String(code)}: ${this.#stderr.split('\n').filter(Boolean).at(-1) ?? ''}`)
    const bytes = await stat(this.#file).then((s) => s.size, () => 0)
    return { format: settings.format, bytes, durationMs: Math.round((this.#frames * 1000) / settings.fps), frames: this.#frames, truncated: this.#truncated, startedAt: this.#firstFrameAt ?? (this.#frames ? Date.now() : null) }
  }

  /** The finished file's bytes from `offset`, at most VIDEO_READ_BYTES. */
  async read(offset: number): Promise<{ data: string; bytes: number; eof: boolean }> {
    if (!this.#finished) throw errors.invalidRequest('video: not finished')
    await this.#finished
    const fh = await open(this.#file, 'r')
    try {
      const size = (await fh.stat()).size
      const n = Math.max(0, Math.min(VIDEO_READ_BYTES, size - offset))
      const buf = Buffer.alloc(n)
      if (n) await fh.read(buf, 0, n, offset)
      return { data: buf.toString('base64'), bytes: n, eof: offset + n >= size }
    } finally {
      await fh.close()
    }
  }

  // --- frames in, frames out ---------------------------------------------------------------

  /** Writes the latest frame for every tick due since the first frame (a late timer catches up). */
  #write(): void {
    const s = this.#settings
    if (!s || this.#stopped || !this.#latest) return
    const now = Date.now()
    if (!this.#frames) {
      this.#t0 = now
      this.#firstFrameAt = now
    }
    const due = Math.floor(((now - this.#t0) * s.fps) / 1000) + 1
    const max = Math.floor((s.maxDurationMs * s.fps) / 1000)
    while (this.#frames < Math.min(due, max)) {
      // the encoder cannot keep up: the tick is lost (the video runs a little short) rather than the pod's memory
      if (this.#ffmpeg!.stdin!.writableLength > MAX_PENDING_BYTES) {
        this.counts.skipped += due - this.#frames
        this.#t0 += ((due - this.#frames) * 1000) / s.fps
        break
      }
      this.#put(this.#latest)
    }
    if (this.#frames >= max) {
      this.#truncated = true
      this.#stop()
    }
  }

  #put(jpeg: Buffer): void {
    this.#ffmpeg!.stdin!.write(jpeg)
    this.#frames++
    this.counts.written++
  }

  /** No more frames: timers off, the screencast detached, the encoder told the input ended. */
  #stop(): void {
    if (this.#stopped) return
    this.#stopped = true
    clearInterval(this.#tick)
    clearInterval(this.#follow)
    this.#run(() => this.#detach())
    this.#ffmpeg?.stdin?.end()
  }

  #run(step: () => Promise<void>): void {
    this.#chain = this.#chain.then(step).catch((e: unknown) => {
      // a tab that closed under the video: the follow timer attaches to the next one
      this.log(`video ${e instanceof Error ? e.name : 'error'}`)
    })
  }

  #activePage(): Page | undefined {
    return this.session.configured ? this.session.page : undefined
  }

  async #attach(): Promise<void> {
    if (this.#cdp || this.#stopped) return
    const page = this.#activePage()
    if (!page || page.isClosed()) return
    const cdp = await page.context().newCDPSession(page)
    this.#cdp = cdp
    this.#page = page
    cdp.on('Page.screencastFrame', (f) => {
      void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {}) // the page closed: no more frames either way
      this.counts.painted++
      if (this.#cdp === cdp) this.#frame(f.data)
    })
    await this.#start()
  }

  async #start(): Promise<void> {
    const cdp = this.#cdp
    const s = this.#settings
    if (!cdp || !s || this.#pauses || this.#stopped) return
    await bounded(cdp.send('Page.startScreencast', { format: 'jpeg', quality: JPEG_QUALITY, maxWidth: s.width, maxHeight: this.#height, everyNthFrame: 1 }))
    // a fill began meanwhile: stop again (#frame drops anything that comes)
    if (this.#pauses) return void cdp.send('Page.stopScreencast').catch(() => {}) // the page may be gone: nothing paints
    // off the chain: a picture may never come (tab-picture.ts), and nothing waits for it
    void this.#snapshot()
  }

  /** A still page paints nothing: the tab as it is now, so the video never shows the tab before. */
  async #snapshot(): Promise<void> {
    const cdp = this.#cdp
    const page = this.#page
    if (!cdp || !page || this.#pauses) return
    const fills = this.#fills
    const shot = await tabPicture(page, cdp, JPEG_QUALITY)
    // a fill that began meanwhile may be in the picture: it is not used, however late it came
    if (shot && this.#cdp === cdp && this.#fills === fills) this.#frame(shot)
  }

  async #detach(): Promise<void> {
    const cdp = this.#cdp
    this.#cdp = undefined
    this.#page = undefined
    if (!cdp) return
    await bounded(cdp.send('Page.stopScreencast').catch(() => {})) // a closed page stopped painting already
    await bounded(cdp.detach().catch(() => {})) // likewise
  }

  /** The one place a frame enters the video: never one painted while a fill runs. */
  #frame(jpeg: string): void {
    if (this.#pauses > 0 || this.#stopped) return
    this.#latest = Buffer.from(jpeg, 'base64')
    this.#write()
  }
}

const videos = new WeakMap<PodSession, VideoRecorder>()

/** The session's video (one per pod session). */
export function video(session: PodSession, log?: (line: string) => void): VideoRecorder {
  let v = videos.get(session)
  if (!v) videos.set(session, (v = new VideoRecorder(session, log)))
  return v
}
