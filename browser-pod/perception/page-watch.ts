// Watching a tab's document from an isolated world of the pod's own (its globals are
// invisible to the page's scripts): when the page last changed, so an answer can wait for a
// page that renders from script to settle, and whether it changed since a snapshot, so
// perceive right after an action reuses that snapshot instead of taking another.
// See docs/perception.md ("One snapshot per page change").
import type { CDPSession, Page, Request } from 'playwright-core'
import { devtools } from '../devtools.ts'

const WORLD = 'nightjar_page_watch'

/** a page that changes nothing for this long, with none of its requests for data or
 * script in flight, has settled (the requests say a render is still coming; the quiet
 * alone would have to be long enough to cover a fetch, and every page would pay it) */
export const SETTLE_QUIET_MS = 100
/** and a page that never stops changing is read after this long */
export const SETTLE_CAP_MS = 3000

/**
 * Runs in the watch world, at the start of every document of a watched tab, or on first use
 * in a document that began before (idempotent). Counts the DOM's mutations (shadow roots too,
 * once found) and the input events that change what a snapshot says without a mutation
 * (a field's value, a hover's :hover styles, focus); keeps when the DOM last mutated.
 */
const INSTALL = `(() => {
  if (globalThis.__watch) return globalThis.__watch
  const w = { changes: 0, last: performance.now(), roots: new WeakSet(), shadows: 0 }
  const opts = { subtree: true, childList: true, attributes: true, characterData: true }
  const observer = new MutationObserver(() => { w.changes++; w.last = performance.now() })
  observer.observe(document, opts)
  for (const type of ['input', 'change', 'keydown', 'pointerdown', 'pointerover', 'focusin', 'focusout']) addEventListener(type, () => { w.changes++ }, true)
  w.observeShadows = () => {
    const stack = [document]
    while (stack.length) {
      for (const el of stack.pop().querySelectorAll('*')) {
        const root = el.shadowRoot
        if (!root) continue
        if (!w.roots.has(root)) { w.roots.add(root); observer.observe(root, opts); w.shadows++ }
        stack.push(root)
      }
    }
  }
  globalThis.__watch = w
  return w
})()`

/** the version's expression, in the watch world with `w` its watcher */
const VERSION = `[performance.timeOrigin, location.href, innerWidth, innerHeight, w.changes, w.shadows].join(' ')`

/** per tab: its main frame's id (it stays with the tab across navigations) */
const mainFrames = new WeakMap<Page, string>()
const registered = new WeakSet<Page>()

/** what a render may still be waiting for: a document, a script, data (not images, fonts or
 * a stream that never ends: an EventSource or a WebSocket is not a request here) */
const PENDING_TYPES = new Set(['document', 'script', 'fetch', 'xhr'])
/** per tab: its requests of those types in flight, how many have ended, and who waits for
 * them to end */
const inFlight = new WeakMap<Page, { requests: Set<Request>; ended: number; drained: Set<() => void> }>()

function trackRequests(page: Page): void {
  if (inFlight.has(page)) return
  const t = { requests: new Set<Request>(), ended: 0, drained: new Set<() => void>() }
  inFlight.set(page, t)
  const end = (r: Request) => {
    if (!t.requests.delete(r)) return
    t.ended++
    if (t.requests.size) return
    for (const wake of t.drained) wake()
    t.drained.clear()
  }
  page.on('request', (r) => { if (PENDING_TYPES.has(r.resourceType())) t.requests.add(r) })
  page.on('requestfinished', end)
  page.on('requestfailed', end)
  // a document replaced mid-request never finishes it: the new one starts with none
  page.on('framenavigated', (f) => {
    if (f !== page.mainFrame()) return
    for (const r of [...t.requests]) if (r.frame() === f && !r.isNavigationRequest()) end(r)
  })
}

/** resolves once none of the tab's tracked requests is in flight, or at the deadline */
function requestsDrained(page: Page, deadline: number): Promise<void> {
  const t = inFlight.get(page)
  if (!t || !t.requests.size) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, deadline - Date.now()))
    function done() { clearTimeout(timer); t!.drained.delete(done); resolve() }
    t.drained.add(done)
  })
}

/** Has every later document of the tab watched from its start (before a navigation). */
export async function watchDocuments(page: Page): Promise<void> {
  trackRequests(page)
  if (registered.has(page)) return
  registered.add(page)
  const cdp = await devtools(page)
  await cdp?.send('Page.addScriptToEvaluateOnNewDocument', { source: INSTALL, worldName: WORLD }).catch(() => registered.delete(page))
}

/** `expression`'s value in the watch world of one frame's current document (the world is created on first use) */
async function evaluateInWorld(cdp: CDPSession, frameId: string, expression: string, awaitPromise = false): Promise<unknown> {
  const { executionContextId } = await cdp.send('Page.createIsolatedWorld', { frameId, worldName: WORLD })
  const r = await cdp.send('Runtime.evaluate', { expression, contextId: executionContextId, returnByValue: true, awaitPromise })
  return r.exceptionDetails ? undefined : r.result.value
}

