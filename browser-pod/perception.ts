// Perception: url, title, the page's accessibility snapshot with a ref on every element
// (browser-pod/refs.ts), read within a budget, and what an action changed.
//
// The snapshot is Playwright's AI snapshot (ariaSnapshotJSON, mode 'ai'): iframes of any
// origin are inlined with their own refs (f1e3). It is rendered here, one element a line,
// in Playwright MCP's notation (`- button "Delete" [ref=e9]`), so that it can be read in
// parts: the first answer holds what matters first (what the viewport shows, then the
// outline of landmarks and headings, then the page from the top) within maxChars; a
// cursor reads the rest in document order, every line exactly once. `ref` reads one
// element's subtree, `query` the elements whose words match, with the headings and
// landmarks above them. The last snapshot of each tab is kept: cursors read it, and the
// next page-changing action is diffed against it (`changes`).
//
// `text` is counted in the budget after the tree, and holds only the visible text lines
// that carry a word the tree does not say (most pages: none; a custom `role=textbox` editor's
// content is one that does), so no page sends its words twice.
//
// Password values are redacted: the AI snapshot gives an input's value in clear (and can
// fold it into a label's accessible name), so every password field's live value is
// collected in the same round trip, in every frame, and scrubbed from every string of the
// tree before anything is rendered, kept or diffed. A field that renders masked is
// redacted the same way, whatever its type: a text or email field the secure fill typed
// into (secrets/field-mask.ts keeps it masked), or one the page itself masks with
// -webkit-text-security. Judged by the computed style, so a page can only ever make
// perception redact more, never less, than the screen shows.
import { randomBytes } from 'node:crypto'
import type { Frame, Page } from 'playwright-core'
import { errors } from '../contracts/errors.ts'
import type { NodeInput, NodeOutput } from '../contracts/node-api.ts'
import { actionError } from './errors.ts'
import { NAVIGATION_TIMEOUT_MS, type PodSession } from './session.ts'
import { MASK, snapshotEscaped, yamlQuoted } from './secrets/echo-guard.ts'
import { refBook } from './refs.ts'
import { refsInView } from './viewport.ts'

export { MASK }
/** Below this length a value is only redacted where it stands as a textbox value;
 * scrubbing every occurrence of a 1–3 character string would shred the page text. */
const GLOBAL_SCRUB_MIN = 4
/** perceive's budget when the caller gives none (characters of snapshot and text) */
export const DEFAULT_MAX_CHARS = 12_000
/** the budget of an action's `changes` */
export const CHANGES_MAX_CHARS = 3_000
/** a query's match in a text run brings its whole element when the element is at most this many lines */
const QUERY_ROW_LINES = 12
/** up to this many matches a query answers them with their headings and landmarks; more, the matches alone */
const QUERY_FEW = 10

interface PageInfo {
  title: string
  /** document.body.innerText, read in the same round trip on a page of few elements (else null) */
  text: string | null
  secrets: string[]
  /** performance.timeOrigin: tells this document from every other of the frame */
  doc: number
}

/** One node of Playwright's AI snapshot JSON. */
interface AriaNode {
  role: string
  name?: string
  ref?: string
  text?: string
  children?: Array<AriaNode | string>
  box?: { x: number; y: number; width: number; height: number }
  [prop: string]: unknown
}

/** One rendered line: an element, or a text run inside one. */
export interface Line {
  depth: number
  /** without indentation and the leading "- " */
  text: string
  ref?: string
  role: string
  /** 1: a landmark or a heading of level 1–2; 2: a deeper heading; 0: not outline */
  outline: 0 | 1 | 2
  level: number
  /** what the viewport shows (marked by markInView when a first answer needs it; true until then) */
  inView: boolean
  /** Playwright's ref for this element, as its snapshot wrote it */
  pwRef?: string
  /** inside a child frame: judged in view with the iframe that holds it */
  inChildFrame: boolean
  /** index of the enclosing line (-1: none) */
  parent: number
  /** index after this line's subtree */
  end: number
}

export interface Snapshot {
  id: string
  url: string
  title: string
  /** the main frame's document */
  doc: number
  lines: Line[]
  /** the visible text lines (redacted) that carry a word the lines do not */
  text: string
  /** ordered line lists a cursor walks, by view key */
  views: Map<string, number[]>
}

const latest = new WeakMap<Page, Snapshot>()

