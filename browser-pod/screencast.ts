// The live view at the pod: /v1/live streams a CDP screencast of the active tab as JPEG
// frames (only while someone watches) and dispatches the input of the person holding
// control; the api-server decides who that is. No frame leaves the pod while a credential
// fill runs: pause() stops the screencast and the check in #frame drops frames in flight.
// Design: docs/sessions.md#watching-and-taking-over
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { CDPSession, Page } from 'playwright-core'
import { WebSocket, WebSocketServer } from 'ws'
import { upgradeErrors, upgradeRefusal } from '../contracts/errors.ts'
import { LiveInput, type LiveEvent } from '../contracts/operations/live-view.ts'
import { DEFAULT_VIEWPORT } from '../contracts/operations/fields.ts'
import type { PodSession } from './session.ts'
import { tabPicture } from './tab-picture.ts'

const JPEG_QUALITY = 60
/** how often the view checks that it shows the active tab */
const FOLLOW_MS = 250
/** a viewer this far behind loses frames instead of growing a buffer (it is a live view) */
const MAX_BUFFERED = 4 * 1024 * 1024

const views = new WeakMap<PodSession, LiveView>()

/** The session's live view (one per pod). */
export function liveView(session: PodSession, log?: (line: string) => void): LiveView {
  let v = views.get(session)
  if (!v) views.set(session, (v = new LiveView(session, log)))
  return v
}