async function inWatchWorld(page: Page, expression: string, awaitPromise = false): Promise<unknown> {
  const cdp = await devtools(page)
  if (!cdp) return undefined
  try {
    let frameId = mainFrames.get(page)
    if (!frameId) mainFrames.set(page, (frameId = (await cdp.send('Page.getFrameTree')).frameTree.frame.id))
    return await evaluateInWorld(cdp, frameId, expression, awaitPromise)
  } catch {
    return undefined
  }
}

/** a document's version, read in the watch world (its watcher installed first if it is not yet) */
const READ_VERSION = `(() => { const w = ${INSTALL}; w.observeShadows(); return ${VERSION} })()`

/**
 * What the page is now, as a string that differs after any change a snapshot could show:
 * its document and address, the viewport's size, its mutations and input events so far.
 * Undefined when it cannot be read (no DevTools session, a tab closing): nothing is reused then.
 */
export async function pageVersion(page: Page): Promise<string | undefined> {
  const v = await inWatchWorld(page, READ_VERSION)
  return typeof v === 'string' ? v : undefined
}


/**
 * The versions of every document of the tab, its frames' too (the watcher is registered for
 * each frame's documents in the same isolated world): differs after any change a snapshot of
 * the whole tab could show. Undefined when one cannot be read — a frame in another process
 * (a cross-site iframe) is not reached through the tab's own DevTools session.
 */
export async function documentsVersion(page: Page): Promise<string | undefined> {
  const cdp = await devtools(page)
  if (!cdp) return undefined
  try {
    const ids: string[] = []
    type Node = { frame: { id: string }; childFrames?: Node[] }
    const collect = (node: Node): void => { ids.push(node.frame.id); for (const child of node.childFrames ?? []) collect(child) }
    collect((await cdp.send('Page.getFrameTree')).frameTree as Node)
    if (ids.length !== page.frames().length) return undefined
    const versions = await Promise.all(ids.map((frameId) => evaluateInWorld(cdp, frameId, READ_VERSION)))
    return versions.every((v) => typeof v === 'string') ? versions.join('\n') : undefined
  } catch {
    return undefined
  }
}

/** past this many elements a snapshot costs more than the quiet window it could overlap */
const EARLY_READ_MAX_ELEMENTS = 3000

/**
 * Whether a snapshot taken now, while the page's quiet window runs, is likely to stand: none
 * of the tab's document, script or data requests in flight (a render is coming), and a main
 * document small enough that a read thrown away costs little.
 */
export async function worthReadingEarly(page: Page): Promise<boolean> {
  if (inFlight.get(page)?.requests.size) return false
  const n = await inWatchWorld(page, 'document.getElementsByTagName("*").length')
  return typeof n === 'number' && n <= EARLY_READ_MAX_ELEMENTS
}

/**
 * Waits until the DOM has not mutated for SETTLE_QUIET_MS (at once when it has been quiet
 * that long already) and no document, script or data request of the tab is in flight, at
 * most SETTLE_CAP_MS: a page rendering from script after its load is read once it has
 * rendered, and one that never stops animating (or polls forever) is still read. Gives the
 * page's version as it settled (read before a snapshot, it can only be older than the tree:
 * a change in between makes the next check differ, never match wrongly).
 */
export async function settled(page: Page): Promise<string | undefined> {
  const deadline = Date.now() + SETTLE_CAP_MS
  let afterRequests = false
  for (;;) {
    const ended = inFlight.get(page)?.ended
    const version = await quiet(page, Math.max(0, deadline - Date.now()), afterRequests)
    const t = inFlight.get(page)
    if (Date.now() >= deadline || !t) return version
    // a request that ended means a render may follow: wait for the others, then for a whole
    // quiet window counted from then (the DOM was quiet while the request was out, however
    // long it took, so the quiet since the last mutation would pass before the answer is even
    // parsed). One that ended while the quiet's answer was on its way counts too: a loaded
    // machine can deliver that answer after the data came.
    if (!t.requests.size && t.ended === ended) return version
    await requestsDrained(page, deadline)
    afterRequests = true
  }
}

/** the page's version once its DOM has been quiet for SETTLE_QUIET_MS (counted from the
 * call when `fresh`, else from the last mutation), or after capMs */
async function quiet(page: Page, capMs: number, fresh: boolean): Promise<string | undefined> {
  const wait = inWatchWorld(page, `new Promise((resolve) => {
    const w = ${INSTALL}
    w.observeShadows()
    const start = performance.now(), since = ${fresh ? 'start' : '-Infinity'}
    const tick = () => {
      const now = performance.now(), quiet = now - Math.max(w.last, since)
      if (quiet >= ${SETTLE_QUIET_MS} || now - start >= ${Math.round(capMs)}) { w.observeShadows(); resolve(${VERSION}) }
      else setTimeout(tick, Math.min(${SETTLE_QUIET_MS} - quiet, ${Math.round(capMs)} - (now - start)) + 1)
    }
    // the first look is a timer too, not this evaluation's task: a renderer that was starved
    // (a loaded machine) runs the page's overdue timers first, ordered by when they were due,
    // while DevTools' message can jump ahead of them and find a quiet the page never had
    setTimeout(tick, 0)
  })`, true)
  // a page whose own script holds its thread (timers never run) is read when the cap is over
  let timer: NodeJS.Timeout | undefined
  const cap = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), capMs + 500)))
  const version = await Promise.race([wait, cap])
  clearTimeout(timer)
  return typeof version === 'string' ? version : undefined
}
