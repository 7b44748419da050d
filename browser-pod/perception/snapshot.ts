// Taking a snapshot of a tab: Playwright's AI snapshot (iframes of any origin inlined with
// their own refs), the title, the secret values to redact and, on a small page, the visible
// text, all in one round trip; then rendered (render.ts) and redacted (redaction.ts).
// Why it is read this way: docs/perception.md.
import { randomBytes } from 'node:crypto'
import type { Frame, Page } from 'playwright-core'
import { NAVIGATION_TIMEOUT_MS } from '../session.ts'
import { pageVersion } from './page-watch.ts'
import { redact } from './redaction.ts'
import { childFramePrefix, framePrefixes, keepRefsAcrossRenames, refBook } from './refs.ts'
import { flatten, preformattedBlocks, shownUrl, treeCost, uncoveredText, type AriaNode, type Line } from './render.ts'

export interface Snapshot {
  id: string
  url: string
  /** the url as answers show it (render.ts shownUrl: a long one abbreviated) */
  shownUrl: string
  title: string
  /** the main frame's document */
  doc: number
  lines: Line[]
  /** the visible text lines (redacted) that carry a word the lines do not */
  text: string
  /** ordered line lists a cursor walks, by view key */
  views: Map<string, number[]>
  /** the page's version (page-watch.ts) read before the tree: unchanged since, the snapshot still holds */
  version?: string
  /** the visible text was read and compared (the tree left it room within the budget it was taken for) */
  textRead?: boolean
}

interface PageInfo {
  title: string
  /** document.body.innerText, read in the same round trip on a page of few elements (else null) */
  text: string | null
  secrets: string[]
  /** the text of each `<pre>` holding a line break, as shown (the tree collapses its whitespace) */
  pre: string[]
  /** performance.timeOrigin: tells this document from every other of the frame */
  doc: number
}

/** Up to this many elements the visible text is read in the same round trip as the title
 * and the secrets; a larger page has it read only when its tree fits the budget. */
const TEXT_WITH_INFO_MAX_ELEMENTS = 1000

/** per tab: the documents of its child frames when it was last snapshotted */
const frameDocs = new WeakMap<Page, string>()

/**
 * Snapshots the page: the tree, and the visible text lines the tree does not say (when the
 * tree leaves `textBudget` room). `guard` masks what the pod's echo guard masks (shownUrl).
 */
export async function takeSnapshot(page: Page, textBudget: number, guard: (s: string) => string = (s) => s, version?: string): Promise<Snapshot> {
  const children = page.frames().filter((f) => f !== page.mainFrame())
  // read before the tree, so a change while it is taken counts as a change since; a page with
  // child frames is not watched in them, so its snapshots are never reused
  if (version === undefined && !children.length) version = await pageVersion(page)
  // All in parallel: the tree, title/secrets (and on a small page the text) of the main
  // frame, and secrets and documents of child frames (only pages with iframes pay for those).
  const [json, info, ...frameInfos] = await Promise.all([
    // a reference page of 10,000 elements takes seconds to walk: the navigation's time, not an action's
    // without boxes: what the viewport shows is read only when a first answer needs it (viewport.ts)
    page.ariaSnapshotJSON({ mode: 'ai', timeout: NAVIGATION_TIMEOUT_MS }) as Promise<unknown>,
    page.mainFrame().evaluate(collectPageInfo, TEXT_WITH_INFO_MAX_ELEMENTS),
    ...children.map((f) => infoOf(f)),
  ])
  const roots = (Array.isArray(json) ? json : [json]) as Array<AriaNode | string>
  const secrets = [...new Set(info.secrets.concat(...frameInfos.map((i) => i.secrets)))]
  const book = refBook(page)
  // the main frame's prefix is Playwright's per document, its refs shown unprefixed (refs.ts);
  // each child frame's document is read through the first ref Playwright gave inside it
  const { main, children: firstRefs } = framePrefixes(roots)
  book.bind('', info.doc, main)
  // in a new document, its elements keep their refs when renamed from now on (refs.ts)
  const keeping = keepRefsAcrossRenames([{ frame: page.mainFrame(), doc: info.doc }, ...children.map((frame, i) => ({ frame, doc: frameInfos[i]!.doc }))])
  // Each child frame's prefix is bound to the document read beside the tree: Playwright's
  // frame object says which prefix is whose. Only when it cannot (its internals moved) is the
  // document asked through a ref of the frame, a locator round trip per frame — the one fixed
  // cost a page with iframes paid on every navigation. Skipped when every child frame still
  // has the documents it had at the last snapshot and every prefix is bound. (A frame that
  // navigates meanwhile is caught by locateRef's document check: 409 stale_ref, never the
  // wrong element.)
  const docs = frameInfos.map((i) => i.doc).sort().join(' ')
  const unchanged = frameDocs.get(page) === docs && frameInfos.every((i) => Number.isFinite(i.doc)) &&
    [...firstRefs.keys()].every((prefix) => book.documentOf(prefix) !== undefined)
  if (!unchanged) {
    const docOfPrefix = new Map<string, number>()
    children.forEach((frame, i) => {
      const prefix = childFramePrefix(frame)
      if (prefix && Number.isFinite(frameInfos[i]!.doc)) docOfPrefix.set(prefix, frameInfos[i]!.doc)
    })
    await Promise.all([...firstRefs].map(async ([prefix, ref]) => {
      const doc = docOfPrefix.get(prefix) ??
        await page.getByRef(ref).evaluate(() => performance.timeOrigin, undefined, { timeout: 2000 }).catch(() => Number.NaN)
      book.bind(prefix, doc)
    }))
  }
  frameDocs.set(page, docs)
  await keeping
  const blocks = preformattedBlocks(info.pre.concat(...frameInfos.map((i) => i.pre)))
  const lines = flatten(roots, { give: (r) => book.give(r), secrets, blocks, guard })
  const snapshot: Snapshot = {
    id: randomBytes(6).toString('base64url'),
    url: page.url(),
    shownUrl: shownUrl(page.url(), (s) => guard(redact(s, secrets, false))),
    title: redact(info.title, secrets, false),
    doc: info.doc,
    lines,
    text: '',
    views: new Map(),
    version: children.length ? undefined : version,
    textRead: false,
  }
  // a tree over the budget leaves no room for text: its lines are not worth comparing
  if (treeCost(lines) < textBudget) {
    snapshot.textRead = true
    const text = info.text ?? (await page.mainFrame().evaluate(() => (document.body ? document.body.innerText : '')).catch(() => ''))
    // redacted before it is compared, so a secret is never a word the tree lacks
    if (text) snapshot.text = uncoveredText(redact(text, secrets, false), lines)
  }
  return snapshot
}

