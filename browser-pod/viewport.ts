// Which of the last AI snapshot's refs the viewport shows: what perceive's first answer
// puts first on a page larger than its budget.
//
// Playwright can give every node of the snapshot its bounding box (`boxes: true`), but
// it does so by serialising one more object per node: on a reference page of 3,000
// nodes that is 40 % more JSON and 80–120 ms more than the tree itself, while reading
// every element's rectangle in the page takes 10–20 ms. So the tree is taken without
// boxes, and when it turns out not to fit the budget, the refs in view are read in one
// round trip inside the world where Playwright took the snapshot: its script marks each
// element it gave a ref with `_ariaRef` (an expando of Playwright's isolated world,
// invisible to the page's own scripts), and the expression below lists those whose
// rectangle meets the viewport. That reads Playwright internals (the world's name and
// the expando), pinned with playwright-core's version; when either is missing the
// caller falls back to the snapshot with boxes, so a Playwright upgrade can only make
// perceive slower, never wrong (test/browser-pod/refs.test.ts holds the behaviour).
import type { Page } from 'playwright-core'
import { devtools } from './devtools.ts'

/** Playwright names its isolated world `__playwright_utility_world_<page guid>` */
const WORLD_PREFIX = '__playwright_utility_world_'

/** per tab: the main frame's id (it stays with the tab across its navigations) */
const mainFrames = new WeakMap<Page, string>()

/**
 * Runs in Playwright's world of the main frame: the refs of elements whose rectangle
 * meets the viewport (open shadow roots included, as the snapshot walks them).
 */
const IN_VIEW = `(() => {
  const out = [], w = innerWidth, h = innerHeight, roots = [document]
  while (roots.length) {
    for (const el of roots.pop().querySelectorAll('*')) {
      const ref = el._ariaRef && el._ariaRef.ref
      if (ref) {
        const b = el.getBoundingClientRect()
        if (b.x < w && b.y < h && b.x + b.width > 0 && b.y + b.height > 0) out.push(ref)
      }
      if (el.shadowRoot) roots.push(el.shadowRoot)
    }
  }
  return out
})()`

/**
 * Playwright's refs (as its snapshot wrote them) of the main frame's elements in the
 * viewport, read right after a snapshot; undefined when they cannot be read this way.
 */
export async function refsInView(page: Page): Promise<Set<string> | undefined> {
  // (no session of our own: the caller asks Playwright for boxes instead)
  const cdp = await devtools(page)
  if (!cdp) return undefined
  try {
    let frameId = mainFrames.get(page)
    if (!frameId) mainFrames.set(page, (frameId = (await cdp.send('Page.getFrameTree')).frameTree.frame.id))
    // Runtime.enable reports every live context before it answers; it is turned off again
    // at once, so this session is not sent every console message of the page meanwhile.
    const world = WORLD_PREFIX + (page as unknown as { _guid?: string })._guid
    let context: number | undefined
    const seen = ({ context: c }: { context: { id: number; name: string; auxData?: Record<string, unknown> } }) => {
      if (c.name === world && c.auxData?.frameId === frameId) context = c.id
    }
    cdp.on('Runtime.executionContextCreated', seen)
    try {
      await cdp.send('Runtime.enable')
    } finally {
      cdp.off('Runtime.executionContextCreated', seen)
      // refused only when the session is gone, and a gone session has nothing left enabled
      await cdp.send('Runtime.disable').catch(() => {})
    }
    if (context === undefined) {
      mainFrames.delete(page) // read the frame id again next time
      return undefined
    }
    const r = await cdp.send('Runtime.evaluate', { expression: IN_VIEW, contextId: context, returnByValue: true })
    const refs = r.result.value
    return Array.isArray(refs) && !r.exceptionDetails ? new Set(refs.filter((x): x is string => typeof x === 'string')) : undefined
  } catch {
    return undefined
  }
}
