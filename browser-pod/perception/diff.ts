// What an action changed: two snapshots of the same document compared by ref, as `+` added
// elements (with their subtrees), `~` changed ones and `removed:` ones, within a budget.
// Pure: two snapshots in, the `changes` text out. See docs/perception.md.
import type { Snapshot } from './snapshot.ts'

/**
 * The line each line's text is reported under: the line itself when it has a ref, else its
 * nearest ancestor with one; -1 for page text no element with a ref holds (a text node a
 * script appended to <body>).
 */
function owners(snap: Snapshot): Int32Array {
  const out = new Int32Array(snap.lines.length)
  for (let i = 0; i < snap.lines.length; i++) {
    const l = snap.lines[i]!
    // a parent comes before its children, so its owner is known
    out[i] = l.ref ? i : l.parent >= 0 ? out[l.parent]! : -1
  }
  return out
}

/**
 * What "changed" compares, per ref: the element's line and every ref-less line it holds
 * (text runs, a select's options, text under a ref-less wrapper), however deep; the key ''
 * holds the page text no element with a ref holds.
 */
function signatures(snap: Snapshot, owner: Int32Array): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (let i = 0; i < snap.lines.length; i++) {
    const o = owner[i]!
    const key = o < 0 ? '' : snap.lines[o]!.ref!
    const list = out.get(key)
    if (list) list.push(snap.lines[i]!.text)
    else out.set(key, [snap.lines[i]!.text])
  }
  return out
}

/** the lines of `now` not in `was` (as a multiset), and the lines of `was` not in `now`, each in order */
function lineDelta(was: string[] | undefined, now: string[] | undefined): { added: string[]; gone: string[] } {
  const left = new Map<string, number>()
  for (const x of was ?? []) left.set(x, (left.get(x) ?? 0) + 1)
  const added: string[] = []
  for (const x of now ?? []) {
    const n = left.get(x) ?? 0
    if (n) left.set(x, n - 1)
    else added.push(x)
  }
  const gone: string[] = []
  for (const x of was ?? []) {
    const n = left.get(x) ?? 0
    if (n) { left.set(x, n - 1); gone.push(x) }
  }
  return { added, gone }
}

const same = (a: string[] | undefined, b: string[] | undefined) => !!a && !!b && a.length === b.length && a.every((x, i) => x === b[i])

/**
 * A removed element's line: never `- role …` (perceive's shape for an element that is
 * there) and without a `[ref=…]` token, so no reader takes it for something to act on.
 * Page text in a line is quoted with its `[ref=` escaped: the only token is the real one.
 */
function removedLine(text: string, ref: string): string {
  return `removed: ${text.replace(` [ref=${ref}]`, '')} (was ${ref})`
}

/**
 * The changes from `before` to `after`: a `url:` line first when the address moved, then
 * added and changed elements in document order, then removed ones. In full (each added
 * element with its subtree) when that fits `fullBudget`; else compact — an added element's
 * own line and how many elements it holds, to read with perceive by its ref — within
 * `budget`, lines past it counted in a closing note. An agent pays for a large render (an
 * expanded panel, a whole tree opened) only when it reads it. `no change on the page` when
 * nothing differs.
 */
export function diffSnapshots(before: Snapshot, after: Snapshot, budget: number, fullBudget = budget): string {
  const full = render(before, after, Math.min(budget, fullBudget), false)
  return full.complete ? full.text : render(before, after, budget, true).text
}