const LANDMARKS = new Set(['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'search', 'form', 'region'])
// (not `active`: which element has focus changes with every action and would fill every diff)
const STATES = ['checked', 'disabled', 'expanded', 'invalid', 'level', 'pressed', 'selected'] as const
const SKIP_PROPS = new Set<string>(['role', 'name', 'ref', 'text', 'children', 'box', 'cursor', 'active', ...STATES])

// --- taking a snapshot -----------------------------------------------------------------

/**
 * Up to this many elements the visible text is read in the same round trip as the title
 * and the password values (innerText of such a page costs a few milliseconds; a second
 * round trip after the tree costs as much again). A larger page has its text read only
 * when its tree turns out to fit the budget: a PostgreSQL reference page (1,600 elements)
 * would otherwise ship 60,000 characters of words its 130,000-character tree already
 * carries, for nothing; the small pages agents act on have tens to hundreds.
 */
const TEXT_WITH_INFO_MAX_ELEMENTS = 1000

/** per tab: the documents of its child frames when it was last snapshotted (see takeSnapshot) */
const frameDocs = new WeakMap<Page, string>()

/** Snapshots the page: the tree, and the visible text lines the tree does not say. */
export async function takeSnapshot(page: Page, textBudget = DEFAULT_MAX_CHARS): Promise<Snapshot> {
  const children = page.frames().filter((f) => f !== page.mainFrame())
  // All in parallel: the tree, title/password values (and on a small page the text) of the
  // main frame, and password values and documents of child frames (only pages with iframes
  // pay for those).
  const [json, info, ...frameInfos] = await Promise.all([
    // a reference page of 10,000 elements takes seconds to walk: the navigation's time, not an action's
    // without boxes: what the viewport shows is read only when a first answer needs it (markInView)
    page.ariaSnapshotJSON({ mode: 'ai', timeout: NAVIGATION_TIMEOUT_MS }) as Promise<unknown>,
    page.mainFrame().evaluate(collectPageInfo, TEXT_WITH_INFO_MAX_ELEMENTS),
    ...children.map((f) => infoOf(f)),
  ])
  const roots = (Array.isArray(json) ? json : [json]) as Array<AriaNode | string>
  const secrets = [...new Set(info.secrets.concat(...frameInfos.map((i) => i.secrets)))]
  const book = refBook(page)
  book.bind('', info.doc)
  // each child frame's document, read through the first ref Playwright gave inside it
  const firstRefs = new Map<string, string>()
  visitRefs(roots, (ref) => {
    const prefix = /^(f\d+)e/.exec(ref)?.[1]
    if (prefix && !firstRefs.has(prefix)) firstRefs.set(prefix, ref)
  })
  // That costs a locator round trip per frame (tens of milliseconds), and is needed only
  // when a frame's document may have changed: when every child frame still has the very
  // documents it had at the tab's last snapshot (and every prefix is bound already), no
  // frame navigated, so each prefix is still bound to its document. (A frame navigating
  // while this snapshot is taken can slip past this for one snapshot: its refs then name
  // the old document, and locateRef, which checks the element's document, answers 409
  // stale_ref instead of acting; the next snapshot sees the new document and binds it.)
  const docs = frameInfos.map((i) => i.doc).sort().join(' ')
  const unchanged = frameDocs.get(page) === docs && frameInfos.every((i) => Number.isFinite(i.doc)) &&
    [...firstRefs.keys()].every((prefix) => book.documentOf(prefix) !== undefined)
  if (!unchanged) {
    await Promise.all([...firstRefs].map(async ([prefix, ref]) => {
      const doc = await page.getByRef(ref).evaluate(() => performance.timeOrigin, undefined, { timeout: 2000 }).catch(() => Number.NaN)
      book.bind(prefix, doc)
    }))
  }
  frameDocs.set(page, docs)
  const lines = flatten(roots, { give: (r) => book.give(r), secrets })
  const snapshot: Snapshot = {
    id: randomBytes(6).toString('base64url'),
    url: page.url(),
    title: redact(info.title, secrets, false),
    doc: info.doc,
    lines,
    text: '',
    views: new Map(),
  }
  // A tree over the budget leaves the first answer no room for text (and the walk that
  // reads on sends none): its lines are not worth comparing (12 ms on a reference page).
  if (treeCost(lines) < textBudget) {
    const text = info.text ?? (await page.mainFrame().evaluate(() => (document.body ? document.body.innerText : '')).catch(() => ''))
    // redacted before it is compared, so a secret is never a word the tree lacks
    if (text) snapshot.text = uncoveredText(redact(text, secrets, false), lines)
  }
  return snapshot
}

function visitRefs(nodes: Array<AriaNode | string>, fn: (ref: string) => void): void {
  for (const n of nodes) {
    if (typeof n === 'string') continue
    if (n.ref) fn(n.ref)
    if (n.children) visitRefs(n.children, fn)
  }
}

function infoOf(frame: Frame): Promise<PageInfo> {
  // a child frame's text is not wanted (its words are in the tree, inlined): 0 elements
  return frame.evaluate(collectPageInfo, 0).catch((): PageInfo => ({ title: '', text: null, secrets: [], doc: Number.NaN }))
}

/**
 * Runs in the page. Walks shadow roots too: a password field inside a web component
 * counts. (No nested named functions: tsx's keepNames would wrap them in a helper
 * that does not exist in the page.)
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
  // getElementsByTagName's length is counted natively, without building a list
  const small = document.getElementsByTagName('*').length <= textMaxElements
  return { title: document.title, text: small ? (document.body ? document.body.innerText : '') : null, secrets, doc: performance.timeOrigin }
}

// --- rendering -------------------------------------------------------------------------

interface FlattenOptions {
  give: (playwrightRef: string) => string
  secrets: readonly string[]
}

/** The tree as lines, in document order; secrets scrubbed from every string first. */
export function flatten(roots: Array<AriaNode | string>, opts: FlattenOptions): Line[] {
  const lines: Line[] = []
  const scrub = (s: string) => redact(s, opts.secrets, false)
  const visit = (node: AriaNode | string, depth: number, parent: number, inChildFrame: boolean): void => {
    if (typeof node === 'string') {
      lines.push({ depth, text: `text: ${quoted(scrub(node))}`, role: 'text', outline: 0, level: 0, inView: true, inChildFrame, parent, end: lines.length + 1 })
      return
    }
    // a nameless wrapper says nothing an agent can use: its children stand in its place
    const wrapper = node.role === 'generic' && !node.name && node.text === undefined && node.cursor !== 'pointer' && !!node.children?.length
    if (wrapper) return visitAll(node.children!, depth, parent, inChildFrame)
    // an element without a ref, a name, a value or anything inside says nothing (an empty paragraph)
    if (!node.ref && !node.name && (node.text === undefined || node.text === '') && !node.children?.length) return
    const index = lines.length
    const level = typeof node.level === 'number' ? node.level : 0
    const outline: 0 | 1 | 2 = node.role === 'heading' ? (level > 0 && level <= 2 ? 1 : 2) : LANDMARKS.has(node.role) && (node.role !== 'region' && node.role !== 'form' || !!node.name) ? 1 : 0
    const ref = node.ref ? opts.give(node.ref) : undefined
    lines.push({ depth, text: renderNode(node, ref, opts.secrets), ref, pwRef: node.ref, role: node.role, outline, level, inView: true, inChildFrame, parent, end: 0 })
    visitAll(node.children ?? [], depth + 1, index, inChildFrame || node.role === 'iframe')
    lines[index]!.end = lines.length
  }
  const visitAll = (nodes: Array<AriaNode | string>, depth: number, parent: number, inChildFrame: boolean): void => {
    nodes.forEach((node, k) => {
      if (!isLabelOfNeighbour(node, nodes[k - 1], nodes[k + 1])) visit(node, depth, parent, inChildFrame)
    })
  }
  visitAll(roots, 0, -1, false)
  return lines
}

/**
 * A text run that only repeats the name of the control beside it: a label (`Your name`
 * beside `textbox "Your name"`). The control's line says it, with the ref to act on.
 */
function isLabelOfNeighbour(node: AriaNode | string, before: AriaNode | string | undefined, after: AriaNode | string | undefined): boolean {
  if (typeof node !== 'string') return false
  const words = normalizeWhitespace(node)
  return !!words && [before, after].some((n) => typeof n === 'object' && !!n.ref && n.name === words)
}

/**
 * Marks the lines the viewport shows, given the refs of the main frame's elements in
 * view: an element of the main frame by its own ref; a text run, an element without a
 * ref and everything inside a child frame with the element that holds it (a frame's
 * content is in view with its iframe).
 */
export function markInView(lines: Line[], shown: ReadonlySet<string>): void {
  for (const l of lines) {
    const holder = l.parent >= 0 ? lines[l.parent]! : undefined
    l.inView = l.pwRef && !l.inChildFrame ? shown.has(l.pwRef) : holder ? holder.inView : true
  }
}

/** The tree's cost in characters, as a first answer spends its budget. */
function treeCost(lines: readonly Line[]): number {
  return lines.reduce((n, l) => n + lineCost(l), 0)
}

/**
 * Before a first answer: when the page is larger than the budget, marks what the
 * viewport shows (browser-pod/viewport.ts), else (Playwright's internals moved) from a
 * snapshot with boxes. A page that fits has every line in its answer: nothing to read.
 */
async function readViewport(page: Page, snap: Snapshot, budget: number): Promise<void> {
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

/**
 * Page text in a snapshot line — a name, a value, a text run, a property — always in double
 * quotes, YAML-escaped (\" \\ \n \xNN), with the bracket of a `[ref=` inside written
 * `\x5b` (snapshotEscaped): whatever a page writes stays inside its quotes on its own line,
 * so it can never read as a ref, a line break or a `- role` line of its own. The tool
 * description (perceive) says so.
 */
function quoted(s: string): string {
  return `"${snapshotEscaped(s)}"`
}

/** A url property as it stands in a line: unquoted, with the bracket of a `[ref=` inside percent-encoded (the same URL). */
function urlShown(s: string): string {
  return s.replace(/\[(?=\s*ref\s*=)/gi, '%5B')
}

function renderNode(node: AriaNode, ref: string | undefined, secrets: readonly string[]): string {
  // a textbox's value that is a secret is masked where it stands, whatever its length
  const isSecretValue = node.role === 'textbox' && typeof node.text === 'string' && secrets.some((s) => s === node.text || normalizeWhitespace(s) === node.text)
  const scrub = (s: string) => redact(s, secrets, false)
  let out = node.role
  if (node.name) out += ' ' + quoted(scrub(node.name))
  for (const state of STATES) {
    const v = node[state]
    if (v === undefined || v === false) continue
    if (state === 'level') out += ` [level=${String(v)}]`
    else out += v === true ? ` [${state}]` : ` [${state}=${String(v)}]`
  }
  if (ref) out += ` [ref=${ref}]`
  if (node.cursor === 'pointer' && node.role !== 'link' && node.role !== 'button') out += ' [cursor=pointer]'
  for (const [k, v] of Object.entries(node)) {
    if (SKIP_PROPS.has(k) || (typeof v !== 'string' && typeof v !== 'number')) continue
    out += ` [${k}=${k === 'url' ? urlShown(scrub(String(v))) : quoted(scrub(String(v)))}]`
  }
  if (node.text !== undefined && node.text !== '') out += ': ' + (isSecretValue ? MASK : quoted(scrub(node.text)))
  return out
}

function lineCost(line: Line): number {
  return line.depth * 2 + 2 + line.text.length + 1
}

function renderLines(lines: readonly Line[], indices: readonly number[]): string {
  return indices.map((i) => '  '.repeat(lines[i]!.depth) + '- ' + lines[i]!.text).join('\n')
}

/** Where a later part of a walk starts: its enclosing elements, named without refs (they were given before). */
function breadcrumb(lines: readonly Line[], i: number): string {
  const path: string[] = []
  for (let p = lines[i]!.parent; p >= 0 && path.length < 6; p = lines[p]!.parent) path.unshift(lines[p]!.text.replace(/ \[ref=[^\]]+\]/, '').slice(0, 80))
  return path.length ? `# inside: ${path.join(' > ')}\n` : ''
}

/**
 * A string's words, as compared between the visible text and the tree: runs of letters,
 * digits and marks, and single symbols (★, €), whatever their length (a custom editor
 * holding "Hi", a badge saying "3"); case folded (innerText applies text-transform, the
 * tree does not) and compatibility-normalised (MathML's 𝑥 is the tree's x). Soft hyphens
 * and zero-width spaces are dropped first, as the tree drops them.
 */
function wordsOf(s: string): string[] {
  return s.replace(/[\u200b\u00ad]/g, '').normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}\p{M}]+|\p{S}/gu) ?? []
}

