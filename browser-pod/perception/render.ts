// Rendering: Playwright's AI snapshot as lines, one element a line, in Playwright MCP's
// notation (`- button "Delete" [ref=e9]`), with page text always quoted so a page cannot
// forge a ref or a line. Pure: nodes in, lines and strings out. See docs/perception.md.
import { snapshotEscaped } from './snapshot-text.ts'
import { MASK, normalizeWhitespace, redact } from './redaction.ts'

/** One node of Playwright's AI snapshot JSON. */
export interface AriaNode {
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

const LANDMARKS = new Set(['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'search', 'form', 'region'])
// (not `active`: which element has focus changes with every action and would fill every diff)
const STATES = ['checked', 'disabled', 'expanded', 'invalid', 'level', 'pressed', 'selected'] as const
const SKIP_PROPS = new Set<string>(['role', 'name', 'ref', 'text', 'children', 'box', 'cursor', 'active', ...STATES])

interface FlattenOptions {
  /** the ref an agent is given for Playwright's (refs.ts) */
  give: (playwrightRef: string) => string
  secrets: readonly string[]
  /** the page's preformatted blocks as read (line breaks kept), by their text without whitespace (preformattedBlocks) */
  blocks?: ReadonlyMap<string, string>
  /** masks what the pod's echo guard masks: a long url is cut only after that, so no cut leaves part of a secret */
  guard?: (s: string) => string
}

/** The tree as lines, in document order; secrets scrubbed from every string first. */
export function flatten(roots: Array<AriaNode | string>, opts: FlattenOptions): Line[] {
  const lines: Line[] = []
  const scrub = (s: string) => redact(s, opts.secrets, false)
  const visit = (given: AriaNode | string, depth: number, parent: number, inChildFrame: boolean): void => {
    const node = typeof given === 'string' || !opts.blocks?.size ? given : withLineBreaks(given, opts.blocks)
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
    // the AI snapshot leaves a heading's name out when its words are in its children; the outline shows the heading alone
    const named = node.role === 'heading' && !node.name && node.children?.length ? { ...node, name: nameFromContent(node.children) } : node
    lines.push({ depth, text: renderNode(named, ref, opts.secrets, opts.guard), ref, pwRef: node.ref, role: node.role, outline, level, inView: true, inChildFrame, parent, end: 0 })
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

/** Roles whose content is a value a user typed or picked: never part of another element's name (it may be a secret). */
const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox'])
/** a name computed from content is cut here, as a heading's line must stay an outline's line */
const CONTENT_NAME_MAX = 200

/**
 * An element's name from its content, as the accessible name is computed from descendants:
 * text runs, and each element's name, else its text, else its own content. Pieces are joined
 * with a space, but not before closing punctuation.
 */
export function nameFromContent(children: ReadonlyArray<AriaNode | string>): string {
  let name = ''
  for (const p of contentPieces(children).map(normalizeWhitespace).filter(Boolean)) name += name && !/^[)\]},.;:!?]/.test(p) ? ' ' + p : p
  return name.length > CONTENT_NAME_MAX ? name.slice(0, CONTENT_NAME_MAX - 1) + '…' : name
}

function contentPieces(children: ReadonlyArray<AriaNode | string>): string[] {
  const pieces: string[] = []
  const visit = (nodes: ReadonlyArray<AriaNode | string>) => {
    for (const n of nodes) {
      if (typeof n === 'string') pieces.push(n)
      else if (VALUE_ROLES.has(n.role)) continue
      else if (n.name) pieces.push(n.name)
      else if (typeof n.text === 'string' && n.text) pieces.push(n.text)
      else if (n.children) visit(n.children)
    }
  }
  visit(children)
  return pieces
}

/** A text without any whitespace: how a preformatted block is told in the tree, whose whitespace the AI snapshot collapsed. */
export function squeezed(s: string): string {
  return normalizeWhitespace(s).replace(/ /g, '')
}

/**
 * The blocks read from a page (`<pre>` text with its line breaks), keyed for withLineBreaks;
 * only those that have a line break to give back, trimmed of the blank lines around them.
 */
export function preformattedBlocks(raw: readonly string[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const r of raw) {
    const block = r.replace(/^(?:[ \t]*\n)+|\s+$/g, '')
    if (block.includes('\n')) out.set(squeezed(block), block)
  }
  return out
}

/**
 * A node with a preformatted block's line breaks given back: its text when it is the whole
 * block (`<pre>`, or the `<code>` in it), else its text runs between the elements inside it
 * (a grammar's links), each aligned with the block. Unchanged when the words do not align.
 */
function withLineBreaks(node: AriaNode, blocks: ReadonlyMap<string, string>): AriaNode {
  if (VALUE_ROLES.has(node.role)) return node
  if (typeof node.text === 'string') {
    const block = node.text && blocks.get(squeezed(node.text))
    return block ? { ...node, text: block } : node
  }
  const kids = node.children
  // a block's runs sit directly in it, beside elements of no content of their own (links, spans)
  if (!kids?.some((k) => typeof k === 'string') || kids.some((k) => typeof k !== 'string' && k.children?.length)) return node
  const block = blocks.get(squeezed(contentPieces(kids).join('')))
  if (!block) return node
  let at = 0
  const aligned: Array<AriaNode | string> = []
  for (const k of kids) {
    const words = normalizeWhitespace(typeof k === 'string' ? k : VALUE_ROLES.has(k.role) ? '' : k.name || (typeof k.text === 'string' ? k.text : '')).split(' ').filter(Boolean)
    if (!words.length) {
      aligned.push(k)
      continue
    }
    const run = new RegExp('\\s*(' + words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+') + ')', 'y')
    run.lastIndex = at
    const m = run.exec(block)
    if (!m) return node
    at = run.lastIndex
    aligned.push(typeof k === 'string' ? m[1]! : k)
  }
  return { ...node, children: aligned }
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

/**
 * Page text in a snapshot line — a name, a value, a text run, a property — always in double
 * quotes, YAML-escaped (\" \\ \n \xNN), with the bracket of a `[ref=` inside written
 * `\x5b` (snapshotEscaped): whatever a page writes stays inside its quotes on its own line,
 * so it can never read as a ref, a line break or a `- role` line of its own. The tool
 * description (perceive) says so.
 */
export function quoted(s: string): string {
  return `"${snapshotEscaped(s)}"`
}

/** a url longer than this is shown abbreviated: a data: URL carries its whole document */
const URL_SHOWN_MAX = 200

/**
 * A url as perception shows it (a url property, the page's address): unquoted, with the
 * bracket of a `[ref=` inside percent-encoded (the same URL); past URL_SHOWN_MAX characters
 * abbreviated with its length (`data:text/html,…(12,345 chars)`).
 */
export function shownUrl(url: string, guard: (s: string) => string = (s) => s): string {
  let out = url
  if (url.length > URL_SHOWN_MAX) {
    const s = guard(url)
    const comma = s.indexOf(',')
    const head = /^data:/i.test(s) && comma > 0 && comma < 100 ? s.slice(0, comma + 1) : s.slice(0, URL_SHOWN_MAX - 40)
    out = `${head}…(${url.length.toLocaleString('en-US')} chars)`
  }
  return out.replace(/\[(?=\s*ref\s*=)/gi, '%5B')
}

function renderNode(node: AriaNode, ref: string | undefined, secrets: readonly string[], guard?: (s: string) => string): string {
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
    out += ` [${k}=${k === 'url' ? shownUrl(scrub(String(v)), guard) : quoted(scrub(String(v)))}]`
  }
  if (node.text !== undefined && node.text !== '') out += ': ' + (isSecretValue ? MASK : quoted(scrub(node.text)))
  return out
}

/** A line's cost in characters as it is printed: indentation, "- ", text, newline. */
export function lineCost(line: Line): number {
  return line.depth * 2 + 2 + line.text.length + 1
}

/** The tree's cost in characters, as a first answer spends its budget. */
export function treeCost(lines: readonly Line[]): number {
  return lines.reduce((n, l) => n + lineCost(l), 0)
}

export function renderLines(lines: readonly Line[], indices: readonly number[]): string {
  return indices.map((i) => '  '.repeat(lines[i]!.depth) + '- ' + lines[i]!.text).join('\n')
}

/** Where a later part of a walk starts: its enclosing elements, named without refs (they were given before). */
export function breadcrumb(lines: readonly Line[], i: number): string {
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
export function wordsOf(s: string): string[] {
  return s.replace(/[\u200b\u00ad]/g, '').normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}\p{M}]+|\p{S}/gu) ?? []
}

/** A line's text with its quoted strings' escapes undone (`\n` must not glue an `n` to the next word). */
export function unescaped(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, c: string) => c.length === 3 ? String.fromCharCode(parseInt(c.slice(1), 16)) : c === '\\' || c === '"' ? c : ' ')
}

