// Reading a snapshot within a budget: the first answer (what the viewport shows, the
// outline, then the page from the top), and the cursor that reads on through the rest of
// a view, every line exactly once. Pure: a kept snapshot in, parts out. See docs/perception.md.
import { errors } from '../../contracts/errors.ts'
import { breadcrumb, lineCost, renderLines, treeCost, type Line } from './render.ts'
import type { Snapshot } from './snapshot.ts'

/** One answer's share of a snapshot; `cursor` reads on when `truncated`. */
export interface Part {
  snapshot: string
  text: string
  truncated: boolean
  cursor?: string
}

/**
 * The first answer of a page: what the viewport shows, then the outline (landmarks and
 * top headings, then deeper headings), then the page from the top, as far as the
 * budget goes; printed in document order. The rest is the default view's walk ('d').
 */
export function firstPart(snap: Snapshot, budget: number): Part {
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

/** the roles a page summary counts as fields */
const FIELD_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'checkbox', 'radio', 'spinbutton', 'slider', 'switch', 'listbox'])
/** a summary's outline line longer than this is left for perceive's outline */
const SUMMARY_LINE_MAX = 160
/** a summary's most characters: a large page is told in a few hundred */
export const SUMMARY_MAX_CHARS = 600
const SUMMARY_HELP = '# read on: perceive (what the viewport shows, then the outline), perceive with query "words", or with ref for one element'

/**
 * A new page: the whole tree when it fits `budget` (a form, a menu); else what the page is
 * within SUMMARY_MAX_CHARS: counts of its elements, then its landmarks and top
 * headings (as lines with refs, unindented, in document order) as far as they fit, and how
 * to read more. What the agent needs then, it asks for: paying for a whole first part of a
 * reference page on every navigation would send thousands of characters each time.
 */
export function pageSummary(snap: Snapshot, budget: number): string {
  const { lines } = snap
  const cost = treeCost(lines)
  if (cost <= budget) return renderLines(lines, lines.map((_, i) => i))
  const count = (pred: (l: Line) => boolean) => lines.reduce((n, l) => n + (pred(l) ? 1 : 0), 0)
  const n = (k: number, one: string, many: string) => `${k.toLocaleString('en-US')} ${k === 1 ? one : many}`
  const kinds = [
    n(count((l) => l.role === 'link'), 'link', 'links'),
    n(count((l) => l.role === 'button'), 'button', 'buttons'),
    n(count((l) => FIELD_ROLES.has(l.role)), 'field', 'fields'),
    n(count((l) => l.role === 'heading'), 'heading', 'headings'),
  ]
  const head = `# ${n(count((l) => l.ref !== undefined), 'element', 'elements')} with refs (${kinds.join(', ')}); the whole page is ${cost.toLocaleString('en-US')} characters`
  const outline = lines.filter((l) => l.outline === 1)
  let used = head.length + SUMMARY_HELP.length + 2
  const shown: string[] = []
  let left = 0
  for (const l of outline) {
    const line = '- ' + l.text
    if (line.length > SUMMARY_LINE_MAX || used + line.length + 1 > SUMMARY_MAX_CHARS - 60) left++
    else {
      shown.push(line)
      used += line.length + 1
    }
  }
  const more = left ? [`# … ${n(left, 'more landmark or heading', 'more landmarks and headings')} in perceive's outline`] : []
  return [head, ...shown, ...more, SUMMARY_HELP].join('\n')
}

/**
 * A stretch of a view from `pos`: whole lines while the budget lasts (at least one, cut if it
 * alone is over). A compact view ('c', a query's matches alone) is indented within each
 * match, not by the page's depth; `note` leads the first stretch. A view with lines left is
 * kept on the snapshot under `key`, for the cursor to read on.
 */
export function walk(snap: Snapshot, key: string, view: readonly number[], pos: number, budget: number, note = ''): Part {
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

/** Each line's indentation in a compact view: one level below its parent when the parent is in the view, else none. */
function compactDepths(lines: readonly Line[], view: readonly number[]): Map<number, number> {
  const depth = new Map<number, number>()
  for (const i of view) {
    const p = lines[i]!.parent
    depth.set(i, p >= 0 && depth.has(p) ? depth.get(p)! + 1 : 0)
  }
  return depth
}

/** The lines of one element's subtree (409 stale_ref when the snapshot has no such ref). */
export function subtree(snap: Snapshot, ref: string): number[] {
  const at = snap.lines.findIndex((l) => l.ref === ref)
  if (at < 0) throw errors.staleRef(ref)
  const out: number[] = []
  for (let i = at; i < snap.lines[at]!.end; i++) out.push(i)
  return out
}

/**
 * Reads on from `cursor` in the tab's last snapshot (`latest`): the next stretch of the
 * view it names. A cursor of another snapshot, or one that names no kept view, is the
 * typed 409 stale_cursor.
 */
export function readOn(latest: Snapshot | undefined, cursor: string, budget: number): { url: string; title: string } & Part {
  const m = /^([\w-]+)\.(d|q|c|r(?:f\d+)?e\d+)\.(\d+)$/.exec(cursor)
  if (!m || !latest || latest.id !== m[1]) throw errors.staleCursor()
  const view = latest.views.get(m[2]!)
  const pos = Number(m[3])
  if (!view || pos > view.length) throw errors.staleCursor()
  return { url: latest.shownUrl, title: latest.title, ...walk(latest, m[2]!, view, pos, budget - framing(latest)) }
}

/** What an answer spends besides its lines: url, title and the note carrying the cursor. */
export function framing(snap: Snapshot): number {
  return snap.shownUrl.length + snap.title.length + 120
}
