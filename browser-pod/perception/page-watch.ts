// Watching a tab's document from an isolated world of the pod's own (its globals are
// invisible to the page's scripts): when the page last changed, so an answer can wait for a
// page that renders from script to settle, and whether it changed since a snapshot, so
// perceive right after an action reuses that snapshot instead of taking another.
// See docs/perception.md ("One snapshot per page change").
import type { Page } from 'playwright-core'
import { devtools } from '../devtools.ts'

const WORLD = 'nightjar_page_watch'

/** a page that changes nothing for this long has settled */
export const SETTLE_QUIET_MS = 300
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

/** Has every later document of the tab watched from its start (before a navigation). */
export async function watchDocuments(page: Page): Promise<void> {
  if (registered.has(page)) return
  registered.add(page)
  const cdp = await devtools(page)
  await cdp?.send('Page.addScriptToEvaluateOnNewDocument', { source: INSTALL, worldName: WORLD }).catch(() => registered.delete(page))
}

async function inWatchWorld(page: Page, expression: string, awaitPromise = false): Promise<unknown> {
  const cdp = await devtools(page)
  if (!cdp) return undefined
  try {
    let frameId = mainFrames.get(page)
    if (!frameId) mainFrames.set(page, (frameId = (await cdp.send('Page.getFrameTree')).frameTree.frame.id))
    // the world of that name in the frame's current document (created on first use)
    const { executionContextId } = await cdp.send('Page.createIsolatedWorld', { frameId, worldName: WORLD })
    const r = await cdp.send('Runtime.evaluate', { expression, contextId: executionContextId, returnByValue: true, awaitPromise })
    return r.exceptionDetails ? undefined : r.result.value
  } catch {
    return undefined
  }
}

/**
 * What the page is now, as a string that differs after any change a snapshot could show:
 * its document and address, the viewport's size, its mutations and input events so far.
 * Undefined when it cannot be read (no DevTools session, a tab closing): nothing is reused then.
 */
export async function pageVersion(page: Page): Promise<string | undefined> {
  const v = await inWatchWorld(page, `(() => { const w = ${INSTALL}; w.observeShadows(); return ${VERSION} })()`)
  return typeof v === 'string' ? v : undefined
}


/**
 * Waits until the DOM has not mutated for SETTLE_QUIET_MS (at once when it has been quiet
 * that long already), at most SETTLE_CAP_MS: a page rendering from script after its load
 * is read once it has rendered, and one that never stops animating is still read. Gives
 * the page's version as it settled (read before a snapshot, it can only be older than the
 * tree: a change in between makes the next check differ, never match wrongly).
 */
export async function settled(page: Page): Promise<string | undefined> {
  const wait = inWatchWorld(page, `new Promise((resolve) => {
    const w = ${INSTALL}
    w.observeShadows()
    const start = performance.now()
    const tick = () => {
      const now = performance.now(), quiet = now - w.last
      if (quiet >= ${SETTLE_QUIET_MS} || now - start >= ${SETTLE_CAP_MS}) { w.observeShadows(); resolve(${VERSION}) }
      else setTimeout(tick, Math.min(${SETTLE_QUIET_MS} - quiet, ${SETTLE_CAP_MS} - (now - start)) + 1)
    }
    tick()
  })`, true)
  // a page whose own script holds its thread (timers never run) is read when the cap is over
  let timer: NodeJS.Timeout | undefined
  const cap = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), SETTLE_CAP_MS + 500)))
  const version = await Promise.race([wait, cap])
  clearTimeout(timer)
  return typeof version === 'string' ? version : undefined
}
