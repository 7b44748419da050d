// Reading a page within a budget (cursor.ts) without a browser: the first answer, and
// reading on by cursor until the page ends, as an agent pages through a long order list.
import t from 'tap'
import { firstPart, pageSummary, readOn, subtree, walk, SUMMARY_MAX_CHARS, type Part } from '../../../browser-pod/perception/cursor.ts'
import { markInView } from '../../../browser-pod/perception/render.ts'
import { el, snapshotOf } from './page.ts'
import type { Snapshot } from '../../../browser-pod/perception/snapshot.ts'
import type { ApiError } from '../../../contracts/errors.ts'

/** The status and reason of what `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    return `${(e as ApiError).status} ${(e as ApiError).reason}`
  }
  return 'no refusal'
}

const BUDGET = 1500

/** A long page: a title heading, 80 orders, a Returns section of 10 more. */
const orders = () => snapshotOf([el('main', undefined, 'e0', [
  el('heading', 'Your orders', 'e1', [], { level: 1 }),
  ...Array.from({ length: 80 }, (_, i) => el('paragraph', undefined, `e${i + 2}`, [`Order ${1000 + i} shipped to Berlin`])),
  el('heading', 'Returns', 'e90', [], { level: 2 }),
  ...Array.from({ length: 10 }, (_, i) => el('paragraph', undefined, `e${i + 91}`, [`Order ${1080 + i} returned`])),
])])

/** The first part and every part read on from its cursor, until the walk ends (at most `steps`). */
function readAll(snap: Snapshot, first: Part, steps = 100): Part[] {
  const parts = [first]
  for (let cursor = first.cursor; cursor && parts.length <= steps;) {
    const next = readOn(snap, cursor, BUDGET)
    parts.push(next)
    cursor = next.truncated ? next.cursor : undefined
  }
  return parts
}

const orderNumbers = (s: string) => [...s.matchAll(/Order (\d+)/g)].map((m) => Number(m[1]))
const every = Array.from({ length: 90 }, (_, i) => 1000 + i)