/**
 * The visible text lines that carry a word the tree does not hold; every other
 * line the tree already says (with the element around it and its ref), so sending it again
 * would only spend the budget. A line of punctuation alone (a mask, a dash) carries no word.
 */
export function uncoveredText(text: string, lines: readonly Line[]): string {
  if (!text) return ''
  const words = new Set<string>()
  for (const l of lines) for (const w of wordsOf(l.text)) words.add(w)
  const kept: string[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line && wordsOf(line).some((w) => !words.has(w))) kept.push(line)
  }
  return kept.join('\n')
}

// --- reading within a budget -----------------------------------------------------------

interface Part {
  snapshot: string
  text: string
  truncated: boolean
  cursor?: string
}

/**
 * The first answer of a page: what the viewport shows, then the outline (landmarks and
 * top headings, then deeper headings), then the page from the top, as far as the
 * budget goes; printed in document order. The rest is the default view's walk.
 */
function firstPart(snap: Snapshot, budget: number): Part {
  const { lines } = snap
  const chosen = new Set<number>()
  let used = 0
  const take = (i: number): boolean => {
    if (chosen.has(i)) return true
    const c = lineCost(lines[i]!)
    if (used + c > budget) return false
    chosen.add(i)
    used += c
    return true
  }
  lines.forEach((l, i) => l.inView && take(i))
  lines.forEach((l, i) => l.outline === 1 && take(i))
  lines.forEach((l, i) => l.outline === 2 && take(i))
  for (let i = 0; i < lines.length; i++) if (!take(i)) break
  const first = [...chosen].sort((a, b) => a - b)
  const rest = lines.map((_, i) => i).filter((i) => !chosen.has(i))
  // text is counted in the budget, after the tree: the lines the tree does not say, as far as they fit
  let text = ''
  const room = budget - used
  if (snap.text) text = snap.text.length <= room ? snap.text : room > 200 ? snap.text.slice(0, room - 1) + '…' : ''
  const part: Part = { snapshot: renderLines(lines, first), text, truncated: rest.length > 0 }
  if (rest.length) {
    snap.views.set('d', rest)
    part.cursor = `${snap.id}.d.0`
  }
  return part
}

