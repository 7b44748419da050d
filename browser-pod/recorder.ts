// Session recordings: an rrweb DOM timeline (not a video) recorded from an isolated world
// of every page, so page scripts cannot see, stop or forge it, and every batch passes the
// echo guard like any string leaving the pod. Inputs are recorded masked. A full buffer
// drops batches (counted) rather than slow driving.
// Design: docs/sessions.md#recordings
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { CDPSession, Page } from 'playwright-core'
import type { PodSession } from './session.ts'

/** The isolated world's name (page script never sees it). */
export const RECORD_WORLD = '__nightjar_record'
const BINDING = '__nightjarRecordEmit'
const FLUSH = '__nightjarRecordFlush'
const BATCH_MS = 100
/** What the buffer holds at most before batches are dropped (the api-server reads it every few seconds). */
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024
/** What one read returns at most (the api-server reads again while `more`). */
const MAX_READ_BYTES = 8 * 1024 * 1024

let recorderSource: string | undefined
/**
 * rrweb's record-only UMD bundle (@rrweb/record: 77 KB against the full rrweb's 282 KB — it
 * is compiled in every document, so its size is paid on every navigation), defining
 * `rrwebRecord` in the world it runs in, then our start-up.
 */
function source(): string {
  if (recorderSource) return recorderSource
  const require = createRequire(import.meta.url)
  const bundle = readFileSync(join(dirname(require.resolve('@rrweb/record')), 'record.umd.min.cjs'), 'utf8')
  // The UMD wrapper looks for module/define: in the isolated world neither exists, so it
  // sets globalThis.rrwebRecord there (never in the page's world).
  recorderSource = `${bundle}\n;(${BOOT})(${JSON.stringify(BINDING)}, ${JSON.stringify(FLUSH)}, ${BATCH_MS});`
  return recorderSource
}

/**
 * Runs in the isolated world of each document, top frames only (rrweb records same-origin
 * iframes from there). Plain JavaScript in a string: a compiled function's toString()
 * may call the compiler's helpers, which do not exist in the page.
 */
const BOOT = `(binding, flushName, batchMs) => {
  const g = globalThis
  if (window.top !== window || g.__nightjarRecording || !g.rrwebRecord) return
  g.__nightjarRecording = true
  // Chromium refuses the custom element registry to isolated worlds: every customElements.get
  // throws a DOMException, and rrweb asks once per serialised element (and catches it) — that
  // alone doubled the cost of a snapshot. A custom element's name always holds a hyphen, and
  // whether it is one is all rrweb records (isCustom, so the replay can define it).
  Object.defineProperty(g, 'customElements', { value: { get: (name) => (String(name).includes('-') ? class {} : undefined) }, configurable: true })
  let buf = []
  let timer
  // A navigation away hands over what is batched while the document still runs
  // (beforeunload; a call through the binding at pagehide is lost). But a document with a
  // beforeunload listener makes Chromium ask it before every navigation — ~20 ms each on
  // this machine — so the listener is there only while a batch waits.
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    removeEventListener('beforeunload', flush)
    if (!buf.length) return
    const batch = buf
    buf = []
    try { g[binding](JSON.stringify(batch)) } catch (e) { /* the binding is gone: nothing to report to */ }
  }
  g[flushName] = flush
  g.rrwebRecord.record({
    emit(e) {
      buf.push(e)
      if (timer !== undefined) return
      timer = setTimeout(flush, batchMs)
      addEventListener('beforeunload', flush)
    },
    maskAllInputs: true,
    // the full snapshot when the document is parsed rather than at the load event: the DOM
    // is whole by then, and a navigation waits for 'load' anyway, so the snapshot overlaps
    // the rest of the load instead of lengthening it (drive round 1.12-1.20x unrecorded,
    // was 1.22-1.31x; what changes before load arrives as ordinary mutations, and a
    // stylesheet still loading is inlined when it arrives)
    recordAfter: 'DOMContentLoaded',
    // no canvas pixels, no inlined images or fonts: small timelines, nothing fetched twice
    recordCanvas: false,
    inlineImages: false,
    collectFonts: false,
    sampling: { mousemove: 100, scroll: 150 },
    // scripts, comments and head metadata replay nothing: leave them out of every snapshot
    // (title changes stay: the replay shows them, and they pass the echo guard like the rest)
    slimDOMOptions: { script: true, comment: true, headFavicon: true, headWhitespace: true, headMetaDescKeywords: true, headMetaSocial: true, headMetaRobots: true, headMetaHttpEquiv: true, headMetaAuthorship: true, headMetaVerification: true },
  })
}`