t.test('reading on from the cursor continues where the last part stopped, gives every line once, and ends', async (t) => {
  const snap = orders()
  const first = firstPart(snap, BUDGET)
  t.ok(first.truncated && first.cursor, 'the page is larger than one answer: truncated, with a cursor')
  const parts = readAll(snap, first)
  const last = parts.at(-1)!
  t.ok(parts.length > 2, `read in ${parts.length} parts`)
  t.equal(last.truncated, false, 'the last part is not truncated')
  t.equal(last.cursor, undefined, 'and has no cursor: the walk ends')
  t.ok(parts.every((p) => p.snapshot.length <= BUDGET), 'every part within the budget')
  t.same(parts.flatMap((p) => orderNumbers(p.snapshot)), every, 'every order exactly once, in page order')
  for (let k = 1; k < parts.length; k++) {
    const before = orderNumbers(parts[k - 1]!.snapshot).at(-1)!
    t.equal(orderNumbers(parts[k]!.snapshot)[0], before + 1, `part ${k + 1} starts right after part ${k} stopped`)
  }
  t.match(parts[2]!.snapshot, /^# inside: main( > paragraph)?\n/, 'a part read on from within the walk says where it is on the page')
})

t.test('the first answer puts what the viewport shows and the outline first; the rest is read on', async (t) => {
  const snap = orders()
  // the viewport shows orders 1060 and 1061 (refs e62, e63), scrolled far down
  markInView(snap.lines, new Set(['e62', 'e63']))
  const first = firstPart(snap, BUDGET)
  t.match(first.snapshot, /Order 1060 shipped[\s\S]*Order 1061 shipped/, 'what the viewport shows is in the first answer')
  t.match(first.snapshot, /heading "Your orders"[\s\S]*heading "Returns"/, 'and both headings of the outline')
  t.ok(first.snapshot.indexOf('Order 1060') < first.snapshot.indexOf('heading "Returns"'), 'printed in page order')
  const parts = readAll(snap, first)
  t.same(parts.flatMap((p) => orderNumbers(p.snapshot)).sort((a, b) => a - b), every, 'reading on gives the rest, nothing twice, nothing left out')
})

t.test('a page that fits is answered whole, without a cursor', async (t) => {
  const snap = snapshotOf([el('heading', 'Your orders', 'e1', [], { level: 1 }), el('paragraph', undefined, 'e2', ['Order 1000 shipped'])])
  const first = firstPart(snap, BUDGET)
  t.same(first, { snapshot: '- heading "Your orders" [level=1] [ref=e1]\n- paragraph [ref=e2]\n  - text: "Order 1000 shipped"', text: '', truncated: false })
})

t.test('a cursor from an earlier read of the tab, or no cursor at all, is refused as stale', async (t) => {
  const old = orders()
  const cursor = firstPart(old, BUDGET).cursor!
  const reread = orders() // the tab was read again: a new snapshot
  t.equal(refusal(() => readOn(reread, cursor, BUDGET)), '409 stale_cursor', 'the earlier snapshot\'s cursor')
  t.equal(refusal(() => readOn(undefined, cursor, BUDGET)), '409 stale_cursor', 'a tab never read')
  t.equal(refusal(() => readOn(old, 'not-a-cursor', BUDGET)), '409 stale_cursor', 'a string that is no cursor')
  t.equal(refusal(() => readOn(old, `${old.id}.q.0`, BUDGET)), '409 stale_cursor', 'a view this snapshot never gave')
  t.equal(orderNumbers(readOn(old, cursor, BUDGET).snapshot)[0]! > 1000, true, 'the cursor still reads its own snapshot')
})

t.test('ref reads one element\'s subtree; a ref the snapshot does not hold is stale', async (t) => {
  const snap = snapshotOf([el('list', 'Orders', 'e1', [
    el('listitem', undefined, 'e2', ['Alpha', el('button', 'Delete', 'e3')]),
    el('listitem', undefined, 'e4', ['Bravo', el('button', 'Delete', 'e5')]),
  ])])
  t.equal(walk(snap, 're4', subtree(snap, 'e4'), 0, BUDGET).snapshot, '  - listitem [ref=e4]\n    - text: "Bravo"\n    - button "Delete" [ref=e5]',
    'the Bravo row and its button, nothing else')
  t.equal(refusal(() => subtree(snap, 'e99')), '409 stale_ref')
})

t.test('a heading whose words sit in its children is named in the first answer\'s outline', async (t) => {
  // the AI snapshot's shapes: Debian Policy's field headings (a link around a number and a code)
  // and rustdoc's method headings (text around a link); the page is too long for one answer
  const filler = (from: number) => Array.from({ length: 60 }, (_, i) => el('paragraph', undefined, `e${from + i}`, [`Filler paragraph number ${from + i} of the reference.`]))
  const snap = snapshotOf([el('main', undefined, 'e0', [
    el('heading', undefined, 'e1', [el('link', undefined, 'e2', ['5.6.1.', el('code', undefined, 'e3', [], { text: 'Source' })], { url: '#s-f-source' })], { level: 3 }),
    ...filler(100),
    el('heading', undefined, 'e4', ['pub fn', el('link', 'push', 'e5', [], { url: '#method.push' }), '(&mut self, value: T)'], { level: 3, cursor: 'pointer' }),
    ...filler(200),
  ])])
  markInView(snap.lines, new Set())
  const first = firstPart(snap, BUDGET)
  t.ok(first.truncated, 'the page is larger than one answer')
  t.match(first.snapshot, /^ {2}- heading "5\.6\.1\. Source" \[level=3\] \[ref=e1\]$/m, 'the policy field heading carries its name')
  t.match(first.snapshot, /^ {2}- heading "pub fn push ?\(&mut self, value: T\)" \[level=3\] \[ref=e4\]/m, 'the method heading carries its name')
  t.notMatch(first.snapshot, /- heading \[level/, 'no heading prints nameless')
})

t.test('[ISSUE-47] a new page is summed up within its budget: counts, landmarks and top headings; a small one comes whole', async (t) => {
  const summary = pageSummary(orders(), 1200)
  t.ok(summary.length <= SUMMARY_MAX_CHARS, `within ${SUMMARY_MAX_CHARS} characters (${summary.length})`)
  t.match(summary, /^# 93 elements with refs \(0 links, 0 buttons, 0 fields, 2 headings\); the whole page is [\d,]+ characters$/m, 'its counts and its whole size')
  t.match(summary, /^- main \[ref=e0\]\n- heading "Your orders" \[level=1\] \[ref=e1\]\n- heading "Returns" \[level=2\] \[ref=e90\]$/m, 'its outline, unindented, in document order')
  t.notMatch(summary, /Order 1000/, 'not its content')
  t.match(summary.split('\n').at(-1), /^# read on: perceive/, 'how to read on')
  const many = snapshotOf(Array.from({ length: 60 }, (_, i) => el('heading', `Chapter ${i} of the long guide`, `e${i}`, [], { level: 2 })))
  const cut = pageSummary(many, 1200)
  t.ok(cut.length <= SUMMARY_MAX_CHARS, 'an outline longer than the budget is cut')
  t.match(cut, /^# … \d+ more landmarks and headings in perceive's outline$/m, 'saying how many more')
  const form = snapshotOf([el('textbox', 'Email', 'e1'), el('button', 'Send', 'e2')])
  t.equal(pageSummary(form, 1200), '- textbox "Email" [ref=e1]\n- button "Send" [ref=e2]', 'a small page whole')
})