/**
 * A stretch of a view from `pos`: whole lines while the budget lasts (at least one, cut if it
 * alone is over). A compact view ('c', a query's matches alone) is indented within each
 * match, not by the page's depth; `note` leads the first stretch.
 */
function walk(snap: Snapshot, key: string, view: readonly number[], pos: number, budget: number, note = ''): Part {
  const { lines } = snap
  const depths = key === 'c' ? compactDepths(lines, view) : undefined
  const head = note + (!depths && pos > 0 && pos < view.length ? breadcrumb(lines, view[pos]!) : '')
  const cost = (i: number) => (depths ? lineCost({ ...lines[i]!, depth: depths.get(i)! }) : lineCost(lines[i]!))
  let used = head.length
  const taken: number[] = []
  let i = pos
  for (; i < view.length; i++) {
    const c = cost(view[i]!)
    if (taken.length && used + c > budget) break
    taken.push(view[i]!)
    used += c
  }
  const body = depths ? taken.map((j) => '  '.repeat(depths.get(j)!) + '- ' + lines[j]!.text).join('\n') : renderLines(lines, taken)
  let snapshot = head + body
  if (snapshot.length > budget) snapshot = snapshot.slice(0, budget - 1) + '…'
  const part: Part = { snapshot, text: '', truncated: i < view.length }
  if (i < view.length) {
    snap.views.set(key, view as number[])
    part.cursor = `${snap.id}.${key}.${i}`
  }
  return part
}