export interface RecordedChunk {
  seq: number
  /** rrweb events, as recorded (already through the echo guard) */
  events: unknown[]
}

export class SessionRecorder {
  #started = false
  #seq = 0
  #chunks: Array<RecordedChunk & { bytes: number }> = []
  #bytes = 0
  #dropped = 0
  /** the CDP session of each page */
  readonly #pages = new Map<Page, CDPSession>()

  private readonly session: PodSession
  constructor(session: PodSession) {
    this.session = session
  }

  get started(): boolean {
    return this.#started
  }

  #attached: Promise<void> = Promise.resolve()

  /**
   * Starts recording every page of the session, open now or later. Idempotent. Resolves
   * when the pages open now record every document they load next: the caller drives them
   * as soon as recording_start answers, and a navigation that beat the recorder's script
   * would be missing from the timeline.
   */
  start(): Promise<void> {
    if (this.#started) return this.#attached
    this.#started = true
    // returned, so a tab opened with a URL waits for the attach too (PodSession.whenHooked)
    this.session.onPage((page) => this.#attach(page))
    this.#attached = this.session.whenOpenPagesHooked()
    return this.#attached
  }

  async #attach(page: Page): Promise<void> {
    try {
      const cdp = await page.context().newCDPSession(page)
      this.#pages.set(page, cdp)
      page.once('close', () => this.#pages.delete(page))
      cdp.on('Runtime.bindingCalled', (e) => {
        if (e.name === BINDING) this.#intake(e.payload)
      })
      // Page.enable: without it Chromium runs a new-document script in the documents existing
      // now (runImmediately) but in no later one (secrets/field-mask.ts measured the same)
      await cdp.send('Page.enable')
      // Runtime.enable: without it no Runtime.bindingCalled reaches this session, so no event
      // arrives (measured: the recording tests fail without it)
      await cdp.send('Runtime.enable')
      await cdp.send('Runtime.addBinding', { name: BINDING, executionContextName: RECORD_WORLD })
      await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: source(), worldName: RECORD_WORLD, runImmediately: true })
    } catch {
      // the page closed while attaching: nothing of it to record
    }
  }

  #intake(payload: string): void {
    let events: unknown
    try {
      events = JSON.parse(payload)
    } catch {
      return // not ours: only our isolated world can call the binding, but never trust a shape
    }
    if (!Array.isArray(events) || !events.length) return
    const bytes = payload.length
    if (this.#bytes + bytes > MAX_BUFFERED_BYTES) {
      this.#dropped += events.length
      return
    }
    // the echo guard at intake: the buffer never holds a secret this session has filled
    const scrubbed = this.session.echoGuard.scrub(events)
    this.#chunks.push({ seq: ++this.#seq, events: scrubbed, bytes })
    this.#bytes += bytes
  }

  /**
   * Asks each page to hand over the events it holds now (before a final read). The
   * recording world of the document open now is found by name, not from execution-context
   * events collected along the way: Chromium gives back the frame's existing world of that
   * name, while a bookkeeping of context events could be stale after a cross-process
   * navigation, and a snapshot still batched in the page when the session ends would be lost.
   */
  async flush(): Promise<void> {
    await Promise.all([...this.#pages.values()].map(async (cdp) => {
      try {
        const { frameTree } = await cdp.send('Page.getFrameTree')
        const { executionContextId } = await cdp.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: RECORD_WORLD })
        await cdp.send('Runtime.evaluate', { expression: `globalThis.${FLUSH}?.()`, contextId: executionContextId, returnByValue: true })
      } catch {
        // the page navigated or closed meanwhile: it handed its batch over at pagehide, or has nothing left
      }
    }))
  }

  /**
   * The chunks after `after` (everything up to it is acknowledged and freed), at most
   * MAX_READ_BYTES of them; `more` when there are others waiting.
   */
  read(after: number): { chunks: RecordedChunk[]; more: boolean; dropped: number; recording: boolean } {
    while (this.#chunks.length && this.#chunks[0].seq <= after) this.#bytes -= this.#chunks.shift()!.bytes
    const out: RecordedChunk[] = []
    let size = 0
    for (const c of this.#chunks) {
      if (out.length && size + c.bytes > MAX_READ_BYTES) break
      out.push({ seq: c.seq, events: c.events })
      size += c.bytes
    }
    return { chunks: out, more: out.length < this.#chunks.length, dropped: this.#dropped, recording: this.#started }
  }
}

const recorders = new WeakMap<PodSession, SessionRecorder>()

/** The session's recorder (one per pod session). */
export function recorder(session: PodSession): SessionRecorder {
  let r = recorders.get(session)
  if (!r) recorders.set(session, (r = new SessionRecorder(session)))
  return r
}
