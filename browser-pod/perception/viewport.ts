// Which of a snapshot's elements the viewport shows: what perceive's first answer puts
// first on a page larger than its budget. Read in one round trip inside Playwright's own
// world (refsInView), or, when Playwright's internals moved, from a second snapshot with
// boxes, so an upgrade can only make perceive slower, never wrong. See docs/perception.md.
import type { Page } from 'playwright-core'
import { devtools } from '../devtools.ts'
import { NAVIGATION_TIMEOUT_MS } from '../session.ts'
import { markInView, treeCost, type AriaNode } from './render.ts'
import type { Snapshot } from './snapshot.ts'

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

/**
 * Before a first answer: when the page is larger than the budget, marks the lines the
 * viewport shows. A page that fits has every line in its answer: nothing to read.
 */
export async function readViewport(page: Page, snap: Snapshot, budget: number): Promise<void> {
  if (treeCost(snap.lines) <= budget) return
  const shown = (await refsInView(page)) ?? (await refsInViewFromBoxes(page))
  markInView(snap.lines, shown)
}

/** The fallback of readViewport: the same refs, from Playwright's boxes (a second snapshot; same refs for the same elements). */
export async function refsInViewFromBoxes(page: Page): Promise<Set<string>> {
  // a page that cannot be read a second time now (closing, navigating) has no refs in view:
  // the first answer is then the outline and the page from the top, still whole and correct
  const json = await page.ariaSnapshotJSON({ mode: 'ai', boxes: true, timeout: NAVIGATION_TIMEOUT_MS }).catch(() => [])
  const vp = page.viewportSize() ?? { width: 1280, height: 720 }
  const shown = new Set<string>()
  const visit = (node: AriaNode | string): void => {
    if (typeof node === 'string') return
    const b = node.box
    if (node.ref && b && b.x < vp.width && b.y < vp.height && b.x + b.width > 0 && b.y + b.height > 0) shown.add(node.ref)
    if (node.role !== 'iframe') for (const child of node.children ?? []) visit(child)
  }
  for (const root of (Array.isArray(json) ? json : [json]) as Array<AriaNode | string>) visit(root)
  return shown
}
