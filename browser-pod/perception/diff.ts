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
 * added and changed elements in document order, then removed ones; lines past the budget
 * are counted in a closing note. `no change on the page` when nothing differs.
 */
export function diffSnapshots(before: Snapshot, after: Snapshot, budget: number): string {
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
    emit(removedLine(l.text, l.ref))
  }
  if (!out.length && !left) return 'no change on the page'
  if (left) out.push(`# … ${left} more changed lines: perceive to read the page`)
  return out.join('\n')
}
