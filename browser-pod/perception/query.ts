// perceive's `query`: the lines holding every word of the query, each with the element an
// agent acts on around it and the headings and landmarks that place it; the element that
// defines the term first. Pure: lines in, the view a cursor walks out. See docs/perception.md.
import { normalizeWhitespace } from './redaction.ts'
import { lineCost, treeCost, unescaped, wordsOf, type Line } from './render.ts'

/** a query's match in a text run brings its whole element when the element is at most this many lines */
const QUERY_ROW_LINES = 12
/** up to this many matches a query answers them with their headings and landmarks; more, the matches alone */
const QUERY_FEW = 10
/** a match in a larger element brings the whole sentences around it, up to this many characters */
const SENTENCES_MAX = 1_500
/** a definition brings what follows its heading or term up to this many characters (at least one block) */
const DEFINITION_MAX = 1_500

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
/** elements that sit inside a sentence: a match in one is read with the sentence around it */
const INLINE_WORDS = new Set(['code', 'emphasis', 'strong', 'mark', 'subscript', 'superscript', 'time', 'deletion', 'insertion'])
/** what a sentence runs through: text runs, inline elements, links */
const INLINE = new Set([...INLINE_WORDS, 'text', 'link', 'generic', 'img'])

const actionable = (l: Line) => !!l.ref && (ACTIONABLE.has(l.role) || / \[cursor=pointer\]/.test(l.text))
const isLandmark = (l: Line) => l.outline === 1 && l.role !== 'heading'

/** The element to act on that holds line `i` (itself included), within ACTIONABLE_UP levels and its landmark; -1 when none. */
function actionableAround(lines: readonly Line[], i: number): number {
  for (let p = i, up = 0; p >= 0 && up <= ACTIONABLE_UP; p = lines[p]!.parent, up++) {
    if (actionable(lines[p]!)) return p
    if (up > 0 && isLandmark(lines[p]!)) return -1 // the match is not inside a control
  }
  return -1
}

/**
 * One match as it is answered: the lines that show it, whether they hold an element to act
 * on, whether the match holds the query as one phrase, and whether it defines the term
 * (1: named exactly so, 2: its name starts so; 0: not a definition).
 */
interface Unit { lines: number[]; acts: boolean; phrase: boolean; defines: 0 | 1 | 2 }

/** A line as a query reads it: without its url (an address's words are not the page's text), escapes undone, lower case. */
function searchable(line: Line): string {
  return normalizeWhitespace(unescaped(line.text.replace(/ \[url=.*?\](?= \[|: |$)/g, ''))).toLowerCase()
}

/** A line's own words: its name, value or text, not its role or its [attributes] (a link's url says nothing of it). */
function ownWords(line: Line): string[] {
  return wordsOf(line.text.replace(/^[\w-]+/, '').replace(/ \[[^\]]*\]/g, ''))
}

/** The page text a line quotes, escapes undone. */
function quotedOf(line: Line): string[] {
  return [...line.text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => unescaped(m[1]!))
}

