// The one check every selector an agent gives passes before it is used: Playwright's own
// parser (the client's, then the page's engines, each part counted under a short deadline),
// plus the bodies Playwright accepts that can never name an element. A selector that fails
// is 400 invalid_selector with the parser's words, at once, on every element tool and
// credential_fill alike. Design: docs/sessions.md#the-toolbox (Selectors)
import { createRequire } from 'node:module'
import type { Locator, Page } from 'playwright-core'
import { errors } from '../../contracts/errors.ts'
import { selectorProblem } from '../errors.ts'
import { target } from '../perception/refs.ts'

interface SelectorPart {
  name: string
  body: unknown
  source: string
}
interface ParsedSelector {
  parts: SelectorPart[]
  capture?: number
}
interface SelectorParser {
  parseSelector(selector: string): ParsedSelector
  stringifySelector(selector: ParsedSelector, forceEngineName?: boolean): string
}

// Playwright's client-side parser (the module its own client loads): the same split into
// parts, CSS parse and nesting rules a locator call applies before it reaches the page
const parser = (createRequire(import.meta.url)('playwright-core/lib/coreBundle') as { iso: SelectorParser }).iso
if (typeof parser?.parseSelector !== 'function' || typeof parser.stringifySelector !== 'function') {
  throw new Error('playwright-core no longer exposes its selector parser (lib/coreBundle iso)')
}

/** engines whose body is a selector of its own (Playwright's kNestedSelectorNames) */
const NESTED = new Set(['internal:has', 'internal:has-not', 'internal:and', 'internal:or', 'internal:chain', 'left-of', 'right-of', 'above', 'below', 'near'])
/** engines Playwright still parses but no longer ships: a query through them throws a TypeError */
const REMOVED = new Set(['_react', '_vue'])
/** parts that only mean something after another part: never counted on their own */
const CHAINED_ONLY = new Set(['nth', 'visible', 'internal:control'])
/** how long the page may take to count a selector before the action goes ahead unchecked */
const PROBE_MS = 2000
/** the page went away mid-count: no verdict on the selector (the action reports the page) */
const PAGE_GONE = /has been closed|Execution context was destroyed|Frame was detached|frame got detached|Target closed|navigat/i

/**
 * Refuses a selector that cannot name an element, 400 invalid_selector with the parser's
 * words; resolves for every other (one that merely matches nothing yet included).
 */
export async function checkSelector(page: Page, selector: string): Promise<void> {
  if (/aria-ref\s*=/i.test(selector)) throw errors.invalidSelector('pass a ref from perceive as ref, not inside a selector')
  let parsed: ParsedSelector
  try {
    parsed = parser.parseSelector(selector)
  } catch (e) {
    throw errors.invalidSelector(words(e))
  }
  const probes = new Set([selector])
  const visit = (chain: ParsedSelector, nested: boolean): void => {
    for (const [i, part] of chain.parts.entries()) {
      const problem = partProblem(part, i === 0 && !nested)
      if (problem) throw errors.invalidSelector(problem)
      if (NESTED.has(part.name)) visit((part.body as { parsed: ParsedSelector }).parsed, true)
      // an engine parses its body in the page only when a root element reaches it: each part
      // is also counted from the document's element, whatever comes before it
      else if (!CHAINED_ONLY.has(part.name)) probes.add(`:root >> ${parser.stringifySelector({ parts: [part] }, true)}`)
    }
  }
  visit(parsed, false)
  const refusal = await inPage(page, [...probes])
  if (refusal !== undefined) throw errors.invalidSelector(refusal)
}

/** A tool's element, by ref or by a selector that passed checkSelector. */
export async function locate(page: Page, by: { selector?: string; ref?: string }): Promise<Locator> {
  if (by.ref === undefined && by.selector !== undefined) await checkSelector(page, by.selector)
  return target(page, by)
}

/** What is wrong with one part on its own terms, or null. */
function partProblem(part: SelectorPart, first: boolean): string | null {
  if (REMOVED.has(part.name)) return `the ${part.name} engine is not available: select by role, text, test id or CSS`
  if (part.name === 'nth' || part.name === 'visible') {
    // either names an element only relative to the part before it
    if (first) return `"${part.name}" selector cannot be first`
    const body = String(part.body)
    if (part.name === 'nth' && !/^\s*-?\d+\s*$/.test(body)) return `nth=${body.trim()}: the index must be an integer (0 the first match, -1 the last)`
    if (part.name === 'visible' && body.trim() !== 'true' && body.trim() !== 'false') return `visible=${body.trim()}: must be true or false`
  }
  return null
}

/** Counts each probe in the page (counting never waits for an element): the first refusal's words. */
async function inPage(page: Page, probes: string[]): Promise<string | undefined> {
  const counted = Promise.all(probes.map((probe) => page.locator(probe).count().then(() => undefined, (e: unknown) => {
    const message = e instanceof Error ? e.message : ''
    return PAGE_GONE.test(message.split('\n')[0] ?? '') ? undefined : words(e)
  })))
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined[]>((resolve) => (timer = setTimeout(() => resolve([]), PROBE_MS)))
  try {
    return (await Promise.race([counted, late])).find((w) => w !== undefined)
  } finally {
    clearTimeout(timer)
  }
}

/** The parser's words; never an engine's internal TypeError. */
function words(e: unknown): string {
  if (!(e instanceof Error)) return ''
  const said = selectorProblem(e)
  return /\bTypeError\b/.test(said) ? 'the browser could not evaluate this selector' : said
}