/** The lines of one element's subtree. */
function subtree(snap: Snapshot, ref: string): number[] {
  const at = snap.lines.findIndex((l) => l.ref === ref)
  if (at < 0) throw errors.staleRef(ref)
  const out: number[] = []
  for (let i = at; i < snap.lines[at]!.end; i++) out.push(i)
  return out
}

/**
 * Roles an agent acts on. A query's match inside one (the `code` inside a table of
 * contents' link, the text of a menu item) comes back with it: its role, name and ref are
 * what the agent clicks.
 */
const ACTIONABLE = new Set([
  'link', 'button', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'treeitem', 'option', 'checkbox', 'radio', 'switch',
  'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton',
])
/** how many levels above a match the element to act on is looked for */
const ACTIONABLE_UP = 4

const actionable = (l: Line) => !!l.ref && (ACTIONABLE.has(l.role) || / \[cursor=pointer\]/.test(l.text))

/** The element to act on that holds line `i` (itself included), within ACTIONABLE_UP levels and its landmark; -1 when none. */
function actionableAround(lines: readonly Line[], i: number): number {
  for (let p = i, up = 0; p >= 0 && up <= ACTIONABLE_UP; p = lines[p]!.parent, up++) {
    if (actionable(lines[p]!)) return p
    if (up > 0 && lines[p]!.outline === 1 && lines[p]!.role !== 'heading') return -1 // a landmark: the match is not inside a control
  }
  return -1
}