const QUESTIONS: readonly RegExp[] = [
  /^what(?:'s| is| are) the (?:meaning|definition|purpose) of (.+)$/,
  /^what (?:does|do|did) (.+?) (?:mean|do|stand for)$/,
  /^(?:what|who|which)(?:'s| is| are| was| were) (.+)$/,
  /^how (?:do|can|should|would|does) (?:i|we|you|one) (.+)$/,
  /^how (?:to|is|are|does|do) (.+)$/,
  /^where (?:is|are) (.+?)(?: defined| described| documented)?$/,
  /^(?:define|definition of|meaning of|explain|describe) (.+)$/,
]

/**
 * The term a query asks about: a question around it (`what is X?`, `what does X mean`,
 * `how do I X`) stripped to X, with a leading article and quotes around it; the query
 * itself when it is no such question.
 */
export function queryTerm(query: string): string {
  const q = normalizeWhitespace(query).replace(/\s*\?+$/, '')
  for (const re of QUESTIONS) {
    const m = re.exec(q.toLowerCase())
    if (!m) continue
    const start = q.toLowerCase().lastIndexOf(m[1]!)
    const term = q.slice(start, start + m[1]!.length).replace(/^(?:a|an|the) /i, '').replace(/^["'`“‘](.*)["'`”’]$/, '$1').trim()
    if (term) return term
  }
  return q
}

/** a section number before a heading's words (`5.6.11.`, `A.2`) */
const SECTION_NUMBER = /^(?:[a-z]?\d+(?:\.\d+)*\.?|[a-z]\.\d*\.?)\s+/
/** a declaration's keywords before the name it declares (`class`, `pub fn`, `async def`) */
const DECLARATION = /^(?:(?:pub(?:\(\w+\))?|async|static|final|abstract|public|private|protected|export|default|class|def|fn|function|func|method|interface|struct|enum|trait|type|const|let|var|val|module|package|impl|unsafe|extern|property|attribute|exception|classmethod|staticmethod|abstractmethod|coroutine|awaitable|macro|object|data|opcode|directive|option|envvar|field)\s+)+/

/**
 * Whether a heading's or a term's words define `term`: 1 when they are the term (after a
 * section number, a declaration's keywords, a qualifying `module.` prefix), 2 when they
 * start with it (a signature `push(&mut self, …)`, `Source package control files`), else 0.
 */
export function definesTerm(words: string, term: string): 0 | 1 | 2 {
  const t = term.toLowerCase()
  let w = normalizeWhitespace(words).toLowerCase().replace(/[\s¶#§]+$/, '').replace(SECTION_NUMBER, '').replace(DECLARATION, '')
  if (w === t) return 1
  const after = (s: string) => s.startsWith(t) && (s.length === t.length || !/[\p{L}\p{N}_]/u.test(s[t.length]!))
  if (after(w)) return 2
  // a heading that names the term after its subject (`Packages which break other packages - Breaks`)
  if (w.split(/ [-–—:] /).slice(1).some((part) => part === t)) return 2
  // a qualified name: `str.split(…)`, `os.path.join`, `Vec::push` for `split`, `join`, `push`
  const q = /^[\w$]+(?:(?:\.|::)[\w$]+)*?(?:\.|::)/.exec(w)
  if (q && !t.includes('.') && !t.includes('::')) w = w.slice(q[0].length)
  return w === t ? 1 : after(w) && q ? 2 : 0
}

/** An element's words as read: its quoted text and that of what it holds (the first lines of it), joined. */
function contentOf(lines: readonly Line[], i: number): string {
  const own = quotedOf(lines[i]!)
  if (lines[i]!.role === 'heading' && own.length) return own[0]!
  let s = ''
  for (let j = i; j < Math.min(lines[i]!.end, i + 20); j++) for (const p of quotedOf(lines[j]!)) s += s && !/^[)\]},.;:!?(]/.test(p) && !/\($/.test(s) ? ' ' + p : p
  return s
}

/** An element and everything inside it. */
function span(lines: readonly Line[], from: number): number[] {
  return Array.from({ length: lines[from]!.end - from }, (_, k) => from + k)
}

/** What an element and everything inside it cost as printed. */
function spanCost(lines: readonly Line[], from: number): number {
  let n = 0
  for (let j = from; j < lines[from]!.end; j++) n += lineCost(lines[j]!)
  return n
}

/** The element's children, each with what it holds, up to `max` characters (at least the first). */
function blocksWithin(lines: readonly Line[], starts: readonly number[], max: number): number[] {
  const out: number[] = []
  let cost = 0
  for (const c of starts) {
    const add = spanCost(lines, c)
    if (out.length && cost + add > max) break
    out.push(...span(lines, c))
    cost += add
  }
  return out
}

/** The lines directly under `p` (each the start of its own subtree), from `from` on. */
function childrenOf(lines: readonly Line[], p: number, from = p + 1): number[] {
  const out: number[] = []
  const end = p >= 0 ? lines[p]!.end : lines.length
  for (let c = from; c < end; c = lines[c]!.end) out.push(c)
  return out
}

/**
 * The elements that define the term: a heading named so, with the blocks after it up to
 * the next heading; a term (`dt`, a signature) named so, with its definition. Exact names
 * first.
 */
function definitions(lines: readonly Line[], term: string): Unit[] {
  const units: Unit[] = []
  lines.forEach((l, i) => {
    if (l.role !== 'heading' && l.role !== 'term') return
    const defines = definesTerm(contentOf(lines, i), term)
    if (!defines) return
    let shown: number[]
    if (l.role === 'heading') {
      // the heading alone when its children only repeat its name (`<h3>5.6.11. <code>Standards-Version</code></h3>`)
      const said = new Set(ownWords(l))
      const inside = span(lines, i).filter((j) => j === i || ownWords(lines[j]!).some((w) => !said.has(w)))
      const after = childrenOf(lines, l.parent, l.end)
      const next = after.findIndex((c) => lines[c]!.role === 'heading' || isLandmark(lines[c]!))
      shown = [...inside, ...blocksWithin(lines, next < 0 ? after : after.slice(0, next), DEFINITION_MAX)]
    } else {
      const after = childrenOf(lines, l.parent, l.end)
      const def = after[0] !== undefined && lines[after[0]]!.role === 'definition' ? after[0] : -1
      shown = [...span(lines, i), ...(def < 0 ? [] : [def, ...blocksWithin(lines, childrenOf(lines, def), DEFINITION_MAX)])]
    }
    units.push({ lines: shown, acts: shown.some((j) => actionable(lines[j]!)), phrase: true, defines })
  })
  return units.sort((a, b) => a.defines - b.defines)
}

/** a sentence's end, with what may close it (`."`, `.)`) */
const SENTENCE_END = /[.!?…:][)\]"'”’]*(?:\s|$)/g

/** The text an element's lines quote, in order (its own and what it holds). */
function textOf(lines: readonly Line[], c: number): string {
  let s = ''
  for (let j = c; j < lines[c]!.end; j++) for (const q of quotedOf(lines[j]!)) s += ' ' + q
  return s.toLowerCase()
}

/** Where sentences end in a text: the offsets just after each end. */
function sentenceEnds(s: string): number[] {
  return [...s.trimEnd().matchAll(SENTENCE_END)].map((m) => m.index + m[0].trimEnd().length)
}

/** A large block's children and their text, read once for all the matches in it. */
interface BlockReader { kids(p: number): number[]; text(c: number): { text: string; ends: number[] } }

function blockReader(lines: readonly Line[]): BlockReader {
  const kids = new Map<number, number[]>()
  const texts = new Map<number, { text: string; ends: number[] }>()
  return {
    kids: (p) => kids.get(p) ?? (kids.set(p, childrenOf(lines, p)), kids.get(p)!),
    text: (c) => {
      let r = texts.get(c)
      if (!r) {
        const text = textOf(lines, c)
        texts.set(c, r = { text, ends: sentenceEnds(text) })
      }
      return r
    },
  }
}

/**
 * A match in a text run or an inline element (`code`) of block `p`, with its block: whole
 * when small; else the whole sentences around it, the runs and inline elements (links kept)
 * from where its sentence starts to where it ends, up to SENTENCES_MAX characters.
 */
function inBlock(lines: readonly Line[], p: number, i: number, words: readonly string[], read: BlockReader): number[] {
  if (lines[p]!.end - p <= QUERY_ROW_LINES) return span(lines, p)
  const kids = read.kids(p)
  const k = kids.findIndex((c) => c <= i && i < lines[c]!.end)
  const cost = (c: number) => spanCost(lines, c)
  const inline = (c: number) => INLINE.has(lines[c]!.role)
  const text = (c: number) => read.text(c).text
  // where the match stands in its own run: a sentence that ends before it is not its own
  const own = text(kids[k]!)
  const found = words.map((w) => own.indexOf(w)).filter((n) => n >= 0)
  const at = found.length ? Math.min(...found) : 0
  /** a sentence starts inside c (in the match's own run: before the match) */
  const startsInside = (c: number) => read.text(c).ends.some((e) => (c === kids[k] ? e <= at : e < text(c).trimEnd().length))
  /** c ends with a sentence's end */
  const closes = (c: number) => read.text(c).ends.includes(text(c).trimEnd().length)
  /** a sentence ends inside c (in the match's own run: after the match) */
  const endsInside = (c: number) => read.text(c).ends.some((e) => c !== kids[k] || e > at)
  let from = k
  let to = k
  let used = cost(kids[k]!)
  for (; from > 0 && !startsInside(kids[from]!) && inline(kids[from - 1]!) && !closes(kids[from - 1]!); from--) {
    used += cost(kids[from - 1]!)
    if (used > SENTENCES_MAX) break
  }
  for (; to < kids.length - 1 && !endsInside(kids[to]!) && inline(kids[to + 1]!); to++) {
    used += cost(kids[to + 1]!)
    if (used > SENTENCES_MAX) break
  }
  return [p, ...kids.slice(from, to + 1).flatMap((c) => span(lines, c))]
}

/**
 * Units answering the query: first the elements that define its term, then every line
 * holding every word of it: a match inside an element to act on comes with that element
 * (whole when small, else the element and the path down to the match); a text run or an
 * inline element with its block (the paragraph, whole or its sentences around the match;
 * the row that says "Bravo" with its Delete button); any other element alone. A unit that
 * another one shows whole is left out, so each match comes once, inside its context.
 */
function matchUnits(lines: readonly Line[], query: string): Unit[] {
  const term = queryTerm(query)
  const words = term.toLowerCase().split(/\s+/).filter(Boolean)
  const phrase = words.join(' ')
  /** lines a later match does not answer again (inside an element answered whole) */
  const covered = new Set<number>()
  const found: Unit[] = definitions(lines, term)
  const reader = blockReader(lines)
  const pathDown = (from: number, to: number) => {
    const path: number[] = []
    for (let p = to; p !== from && p >= 0; p = lines[p]!.parent) path.unshift(p)
    return [from, ...path]
  }
  lines.forEach((l, i) => {
    if (covered.has(i)) return
    const text = searchable(l)
    if (!words.every((w) => text.includes(w))) return
    const act = actionableAround(lines, i)
    let unit: number[]
    const p = l.parent
    if (act >= 0) {
      const whole = lines[act]!.end - act <= QUERY_ROW_LINES
      const around = whole ? span(lines, act) : pathDown(act, i)
      for (const j of around) covered.add(j)
      // what only repeats the element's own words (a menu item's label under it) says nothing more
      const said = new Set(ownWords(lines[act]!))
      unit = around.filter((j) => j === act || j === i || ownWords(lines[j]!).some((w) => !said.has(w)))
    } else if ((!l.ref || INLINE_WORDS.has(l.role)) && p >= 0) {
      unit = inBlock(lines, p, i, words, reader)
      // a block's own name says what a child only repeats (the code in a heading)
      const said = new Set(ownWords(lines[p]!))
      if (said.size) unit = unit.filter((j) => j === p || ownWords(lines[j]!).some((w) => !said.has(w)))
      if (lines[p]!.end - p <= QUERY_ROW_LINES) for (const j of span(lines, p)) covered.add(j)
      else for (const j of unit) covered.add(j)
    } else {
      unit = [i]
      covered.add(i)
    }
    found.push({ lines: unit, acts: unit.some((j) => actionable(lines[j]!)), phrase: text.includes(phrase), defines: 0 })
  })
  return eachOnce(found)
}

/** The units without any another unit shows whole, and without the lines an earlier unit shows. */
function eachOnce(units: readonly Unit[]): Unit[] {
  // a unit's first line → the units showing it
  const holding = new Map<number, number[]>(units.map((u) => [u.lines[0]!, []]))
  units.forEach((u, k) => {
    for (const j of u.lines) {
      const held = holding.get(j)
      if (held) held.push(k)
    }
  })
  const sets = new Map<number, Set<number>>()
  const inside = (u: Unit, k: number) => holding.get(u.lines[0]!)!.some((o) => {
    if (o === k) return false
    let other = sets.get(o)
    if (!other) sets.set(o, other = new Set(units[o]!.lines))
    // of two showing the same lines, the first one stays
    return u.lines.every((j) => other.has(j)) && (units[o]!.lines.length > u.lines.length || o < k)
  })
  const kept = units.filter((u, k) => !inside(u, k))
  const shown = new Set<number>()
  const out: Unit[] = []
  const byBlock = new Map<number, Unit>() // sentences of one large block come as one unit, under its line
  for (const u of kept) {
    const lines = u.lines.filter((j) => !shown.has(j))
    for (const j of lines) shown.add(j)
    const block = byBlock.get(u.lines[0]!)
    if (block) {
      block.lines = [...block.lines, ...lines].sort((a, b) => a - b)
      block.acts ||= u.acts
      block.phrase ||= u.phrase
    } else if (lines.length) {
      const unit = { ...u, lines }
      out.push(unit)
      if (lines[0] === u.lines[0]) byBlock.set(lines[0]!, unit)
    }
  }
  return out
}

/**
 * The units with what places them: the named headings above each (of its own landmark or
 * section, not one that merely came before it) and every landmark around it; in document order.
 */
function withSurroundings(lines: readonly Line[], units: readonly Unit[]): number[] {
  const picked = new Set<number>(units.flatMap((u) => u.lines))
  const starts = new Set(units.map((u) => u.lines[0]!))
  const headings: number[] = [] // the heading chain above the current line, by level
  lines.forEach((l, i) => {
    if (l.role === 'heading') {
      while (headings.length && lines[headings.at(-1)!]!.level >= (l.level || 6)) headings.pop()
      headings.push(i)
    }
    if (!starts.has(i)) return
    const around = new Set<number>([-1])
    for (let p = l.parent; p >= 0; p = lines[p]!.parent) {
      around.add(p)
      if (isLandmark(lines[p]!)) picked.add(p)
    }
    // a heading without a name (its words are in its children) places nothing
    for (const h of headings) if (h !== i && around.has(lines[h]!.parent) && /^heading "/.test(lines[h]!.text)) picked.add(h)
  })
  return [...picked].sort((a, b) => a - b)
}

/**
 * The view a query reads: the matches with their surroundings (headings, landmarks) when
 * that fits the budget (key 'q'): the definitions of the term first, then the rest in
 * document order; otherwise — a query many elements match — the matches alone, compactly
 * (key 'c'): each unit once, the definitions first, then those holding the query as one
 * phrase, and within those and the rest the ones holding an element to act on first;
 * indented within itself only. `count` is the number of matches.
 */
export function queryView(lines: readonly Line[], query: string, budget: number): { key: 'q' | 'c'; view: number[]; count: number } {
  const units = matchUnits(lines, query)
  const defs = units.filter((u) => u.defines)
  const first = withSurroundings(lines, defs)
  const placed = new Set(first)
  const full = [...first, ...withSurroundings(lines, units.filter((u) => !u.defines)).filter((i) => !placed.has(i))]
  if (units.length <= QUERY_FEW && treeCost(full.map((i) => lines[i]!)) <= budget) return { key: 'q', view: full, count: units.length }
  // a definition first, then the query as one phrase before its words apart; within each, the elements to act on first
  const rest = units.filter((u) => !u.defines)
  const ordered = [...defs, ...[true, false].flatMap((phrase) => [...rest.filter((u) => u.phrase === phrase && u.acts), ...rest.filter((u) => u.phrase === phrase && !u.acts)])]
  return { key: 'c', view: ordered.flatMap((u) => u.lines), count: units.length }
}