/**
 * The visible text lines that carry a word the tree does not hold; every other
 * line the tree already says (with the element around it and its ref), so sending it again
 * would only spend the budget. A line of punctuation alone (a mask, a dash) carries no word.
 * Text the tree quotes is taken out of a line before its words are compared: innerText runs
 * the words of neighbouring buttons together (`Add PetDelete Last Pet`).
 */
export function uncoveredText(text: string, lines: readonly Line[]): string {
  if (!text) return ''
  const words = new Set<string>()
  for (const l of lines) for (const w of wordsOf(unescaped(l.text))) words.add(w)
  const says = (s: string) => wordsOf(s).every((w) => words.has(w))
  let phrases: string[] | undefined
  const kept: string[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line || says(line)) continue
    phrases ??= quotedPhrases(lines)
    let rest = folded(line)
    for (const p of phrases) if (rest.includes(p)) rest = rest.split(p).join(' ')
    if (!says(rest)) kept.push(line)
  }
  return kept.join('\n')
}

/** Case folded and compatibility-normalised, soft hyphens and zero-width spaces dropped, whitespace collapsed (as wordsOf compares). */
function folded(s: string): string {
  return normalizeWhitespace(s.normalize('NFKC').toLowerCase())
}

/** The text the tree's lines quote (names, values, text runs), folded, longest first; one character says nothing alone. */
function quotedPhrases(lines: readonly Line[]): string[] {
  const out = new Set<string>()
  for (const l of lines) for (const m of l.text.matchAll(/"((?:[^"\\]|\\.)*)"/g)) out.add(folded(unescaped(m[1]!)))
  return [...out].filter((p) => p.length > 1).sort((a, b) => b.length - a.length)
}
