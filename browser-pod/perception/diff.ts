// What an action changed: two snapshots of the same document compared by ref, as `+` added
// elements (with their subtrees), `~` changed ones and `removed:` ones, within a budget.
// Pure: two snapshots in, the `changes` text out. See docs/perception.md.
import type { Snapshot } from './snapshot.ts'

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
  const was = signatures(before)
  const now = signatures(after)
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
  for (let i = 0; i < after.lines.length; i++) {
    const l = after.lines[i]!
    if (!l.ref) continue
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
    } else if (was.get(l.ref) !== now.get(l.ref)) {
      emit(`~ ${l.text}`)
      for (let j = i + 1; j < l.end && !after.lines[j]!.ref; j++) emit(`    ${after.lines[j]!.text}`)
    }
  }
  for (const [p, n] of siblings) {
    if (n <= COMPACT_SIBLINGS) continue
    const parent = after.lines[p]!
    emit(`# … ${n - COMPACT_SIBLINGS} more added inside ${parent.text.replace(/ \[ref=\w+\].*$/, '')}: perceive with ref ${parent.ref} to read them`)
  }
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