/** One match as it is answered: the lines that show it, and whether they hold an element to act on. */
interface Unit { lines: number[]; acts: boolean }

/**
 * Lines holding every word of the query, each once, as units: a match inside an element to
 * act on comes with that element (whole when small, else the element and the path down to
 * the match); a text run with its element (and the element's controls when it is small: the
 * row that says "Bravo" and its Delete button); any other element alone.
 */
function matchUnits(snap: Snapshot, query: string): Unit[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean)
  const { lines } = snap
  /** lines a later match does not answer again (inside an element answered whole) */
  const covered = new Set<number>()
  /** lines already in a unit */
  const shown = new Set<number>()
  const units: Unit[] = []
  const span = (from: number) => Array.from({ length: lines[from]!.end - from }, (_, k) => from + k)
  const pathDown = (from: number, to: number) => {
    const path: number[] = []
    for (let p = to; p !== from && p >= 0; p = lines[p]!.parent) path.unshift(p)
    return [from, ...path]
  }
  /** a line's own words: its name, value or text, not its role or its [attributes] */
  const ownWords = (j: number) => wordsOf(lines[j]!.text.replace(/^[\w-]+/, '').replace(/ \[[^\]]*\]/g, ''))
  lines.forEach((l, i) => {
    if (covered.has(i) || !words.every((w) => l.text.toLowerCase().includes(w))) return
    const act = actionableAround(lines, i)
    let unit: number[]
    if (act >= 0) {
      const whole = lines[act]!.end - act <= QUERY_ROW_LINES
      const around = whole ? span(act) : pathDown(act, i)
      for (const j of around) covered.add(j)
      // what only repeats the element's own words (a menu item's label under it) says nothing more
      const said = new Set(wordsOf(lines[act]!.text))
      unit = around.filter((j) => j === act || j === i || ownWords(j).some((w) => !said.has(w)))
    } else {
      unit = !l.ref && l.parent >= 0 ? (lines[l.parent]!.end - l.parent <= QUERY_ROW_LINES ? span(l.parent) : [l.parent, i]) : [i]
      for (const j of unit) covered.add(j)
    }
    unit = unit.filter((j) => !shown.has(j))
    for (const j of unit) shown.add(j)
    if (unit.length) units.push({ lines: unit, acts: act >= 0 || unit.some((j) => actionable(lines[j]!)) })
  })
  return units
}