export class LiveView {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false })
  readonly #viewers = new Set<WebSocket>()
  #pauses = 0
  #acting = 0
  #cdp?: CDPSession
  #page?: Page
  #onNavigated?: () => void
  #follow?: NodeJS.Timeout
  /** attach, start and detach run one after the other */
  #chain: Promise<void> = Promise.resolve()
  #closed = false
  /** frames Chromium painted for the screencast, and frames sent to viewers (tests read them) */
  readonly counts = { painted: 0, sent: 0 }

  private readonly session: PodSession
  private readonly log: (line: string) => void
  constructor(session: PodSession, log: (line: string) => void = () => {}) {
    this.session = session
    this.log = log
  }

  /** a CDP session for the view is open: from the first viewer until the last one's detach completed */
  #attached = false

  /** whether Chromium may paint frames for the view now (false only once the screencast is fully stopped or paused) */
  get streaming(): boolean {
    return this.#attached && this.#pauses === 0
  }

  get viewers(): number {
    return this.#viewers.size
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#closed || !this.session.configured) return void socket.end(upgradeRefusal(upgradeErrors.liveViewUnavailable()))
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#add(ws))
  }

  #add(ws: WebSocket): void {
    this.#viewers.add(ws)
    ws.on('message', (data, isBinary) => { if (!isBinary) this.#input(data.toString('utf8')) })
    ws.on('error', () => ws.terminate())
    ws.on('close', () => {
      this.#viewers.delete(ws)
      if (!this.#viewers.size) this.#run(() => this.#detach())
    })
    if (this.#pauses) this.#send(ws, { type: 'paused', why: 'credential_fill' })
    if (this.#viewers.size === 1) {
      this.#run(() => this.#attach())
      this.#follow ??= setInterval(() => {
        if (this.#page && this.#viewers.size && this.#activePage() !== this.#page) this.#run(async () => { await this.#detach(); await this.#attach() })
      }, FOLLOW_MS).unref()
    } else {
      // a second viewer gets the page and a picture at once, not at the next paint
      this.#send(ws, this.#pageEvent())
      this.#run(() => this.#snapshot())
    }
  }

  /**
   * Stops the stream while a credential fill runs: no frame is sent and no input reaches
   * the page until the returned function is called (pod-api.ts, around secure_type).
   */
  pause(): () => void {
    this.#pauses++
    if (this.#pauses === 1) {
      this.#broadcast({ type: 'paused', why: 'credential_fill' })
      // Chromium stops painting for us; a frame already on its way is dropped by #frame
      void this.#cdp?.send('Page.stopScreencast').catch(() => {}) // a closed page paints nothing anyway
    }
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.#pauses > 0) return
      this.#broadcast({ type: 'resumed' })
      if (this.#viewers.size) this.#run(() => this.#start())
    }
  }

  /** The agent's driving call runs at the pod (pod-api.ts): viewers see "agent acting". */
  acting(): () => void {
    // no viewer, no work: a driving call must never pay for (or fail on) the live view
    if (this.#acting++ === 0 && this.#viewers.size) this.#broadcast(this.#pageEvent())
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.#acting === 0 && this.#viewers.size) this.#broadcast(this.#pageEvent())
    }
  }

  close(): void {
    this.#closed = true
    clearInterval(this.#follow)
    for (const ws of this.#viewers) ws.terminate()
    this.#viewers.clear()
    this.#wss.close()
  }

  // --- the stream ------------------------------------------------------------------------

  #run(step: () => Promise<void>): void {
    this.#chain = this.#chain.then(step).catch((e: unknown) => {
      // a tab that closed under the view: the follow timer attaches to the next one
      this.log(`live-view ${e instanceof Error ? e.name : 'error'}`)
    })
  }

  #activePage(): Page | undefined {
    return this.session.configured ? this.session.page : undefined
  }

  async #attach(): Promise<void> {
    if (this.#cdp || !this.#viewers.size) return
    const page = this.#activePage()
    if (!page || page.isClosed()) return
    const cdp = await page.context().newCDPSession(page)
    this.#cdp = cdp
    this.#attached = true
    this.#page = page
    cdp.on('Page.screencastFrame', (f) => {
      void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {}) // the page closed: no more frames either way
      this.counts.painted++
      if (this.#cdp === cdp) this.#frame(f.data, f.metadata.deviceWidth, f.metadata.deviceHeight)
    })
    this.#onNavigated = () => this.#broadcast(this.#pageEvent())
    page.on('framenavigated', this.#onNavigated)
    this.#broadcast(this.#pageEvent())
    await this.#start()
  }

  async #start(): Promise<void> {
    const cdp = this.#cdp
    if (!cdp || this.#pauses) return
    await cdp.send('Page.startScreencast', { format: 'jpeg', quality: JPEG_QUALITY, everyNthFrame: 1 })
    // a fill began meanwhile: stop again (#frame drops anything that comes)
    if (this.#pauses) return void cdp.send('Page.stopScreencast').catch(() => {}) // the page may be gone: nothing paints
    // off the chain: a picture may never come (tab-picture.ts), and a detach must not wait for it
    void this.#snapshot()
  }

  /** A still page paints nothing: a picture now, so a viewer never waits for the next paint. */
  async #snapshot(): Promise<void> {
    const cdp = this.#cdp
    const page = this.#page
    if (!cdp || !page || this.#pauses) return
    const shot = await tabPicture(page, cdp, JPEG_QUALITY)
    const size = page.viewportSize() ?? DEFAULT_VIEWPORT
    if (shot && this.#cdp === cdp) this.#frame(shot, size.width, size.height)
  }

  async #detach(): Promise<void> {
    const cdp = this.#cdp
    const page = this.#page
    this.#cdp = undefined
    this.#page = undefined
    if (page && this.#onNavigated) page.off('framenavigated', this.#onNavigated)
    if (!this.#viewers.size) {
      clearInterval(this.#follow)
      this.#follow = undefined
    }
    if (!cdp) return
    await cdp.send('Page.stopScreencast').catch(() => {}) // a closed page stopped painting already
    await cdp.detach().catch(() => {}) // likewise
    // no frame event can come from a detached session
    if (!this.#cdp) this.#attached = false
  }

  /** The one place a frame leaves the pod: never while a fill runs. */
  #frame(jpeg: string, width: number, height: number): void {
    if (this.#pauses > 0 || !this.#viewers.size) return
    const msg = JSON.stringify({ type: 'frame', jpeg, width, height } satisfies LiveEvent)
    for (const ws of this.#viewers) {
      if (ws.readyState !== WebSocket.OPEN || ws.bufferedAmount > MAX_BUFFERED) continue
      ws.send(msg)
      this.counts.sent++
    }
  }

  #pageEvent(): LiveEvent {
    let url = ''
    try {
      url = (this.#page ?? this.#activePage())?.url() ?? ''
    } catch {
      // a browser going away has no URL to show; the viewer keeps the last one
    }
    const guard = this.session.echoGuard
    const active = this.session.configured ? this.session.activeTab : undefined
    const tabs = this.session.tabs.map((t) => {
      let tabUrl = ''
      try {
        tabUrl = t.page.url()
      } catch {
        // a tab closing under us shows without a URL until the next event
      }
      return { id: t.id, url: guard.redact(tabUrl), active: t === active }
    })
    return { type: 'page', url: guard.redact(url), acting: this.#acting > 0, tabs }
  }

  #send(ws: WebSocket, e: LiveEvent): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(e))
  }

  #broadcast(e: LiveEvent): void {
    for (const ws of this.#viewers) this.#send(ws, e)
  }

  // --- a person's input ------------------------------------------------------------------

  #input(text: string): void {
    // nothing reaches the page while a secret is being typed into it
    if (this.#pauses) return
    const cdp = this.#cdp
    if (!cdp) return
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch {
      return
    }
    const parsed = LiveInput.safeParse(raw)
    if (!parsed.success) return
    const e = parsed.data
    const sent =
      e.type === 'mouse'
        ? cdp.send('Input.dispatchMouseEvent', { type: e.event, x: e.x, y: e.y, button: e.button ?? 'none', clickCount: e.clickCount ?? 0, modifiers: e.modifiers ?? 0 })
        : e.type === 'wheel'
          ? cdp.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x: e.x, y: e.y, deltaX: e.deltaX, deltaY: e.deltaY, modifiers: e.modifiers ?? 0 })
          : cdp.send('Input.dispatchKeyEvent', {
            type: e.event === 'keyUp' ? 'keyUp' : e.text ? 'keyDown' : 'rawKeyDown',
            key: e.key, code: e.code, text: e.event === 'keyDown' ? e.text : undefined, unmodifiedText: e.event === 'keyDown' ? e.text : undefined,
            windowsVirtualKeyCode: e.keyCode, nativeVirtualKeyCode: e.keyCode, modifiers: e.modifiers ?? 0,
          })
    void sent.catch(() => {}) // an event for a page that just closed is lost, as in any browser
  }
}
