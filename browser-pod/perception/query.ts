// perceive's `query`: the lines holding every word of the query, each with the element an
// agent acts on around it and the headings and landmarks that place it. Pure: lines in,
// the view a cursor walks out. See docs/perception.md.
import { normalizeWhitespace } from './redaction.ts'
import { treeCost, unescaped, wordsOf, type Line } from './render.ts'

/** a query's match in a text run brings its whole element when the element is at most this many lines */
const QUERY_ROW_LINES = 12
/** up to this many matches a query answers them with their headings and landmarks; more, the matches alone */
const QUERY_FEW = 10

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

/** One match as it is answered: the lines that show it, whether they hold an element to act on, and whether the match holds the query as one phrase. */
interface Unit { lines: number[]; acts: boolean; phrase: boolean }

/** A line as a query reads it: without its url (an address's words are not the page's text), escapes undone, lower case. */
function searchable(line: Line): string {
  return normalizeWhitespace(unescaped(line.text.replace(/ \[url=.*?\](?= \[|: |$)/g, ''))).toLowerCase()
}

/**
 * Lines holding every word of the query, each once, as units: a match inside an element to
 * act on comes with that element (whole when small, else the element and the path down to
 * the match); a text run with its element (and the element's controls when it is small: the
 * row that says "Bravo" and its Delete button); any other element alone.
 */
function matchUnits(lines: readonly Line[], query: string): Unit[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean)
  const phrase = words.join(' ')
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
    if (covered.has(i)) return
    const text = searchable(l)
    if (!words.every((w) => text.includes(w))) return
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
    if (unit.length) units.push({ lines: unit, acts: act >= 0 || unit.some((j) => actionable(lines[j]!)), phrase: text.includes(phrase) })
  })
  return units
}

/** The units with what places them: the named headings above each and every landmark around it; in document order. */
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
    // a heading without a name (its words are in its children) places nothing
    for (const h of headings) if (h !== i && /^heading "/.test(lines[h]!.text)) picked.add(h)
    for (let p = l.parent; p >= 0; p = lines[p]!.parent) if (lines[p]!.outline && lines[p]!.role !== 'heading') picked.add(p)
  })
  return [...picked].sort((a, b) => a - b)
}

/**
 * The view a query reads: the matches with their surroundings (headings, landmarks) in
 * document order when that fits the budget (key 'q'); otherwise — a query many elements
 * match — the matches alone, compactly (key 'c'): each unit once, those holding the query as
 * one phrase first, and within those and the rest the ones holding an element to act on
 * first; indented within itself only. `count` is the number of matches.
 */
export function queryView(lines: readonly Line[], query: string, budget: number): { key: 'q' | 'c'; view: number[]; count: number } {
  const units = matchUnits(lines, query)
  const full = withSurroundings(lines, units)
  if (units.length <= QUERY_FEW && treeCost(full.map((i) => lines[i]!)) <= budget) return { key: 'q', view: full, count: units.length }
  // the query as one phrase before its words apart; within each, the elements to act on first
  const ordered = [true, false].flatMap((phrase) => [...units.filter((u) => u.phrase === phrase && u.acts), ...units.filter((u) => u.phrase === phrase && !u.acts)])
  return { key: 'c', view: ordered.flatMap((u) => u.lines), count: units.length }
}
