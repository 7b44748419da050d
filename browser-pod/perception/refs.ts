// Element refs: what perceive's snapshot writes as [ref=e12] (inside a frame [ref=f1e3])
// and every element tool takes instead of a selector. Playwright's refs are shifted per
// document, so a ref kept from an earlier page never names an element of the new one:
// it answers 409 stale_ref. One book per tab. See docs/perception.md.
import type { Frame, Locator, Page } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'
import type { AriaNode } from './render.ts'

const REF = /^(f\d+)?e(\d+)$/

interface FrameDocument {
  /** performance.timeOrigin of the document these numbers belong to */
  doc: number
  /** what is added to Playwright's number within this document */
  base: number
  /** Playwright's prefix of the frame's refs in this document (undefined: none seen yet) */
  prefix: string | undefined
}

/**
 * The refs' book of one tab. Frames are keyed as agents see them: '' for the main frame,
 * Playwright's `f<seq>` for a child frame (it keeps its seq across its navigations). The
 * main frame's refs are written without a prefix, whatever Playwright gives it: Playwright
 * numbers the main frame anew with each document it navigates to (`f3e2`).
 */
export class RefBook {
  /** per frame: its current document */
  private readonly current = new Map<string, FrameDocument>()
  /** per frame: the highest number handed out in any of its documents */
  private readonly highest = new Map<string, number>()

  /**
   * Records `doc` as the frame's document, its refs written by Playwright with `prefix`
   * (a child frame's is its key; the main frame's is read from the snapshot). A new
   * document gets numbers above all given before; so does one seen with another prefix
   * (a snapshot that raced a navigation paired refs of one document with the other).
   */
  bind(frame: string, doc: number, prefix: string | undefined = frame): void {
    const now = this.current.get(frame)
    if (now && now.doc === doc && (prefix === undefined || now.prefix === undefined || now.prefix === prefix)) {
      if (prefix !== undefined) now.prefix = prefix
      return
    }
    this.current.set(frame, { doc, base: this.highest.get(frame) ?? 0, prefix })
  }

  /** The document a frame was last bound to (undefined: never seen). */
  documentOf(frame: string): number | undefined {
    return this.current.get(frame)?.doc
  }

  /** The ref an agent is given for Playwright's ref of the frame's current document. */
  give(playwrightRef: string): string {
    const m = REF.exec(playwrightRef)
    if (!m) return playwrightRef
    const prefix = m[1] ?? ''
    const frame = prefix === '' || prefix === this.current.get('')?.prefix ? '' : prefix
    const n = Number(m[2]) + (this.current.get(frame)?.base ?? 0)
    if (n > (this.highest.get(frame) ?? 0)) this.highest.set(frame, n)
    return `${frame}e${n}`
  }

  /** Playwright's ref and the document for an agent's ref; undefined when it belongs to no current document. */
  take(ref: string): { playwrightRef: string; doc: number } | undefined {
    const m = REF.exec(ref)
    if (!m) return undefined
    const frame = this.current.get(m[1] ?? '')
    if (!frame || frame.prefix === undefined) return undefined
    const n = Number(m[2]) - frame.base
    if (n < 1) return undefined
    return { playwrightRef: `${frame.prefix}e${n}`, doc: frame.doc }
  }
}

/**
 * Playwright's prefixes in a snapshot: the main frame's (of the refs outside every iframe;
 * undefined when it has none) and, for each child frame, the first ref inside it.
 */
export function framePrefixes(roots: ReadonlyArray<AriaNode | string>): { main: string | undefined; children: Map<string, string> } {
  let main: string | undefined
  const children = new Map<string, string>()
  const seen: Array<{ ref: string; inFrame: boolean }> = []
  const visit = (nodes: ReadonlyArray<AriaNode | string>, inFrame: boolean): void => {
    for (const n of nodes) {
      if (typeof n === 'string') continue
      if (n.ref) seen.push({ ref: n.ref, inFrame })
      // an iframe's element is its parent frame's; what it holds is the child frame's
      if (n.children) visit(n.children, inFrame || n.role === 'iframe')
    }
  }
  visit(roots, false)
  for (const { ref, inFrame } of seen) {
    if (!inFrame && main === undefined) main = /^(f\d+)?e/.exec(ref)?.[1] ?? ''
  }
  for (const { ref } of seen) {
    const prefix = /^(f\d+)e/.exec(ref)?.[1]
    if (prefix && prefix !== main && !children.has(prefix)) children.set(prefix, ref)
  }
  return { main, children }
}

/**
 * Runs in Playwright's utility world, where its snapshot marks each element it gave a ref
 * with `_ariaRef` ({role, name, ref}). Playwright gives an element a new ref when its role
 * or name changes (a search box renamed by what is typed into it), and the old ref then
 * names nothing. An accessor in that world keeps the element's first number instead, so
 * the same element keeps its ref for as long as its document lives; refs Playwright set
 * before (own properties, which would hide the accessor) are taken over. Answers the
 * document's timeOrigin.
 */