/** The units with what places them: the named headings above each and every landmark around it; in document order. */
function withSurroundings(snap: Snapshot, units: readonly Unit[]): number[] {
  const { lines } = snap
  const picked = new Set<number>(units.flatMap((u) => u.lines))
  const starts = new Set(units.map((u) => u.lines[0]!))
  const headings: number[] = [] // the heading chain above the current line, by level
  lines.forEach((l, i) => {
    if (l.role === 'heading') {
      while (headings.length && lines[headings.at(-1)!]!.level >= (l.level || 6)) headings.pop()
      headings.push(i)
    }
    if (!starts.has(i)) return
    // a heading without a name (its words are in its children) places nothing
    for (const h of headings) if (h !== i && /^heading "/.test(lines[h]!.text)) picked.add(h)
    for (let p = l.parent; p >= 0; p = lines[p]!.parent) if (lines[p]!.outline && lines[p]!.role !== 'heading') picked.add(p)
  })
  return [...picked].sort((a, b) => a - b)
}

/**
 * The view a query reads: the matches with their surroundings (headings, landmarks) in
 * document order when that fits the budget; otherwise — a query many elements match — the
 * matches alone, compactly ('c'): each unit once, those holding an element to act on first,
 * indented within itself only.
 */
function queryView(snap: Snapshot, query: string, budget: number): { key: 'q' | 'c'; view: number[]; count: number } {
  const units = matchUnits(snap, query)
  const full = withSurroundings(snap, units)
  if (units.length <= QUERY_FEW && treeCost(full.map((i) => snap.lines[i]!)) <= budget) return { key: 'q', view: full, count: units.length }
  const ordered = [...units.filter((u) => u.acts), ...units.filter((u) => !u.acts)]
  return { key: 'c', view: ordered.flatMap((u) => u.lines), count: units.length }
}

/** Each line's indentation in a compact view: one level below its parent when the parent is in the view, else none. */
function compactDepths(lines: readonly Line[], view: readonly number[]): Map<number, number> {
  const depth = new Map<number, number>()
  for (const i of view) {
    const p = lines[i]!.parent
    depth.set(i, p >= 0 && depth.has(p) ? depth.get(p)! + 1 : 0)
  }
  return depth
}

// --- the perceive action ---------------------------------------------------------------

export async function perceive(session: PodSession, input: NodeInput<'perceive'> = {}): Promise<NodeOutput<'perceive'>> {
  const page = session.page
  let budget = input.maxChars ?? DEFAULT_MAX_CHARS
  try {
    if (input.cursor !== undefined) return readOn(page, input.cursor, budget)
    const snap = await takeSnapshot(page, budget)
    latest.set(page, snap)
    const head = { url: snap.url, title: snap.title }
    // the answer's own lines (url, title, the cursor's note) are counted too
    budget -= framing(snap)
    if (input.ref !== undefined) return { ...head, ...walk(snap, `r${input.ref}`, subtree(snap, input.ref), 0, budget) }
    if (input.query !== undefined) {
      const { key, view, count } = queryView(snap, input.query, budget)
      if (!view.length) return { ...head, snapshot: `# nothing on the page matches ${quoted(input.query)}`, text: '', truncated: false }
      const note = key === 'c' ? `# ${count} matches of ${quoted(input.query)}, each once with the element to act on (those first)\n` : ''
      return { ...head, ...walk(snap, key, view, 0, budget, note) }
    }
    await readViewport(page, snap, budget)
    return { ...head, ...firstPart(snap, budget) }
  } catch (e) {
    throw actionError(e, 'perceive')
  }
}

function readOn(page: Page, cursor: string, budget: number): NodeOutput<'perceive'> {
  const m = /^([\w-]+)\.(d|q|c|r(?:f\d+)?e\d+)\.(\d+)$/.exec(cursor)
  const snap = latest.get(page)
  if (!m || !snap || snap.id !== m[1]) throw errors.staleCursor()
  const view = snap.views.get(m[2]!)
  const pos = Number(m[3])
  if (!view || pos > view.length) throw errors.staleCursor()
  return { url: snap.url, title: snap.title, ...walk(snap, m[2]!, view, pos, budget - framing(snap)) }
}

/** What an answer spends besides its lines: url, title and the note carrying the cursor. */
function framing(snap: Snapshot): number {
  return snap.url.length + snap.title.length + 120
}

// --- what an action changed -------------------------------------------------------------

/**
 * Snapshots the active tab after an action and says what changed since the tab's last
 * snapshot: `+` added elements (with their subtrees), `-` removed ones, `~` changed ones,
 * each with its ref, within CHANGES_MAX_CHARS, after a `url:` line when the document's
 * address changed. A new document (or a tab never read) is answered with its first part
 * instead (`new page: "title" url`). Undefined when the page cannot be read now.
 */
export async function changesAfter(session: PodSession): Promise<string | undefined> {
  const page = session.page
  if (page.isClosed()) return undefined
  await page.waitForLoadState('domcontentloaded', { timeout: 5000 }).catch(() => {}) // a page still loading is read as far as it got
  let next: Snapshot
  try {
    next = await takeSnapshot(page)
  } catch {
    return undefined
  }
  const before = latest.get(page)
  latest.set(page, next)
  if (!before || before.doc !== next.doc) {
    await readViewport(page, next, CHANGES_MAX_CHARS)
    const part = firstPart(next, CHANGES_MAX_CHARS)
    return `new page: ${quoted(next.title)} ${next.url}\n${part.snapshot}${part.truncated ? `\n# … more on the page: perceive with cursor ${part.cursor}` : ''}`
  }
  return diffSnapshots(before, next, CHANGES_MAX_CHARS)
}

/** An element's line with the lines under it that have no ref of their own (text runs, a select's options): what "changed" compares. */
function signatures(snap: Snapshot): Map<string, string> {
  const out = new Map<string, string>()
  for (const l of snap.lines) {
    if (l.ref) out.set(l.ref, l.text)
    else if (l.parent >= 0 && snap.lines[l.parent]!.ref) {
      const ref = snap.lines[l.parent]!.ref!
      out.set(ref, (out.get(ref) ?? '') + '\n' + l.text)
    }
  }
  return out
}

export function diffSnapshots(before: Snapshot, after: Snapshot, budget: number): string {
  const was = signatures(before)
  const now = signatures(after)
  const out: string[] = []
  // the same document at a new address (a single-page app's route, a #fragment): said first,
  // so an answer carrying changes never needs the url beside them
  if (before.url !== after.url) out.push(`url: ${after.url}`)
  let used = out[0] ? out[0].length + 1 : 0
  let left = 0
  const emit = (s: string) => {
    if (used + s.length + 1 > budget) return void left++
    out.push(s)
    used += s.length + 1
  }
  const isAdded = (i: number) => !!after.lines[i]!.ref && !was.has(after.lines[i]!.ref!)
  for (let i = 0; i < after.lines.length; i++) {
    const l = after.lines[i]!
    if (!l.ref) continue
    if (isAdded(i)) {
      // the topmost added element, with its whole subtree
      let p = l.parent
      while (p >= 0 && !after.lines[p]!.ref) p = after.lines[p]!.parent
      if (p >= 0 && isAdded(p)) continue
      for (let j = i; j < l.end; j++) emit(`${j === i ? '+' : ' '} ${'  '.repeat(after.lines[j]!.depth - l.depth)}${after.lines[j]!.text}`)
    } else if (was.get(l.ref) !== now.get(l.ref)) {
      emit(`~ ${l.text}`)
      for (let j = i + 1; j < l.end && !after.lines[j]!.ref; j++) emit(`    ${after.lines[j]!.text}`)
    }
  }
  for (const l of before.lines) {
    if (!l.ref || now.has(l.ref)) continue
    let p = l.parent
    while (p >= 0 && !before.lines[p]!.ref) p = before.lines[p]!.parent
    if (p >= 0 && !now.has(before.lines[p]!.ref!)) continue // inside a removed element: that one says it
    emit(`- ${l.text}`)
  }
  if (!out.length && !left) return 'no change on the page'
  if (left) out.push(`# … ${left} more changed lines: perceive to read the page`)
  return out.join('\n')
}

// --- redaction -------------------------------------------------------------------------

// Playwright normalises whitespace and YAML-quotes values that need it; mirror both so
// every rendering of a value is found.
function normalizeWhitespace(s: string): string {
  return s.replace(/[\u200b\u00ad]/g, '').replace(/[\r\n\s\t]+/g, ' ').trim()
}

function renderings(value: string): string[] {
  const n = normalizeWhitespace(value)
  const forms = new Set([value, n, `"${yamlQuoted(n)}"`, yamlQuoted(n), `"${snapshotEscaped(n)}"`, snapshotEscaped(n)])
  forms.delete('')
  // longest first, so a quoted form is replaced whole before its inner text
  return [...forms].sort((a, b) => b.length - a.length)
}

/**
 * Replaces password values in a snapshot (`isSnapshot`) or in visible text. Every
 * value, whatever its length, is masked where it is a textbox's value; values of
 * GLOBAL_SCRUB_MIN or more characters are masked everywhere else too.
 */
export function redact(input: string, secrets: readonly string[], isSnapshot: boolean): string {
  if (!secrets.length || !input) return input
  const unique = [...new Set(secrets)]
  let out = input
  if (isSnapshot) {
    const tails = unique.flatMap(renderings).map((r) => ': ' + r)
    out = out
      .split('\n')
      .map((line) => {
        if (!/^\s*- textbox\b/.test(line)) return line
        const tail = tails.find((t) => line.endsWith(t))
        return tail ? line.slice(0, line.length - tail.length) + ': ' + MASK : line
      })
      .join('\n')
  }
  for (const v of unique) {
    if (normalizeWhitespace(v).length < GLOBAL_SCRUB_MIN) continue
    for (const r of renderings(v)) if (r.length >= GLOBAL_SCRUB_MIN) out = out.split(r).join(MASK)
  }
  return out
}