function infoOf(frame: Frame): Promise<PageInfo> {
  // a child frame's text is not wanted (its words are in the tree, inlined): 0 elements
  return frame.evaluate(collectPageInfo, 0).catch((): PageInfo => ({ title: '', text: null, secrets: [], pre: [], doc: Number.NaN }))
}

/**
 * Runs in the page. Collects the values to redact: password fields, and any field the
 * screen shows masked (-webkit-text-security), so a page can only make perception redact
 * more, never less. Walks shadow roots too. (No nested named functions: tsx's keepNames
 * would wrap them in a helper that does not exist in the page.)
 */
function collectPageInfo(textMaxElements: number): PageInfo {
  const secrets: string[] = []
  const roots: Array<Document | ShadowRoot> = [document]
  while (roots.length) {
    for (const el of Array.from(roots.pop()!.querySelectorAll('*'))) {
      if (el instanceof HTMLInputElement && el.type === 'password') {
        if (el.value) secrets.push(el.value)
      } else if (((el instanceof HTMLInputElement && /^(text|email|tel|search|url|number)$/.test(el.type)) || el instanceof HTMLTextAreaElement) && el.value) {
        const security = getComputedStyle(el).getPropertyValue('-webkit-text-security')
        if (security && security !== 'none') secrets.push(el.value)
      } else if (el instanceof HTMLElement && el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) {
        const security = getComputedStyle(el).getPropertyValue('-webkit-text-security')
        if (security && security !== 'none') {
          if (el.textContent) secrets.push(el.textContent)
          if (el.innerText && el.innerText !== el.textContent) secrets.push(el.innerText)
        }
      }
      if (el.shadowRoot) roots.push(el.shadowRoot)
    }
  }
  // a reference page's grammar and code blocks; bounded, so a page of huge blocks cannot swell the round trip
  const pre: string[] = []
  let preChars = 0
  for (const el of Array.from(document.getElementsByTagName('pre'))) {
    const shown = (el as HTMLElement).innerText
    if (!shown.includes('\n') || preChars + shown.length > 400_000) continue
    pre.push(shown)
    preChars += shown.length
  }
  // getElementsByTagName's length is counted natively, without building a list
  const small = document.getElementsByTagName('*').length <= textMaxElements
  return { title: document.title, text: small ? (document.body ? document.body.innerText : '') : null, secrets, pre, doc: performance.timeOrigin }
}