const KEEP_REFS = `(() => {
  const proto = Element.prototype
  if (!Object.getOwnPropertyDescriptor(proto, '_ariaRef')) {
    const kept = new WeakMap()
    Object.defineProperty(proto, '_ariaRef', {
      configurable: true,
      get() { return kept.get(this) },
      set(next) {
        const number = kept.get(this) && typeof kept.get(this).ref === 'string' && /e\\d+$/.exec(kept.get(this).ref)
        if (number && next && typeof next.ref === 'string') next.ref = next.ref.replace(/e\\d+$/, number[0])
        kept.set(this, next)
      },
    })
  }
  const roots = [document]
  while (roots.length) {
    for (const el of roots.pop().querySelectorAll('*')) {
      if (Object.prototype.hasOwnProperty.call(el, '_ariaRef')) {
        const mark = el._ariaRef
        delete el._ariaRef
        el._ariaRef = mark
      }
      if (el.shadowRoot) roots.push(el.shadowRoot)
    }
  }
  return performance.timeOrigin
})()`

/** Playwright's own frame object behind a client frame (the pod runs Playwright in process). */
interface ServerFrame {
  nonStallingEvaluateInExistingContext(expression: string, world: 'utility'): Promise<unknown>
  /** the number Playwright writes before a child frame's refs (`f<seq>e3`); a child frame keeps it across its navigations */
  seq?: unknown
}

function serverFrame(frame: Frame): ServerFrame | undefined {
  try {
    const connection = (frame as unknown as { _connection?: { toImpl?: (x: unknown) => unknown } })._connection
    const server = connection?.toImpl?.(frame) as Partial<ServerFrame> | undefined
    return typeof server?.nonStallingEvaluateInExistingContext === 'function' ? (server as ServerFrame) : undefined
  } catch {
    return undefined
  }
}

/**
 * The prefix Playwright gives a child frame's refs, read from its own frame object without a
 * round trip to the page; undefined when its internals moved (the caller then asks the page).
 */
export function childFramePrefix(frame: Frame): string | undefined {
  const seq = serverFrame(frame)?.seq
  return typeof seq === 'number' && Number.isInteger(seq) && seq > 0 ? `f${seq}` : undefined
}

/** per frame: the document in which its elements keep their refs across renames */
const keeping = new WeakMap<Frame, number>()

/**
 * Right after a snapshot (Playwright's world then exists): in each frame whose document is
 * new here, makes its elements keep their refs when renamed (KEEP_REFS). When Playwright's
 * internals moved, nothing is done: a renamed element then gets a new ref and its old one
 * answers 409 stale_ref, as before — slower for the agent, never the wrong element.
 */
export async function keepRefsAcrossRenames(frames: ReadonlyArray<{ frame: Frame; doc: number }>): Promise<void> {
  await Promise.all(frames.map(async ({ frame, doc }) => {
    if (!Number.isFinite(doc) || keeping.get(frame) === doc) return
    // a failure (the document went, the frame detached, Playwright's internals moved) leaves the
    // frame unmarked, so the next snapshot tries again; meanwhile a renamed element's old ref
    // answers stale_ref, as before, never naming another element: nothing to report
    const evaluating = serverFrame(frame)?.nonStallingEvaluateInExistingContext(KEEP_REFS, 'utility').catch(() => undefined)
    if (!evaluating) return
    // a page that hangs right after the snapshot holds no action up: tried again with the next one
    let timer: ReturnType<typeof setTimeout> | undefined
    const done = await Promise.race([evaluating, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 2000)))])
    clearTimeout(timer)
    if (typeof done === 'number') keeping.set(frame, done)
  }))
}

const books = new WeakMap<Page, RefBook>()

/** The tab's ref book (one per page, made on first use). */
export function refBook(page: Page): RefBook {
  let book = books.get(page)
  if (!book) books.set(page, (book = new RefBook()))
  return book
}

/**
 * The element an agent's ref names, on the active tab: the same element perceive
 * listed, in the same document, still on the page. Anything else is the typed 409
 * telling the agent to perceive again; nothing is waited for, nothing guessed.
 */
export async function locateRef(page: Page, ref: string): Promise<Locator> {
  const taken = refBook(page).take(ref)
  if (!taken) throw errors.staleRef(ref)
  const locator = page.getByRef(taken.playwrightRef)
  // count() does not wait: a ref whose element left the page matches nothing at once
  const found = await locator.count().catch(() => 0)
  if (found !== 1) throw errors.staleRef(ref)
  const doc = await locator.evaluate(() => performance.timeOrigin, undefined, { timeout: 2000 }).catch(() => null)
  if (doc !== taken.doc) throw errors.staleRef(ref)
  return locator
}

/**
 * The element a tool names, by ref or by selector (the contract lets through exactly
 * one; a selector is Playwright's, strict as always). A selector that reaches into
 * Playwright's own ref engine would bypass the document check above: refused.
 */
export async function target(page: Page, by: { selector?: string; ref?: string }): Promise<Locator> {
  if (by.ref !== undefined) return locateRef(page, by.ref)
  const selector = by.selector
  if (selector === undefined) throw errors.invalidRequest('give exactly one of ref or selector')
  if (/aria-ref\s*=/i.test(selector)) throw errors.invalidSelector('pass a ref from perceive as ref, not inside a selector')
  return page.locator(selector)
}