function render(before: Snapshot, after: Snapshot, budget: number, compact: boolean): { text: string; complete: boolean } {
  const was = signatures(before, owners(before))
  const afterOwner = owners(after)
  const now = signatures(after, afterOwner)
  const out: string[] = []
  // the same document at a new address (a single-page app's route, a #fragment): said first,
  // so an answer carrying changes never needs the url beside them
  if (before.url !== after.url) out.push(`url: ${after.shownUrl}`)
  let used = out[0] ? out[0].length + 1 : 0
  let left = 0
  const emit = (s: string) => {
    if (used + s.length + 1 > budget) return void left++
    out.push(s)
    used += s.length + 1
  }
  const isAdded = (i: number) => !!after.lines[i]!.ref && !was.has(after.lines[i]!.ref!)
  /** compact: added elements so far under each parent line */
  const siblings = new Map<number, number>()
  // page text outside every element with a ref: its new lines where they stand, as added
  const pageText = lineDelta(was.get(''), now.get(''))
  const newPageText = new Map<string, number>()
  for (const x of pageText.added) newPageText.set(x, (newPageText.get(x) ?? 0) + 1)
  for (let i = 0; i < after.lines.length; i++) {
    const l = after.lines[i]!
    if (!l.ref) {
      const n = afterOwner[i]! < 0 ? newPageText.get(l.text) ?? 0 : 0
      if (n) {
        newPageText.set(l.text, n - 1)
        emit(`+ ${l.text}`)
      }
      continue
    }
    if (isAdded(i)) {
      // the topmost added element, with its whole subtree (compact: its count)
      let p = l.parent
      while (p >= 0 && !after.lines[p]!.ref) p = after.lines[p]!.parent
      if (p >= 0 && isAdded(p)) continue
      if (compact && p >= 0) {
        // a long run of siblings (rows of an expanded tree, results of a search) is counted
        const n = (siblings.get(p) ?? 0) + 1
        siblings.set(p, n)
        if (n > COMPACT_SIBLINGS) continue
      }
      const inside = compact ? refsWithin(after, i) : 0
      if (inside) emit(`+ ${l.text} # ${inside} element${inside === 1 ? '' : 's'} inside: perceive with ref ${l.ref} to read ${inside === 1 ? 'it' : 'them'}`)
      else for (let j = i; j < l.end; j++) emit(`${j === i ? '+' : ' '} ${'  '.repeat(after.lines[j]!.depth - l.depth)}${after.lines[j]!.text}`)
    } else if (!same(was.get(l.ref), now.get(l.ref))) {
      // the element as it is now, then its new text; what went is said only when nothing
      // replaced it (a new text says the old one is gone)
      emit(`~ ${l.text}`)
      const { added, gone } = lineDelta(was.get(l.ref)?.slice(1), now.get(l.ref)?.slice(1))
      for (const x of added) emit(`    ${x}`)
      if (!added.length) for (const x of gone) emit(`    removed: ${x}`)
    }
  }
  for (const [p, n] of siblings) {
    if (n <= COMPACT_SIBLINGS) continue
    const parent = after.lines[p]!
    emit(`# … ${n - COMPACT_SIBLINGS} more added inside ${parent.text.replace(/ \[ref=\w+\].*$/, '')}: perceive with ref ${parent.ref} to read them`)
  }
  if (!pageText.added.length) for (const x of pageText.gone) emit(`removed: ${x}`)
  for (const l of before.lines) {
    if (!l.ref || now.has(l.ref)) continue
    let p = l.parent
    while (p >= 0 && !before.lines[p]!.ref) p = before.lines[p]!.parent
    if (p >= 0 && !now.has(before.lines[p]!.ref!)) continue // inside a removed element: that one says it
    emit(removedLine(l.text, l.ref))
  }
  if (!out.length && !left) return { text: 'no change on the page', complete: true }
  if (left) out.push(`# … ${left} more changed lines: perceive to read the page`)
  return { text: out.join('\n'), complete: !left }
}

/** compact: added siblings shown one by one before the rest are counted */
const COMPACT_SIBLINGS = 5

/** how many elements with refs line i's subtree holds below it */
function refsWithin(snap: Snapshot, i: number): number {
  let n = 0
  for (let j = i + 1; j < snap.lines[i]!.end; j++) if (snap.lines[j]!.ref) n++
  return n
}
