// Element refs: what perceive's snapshot writes as [ref=e12] (inside a frame [ref=f1e3])
// and every element tool takes instead of a selector. Playwright's refs are shifted per
// document, so a ref kept from an earlier page never names an element of the new one:
// it answers 409 stale_ref. One book per tab. See docs/perception.md.
import type { Locator, Page } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'

const REF = /^(f\d+)?e(\d+)$/

interface FrameDocument {
  /** performance.timeOrigin of the document these numbers belong to */
  doc: number
  /** what is added to Playwright's number within this document */
  base: number
}

export class RefBook {
  /** per frame prefix: its current document */
  private readonly current = new Map<string, FrameDocument>()
  /** per frame prefix: the highest number handed out in any of its documents */
  private readonly highest = new Map<string, number>()

  /** Records `doc` as the frame's document; a new one gets numbers above all given before. */
  bind(prefix: string, doc: number): void {
    const now = this.current.get(prefix)
    if (now && now.doc === doc) return
    this.current.set(prefix, { doc, base: this.highest.get(prefix) ?? 0 })
  }

  /** The document a prefix was last bound to (undefined: never seen). */
  documentOf(prefix: string): number | undefined {
    return this.current.get(prefix)?.doc
  }

  /** The ref an agent is given for Playwright's ref of the frame's current document. */
  give(playwrightRef: string): string {
    const m = REF.exec(playwrightRef)
    if (!m) return playwrightRef
    const prefix = m[1] ?? ''
    const frame = this.current.get(prefix)
    const n = Number(m[2]) + (frame?.base ?? 0)
    if (n > (this.highest.get(prefix) ?? 0)) this.highest.set(prefix, n)
    return `${prefix}e${n}`
  }

  /** Playwright's ref and the document for an agent's ref; undefined when it belongs to no current document. */
  take(ref: string): { playwrightRef: string; doc: number } | undefined {
    const m = REF.exec(ref)
    if (!m) return undefined
    const prefix = m[1] ?? ''
    const frame = this.current.get(prefix)
    if (!frame) return undefined
    const n = Number(m[2]) - frame.base
    if (n < 1) return undefined
    return { playwrightRef: `${prefix}e${n}`, doc: frame.doc }
  }
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
