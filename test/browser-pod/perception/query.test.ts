// perceive's `query` (query.ts) without a browser: which lines of a snapshot answer a
// query, as the agent reads them (rendered by the cursor's walk, as perceive does).
import t from 'tap'
import { walk } from '../../../browser-pod/perception/cursor.ts'
import { queryView } from '../../../browser-pod/perception/query.ts'
import { el, snapshotOf } from './page.ts'
import type { Snapshot } from '../../../browser-pod/perception/snapshot.ts'

/** The answer perceive gives a query that fits: the view, rendered. */
function answer(snap: Snapshot, query: string, budget = 5000): string {
  const { key, view } = queryView(snap.lines, query, budget)
  return view.length ? walk(snap, key, view, 0, budget).snapshot : ''
}

/** A docs page: a table of contents of links wrapping code, then the text. */
const docs = () => snapshotOf([
  el('navigation', 'Contents', 'e1', [el('list', undefined, 'e2', [
    el('listitem', undefined, 'e3', [el('link', 'Getting started', 'e4', [el('code', undefined, 'e5', ['npm start'])], { url: 'https://docs.test/#start' })]),
    el('listitem', undefined, 'e6', [el('link', 'Configuration', 'e7', [], { url: 'https://docs.test/#config' })]),
  ])]),
  el('main', undefined, 'e8', [
    el('heading', 'Install', 'e9', [], { level: 2 }),
    el('paragraph', undefined, 'e10', ['Run npm start to serve.']),
    el('heading', 'Configure', 'e11', [], { level: 2 }),
    el('paragraph', undefined, 'e12', ['Set PORT before you start.']),
  ]),
])

t.test('a match inside a link answers with the link to click, placed in its landmark and under its heading', async (t) => {
  t.equal(answer(docs(), 'npm start'), [
    '- navigation "Contents" [ref=e1]',
    '      - link "Getting started" [ref=e4] [url=https://docs.test/#start]',
    '          - text: "npm start"',
    '- main [ref=e8]',
    '  - heading "Install" [level=2] [ref=e9]',
    '  - paragraph [ref=e10]',
    '    - text: "Run npm start to serve."',
  ].join('\n'), 'the code under its link (the ref to click), the paragraph under "Install"; not Configuration, not the other section')
})

t.test('every word of the query must match, in any case and order', async (t) => {
  t.match(answer(docs(), 'START Npm'), /link "Getting started" \[ref=e4\]/, 'case and order do not matter')
  t.equal(queryView(docs().lines, 'npm stop', 5000).view.length, 0, 'a word nowhere on the page: nothing matches')
})

t.test('a row\'s text brings that row\'s own button, not the other rows\'', async (t) => {
  const rows = snapshotOf([el('list', 'Orders', 'e1', [
    el('listitem', undefined, 'e2', ['Alpha', el('button', 'Delete', 'e3')]),
    el('listitem', undefined, 'e4', ['Bravo', el('button', 'Delete', 'e5')]),
    el('listitem', undefined, 'e6', ['Charlie', el('button', 'Delete', 'e7')]),
  ])])
  const bravo = answer(rows, 'bravo')
  t.match(bravo, /text: "Bravo"\n\s*- button "Delete" \[ref=e5\]/, 'Bravo with its Delete button')
  t.notMatch(bravo, /Alpha|Charlie|ref=e3|ref=e7/, 'no other row and no other Delete')
})

t.test('more than ten matches: each once, the ones to act on first, with their count', async (t) => {
  const many = snapshotOf([el('main', undefined, 'e1', [
    ...Array.from({ length: 11 }, (_, i) => el('paragraph', undefined, `e${i + 2}`, [`Order ${101 + i} shipped`])),
    el('link', 'Track order', 'e20', [], { url: 'https://shop.test/track' }),
  ])])
  const { key, view, count } = queryView(many.lines, 'order', 5000)
  t.equal(count, 12, 'eleven paragraphs and the link')
  t.equal(key, 'c', 'answered compactly')
  const lines = walk(many, key, view, 0, 5000).snapshot.split('\n')
  t.equal(lines[0], '- link "Track order" [ref=e20] [url=https://shop.test/track]', 'the link to act on comes first, not indented by the page')
  t.equal(lines.filter((l) => /Order \d+ shipped/.test(l)).length, 11, 'every matching paragraph once')
  t.notOk(lines.some((l) => l.startsWith('- main')), 'no surroundings in a compact answer')
})

t.test('the query as one phrase ranks before its words apart, and an address is not text', async (t) => {
  // the Go spec's shape: "method set" as a phrase, many lines with "methods" … "set", links whose address says Method_sets
  const spec = snapshotOf([el('main', undefined, 'e1', [
    ...Array.from({ length: 12 }, (_, i) => el('paragraph', undefined, `e${i + 2}`, [`Type T${i} has methods; the set of its fields is fixed.`])),
    el('link', 'Interface types', 'e20', [], { url: 'https://go.dev/ref/spec#Method_sets' }),
    el('paragraph', undefined, 'e21', ['The method set of a type determines the interfaces it implements.']),
    el('link', 'Method sets', 'e22', [], { url: 'https://go.dev/ref/spec#Method_sets' }),
  ])])
  const { key, view, count } = queryView(spec.lines, 'method set', 5000)
  t.equal(count, 14, 'the twelve paragraphs of words apart, the phrase\'s paragraph and link; not the link whose address alone says it')
  t.equal(key, 'c', 'answered compactly')
  const lines = walk(spec, key, view, 0, 5000).snapshot.split('\n')
  t.same(lines.slice(0, 3), [
    '- link "Method sets" [ref=e22] [url=https://go.dev/ref/spec#Method_sets]',
    '- paragraph [ref=e21]',
    '  - text: "The method set of a type determines the interfaces it implements."',
  ], 'the phrase first (the link to act on leading), then the words apart')
  t.notOk(lines.some((l) => l.includes('Interface types')), 'a url property is not matched as text')
  t.equal(queryView(spec.lines, 'go.dev', 5000).view.length, 0, 'nor is any word of an address')
})
