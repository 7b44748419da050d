// perceive's `query` (query.ts) without a browser: which lines of a snapshot answer a
// query, as the agent reads them (rendered by the cursor's walk, as perceive does).
import t from 'tap'
import { walk } from '../../../browser-pod/perception/cursor.ts'
import { definesTerm, queryTerm, queryView } from '../../../browser-pod/perception/query.ts'
import { shownUrl } from '../../../browser-pod/perception/render.ts'
import { el, snapshotOf } from './page.ts'
import type { Snapshot } from '../../../browser-pod/perception/snapshot.ts'

/** The answer perceive gives a query that fits: the view, rendered. */
function answer(snap: Snapshot, query: string, budget = 5000): string {
  const { key, view } = queryView(snap.lines, query, budget)
  return view.length ? walk(snap, key, view, 0, budget).snapshot : ''
}

/** A query's view as perceive renders it in a 5,000-character budget: which view, how many matches, its lines. */
function answered(snap: Snapshot, query: string): { key: string; count: number; lines: string[] } {
  const { key, view, count } = queryView(snap.lines, query, 5000)
  return { key, count, lines: walk(snap, key, view, 0, 5000).snapshot.split('\n') }
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
  const { key, count, lines } = answered(many, 'order')
  t.equal(count, 12, 'eleven paragraphs and the link')
  t.equal(key, 'c', 'answered compactly')
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
  const { key, count, lines } = answered(spec, 'method set')
  t.equal(count, 14, 'the twelve paragraphs of words apart, the phrase\'s paragraph and link; not the link whose address alone says it')
  t.equal(key, 'c', 'answered compactly')
  t.same(lines.slice(0, 3), [
    '- link "Method sets" [ref=e22] [url=https://go.dev/ref/spec#Method_sets]',
    '- paragraph [ref=e21]',
    '  - text: "The method set of a type determines the interfaces it implements."',
  ], 'the phrase first (the link to act on leading), then the words apart')
  t.notOk(lines.some((l) => l.includes('Interface types')), 'a url property is not matched as text')
  t.equal(queryView(spec.lines, 'go.dev', 5000).view.length, 0, 'nor is any word of an address')
})

// Debian Policy's table of contents: `<a href="#standards-version"><span>5.6.11.</span> <code>Standards-Version</code></a>`
const policyToc = () => snapshotOf([el('navigation', 'main navigation', 'e1', [el('list', undefined, 'e2', [
  el('listitem', undefined, 'e3', [el('link', undefined, 'e4', ['5.6.10.', el('code', undefined, 'e5', [], { text: 'Version' })], { url: '#version' })]),
  el('listitem', undefined, 'e6', [el('link', undefined, 'e7', ['5.6.11.', el('code', undefined, 'e8', [], { text: 'Standards-Version' })], { url: '#standards-version' })]),
])])])

t.test('[ISSUE-47] a match inside a link keeps the link\'s other children, whatever words the link\'s url holds', async (t) => {
  for (const query of ['5.6.11', 'Standards-Version']) {
    const lines = answer(policyToc(), query).split('\n')
    const at = lines.findIndex((l) => /- link \[ref=e7\] \[url=#standards-version\]$/.test(l))
    t.ok(at >= 0, `${query}: the link to click`)
    t.same(lines.slice(at + 1).map((l) => l.trim()), ['- text: "5.6.11."', '- code [ref=e8]: "Standards-Version"'], `${query}: the number and the code, inside the link`)
  }
})

/** A paragraph of many runs and links (more than a row's twelve lines), as a spec's prose is. */
const prose = () => snapshotOf([el('main', undefined, 'e1', [
  el('heading', 'Packages', 'e2', [], { level: 2 }),
  el('paragraph', undefined, 'e3', [
    'A source package holds', el('code', undefined, 'e4', [], { text: 'debian/control' }), '. Each binary stanza names a field and the corresponding',
    el('link', 'field', 'e5', [], { url: '#field' }),
    'consists exactly of the field names listed in', el('code', undefined, 'e6', [], { text: 'Binary' }), '.',
    'Other stanzas are ignored. Tools read', el('code', undefined, 'e7', [], { text: 'Source' }), 'first.',
    'The archive reads', el('code', undefined, 'e8', [], { text: 'Files' }), 'last.',
    'Nothing else', el('link', 'is read', 'e9', [], { url: '#read' }), 'at all.',
  ]),
])])

t.test('[ISSUE-47] a match in a long paragraph brings its whole sentence, links kept, each once', async (t) => {
  const text = answer(prose(), 'field')
  const lines = text.split('\n').map((l) => l.trim())
  t.same(lines, [
    '- main [ref=e1]',
    '- heading "Packages" [level=2] [ref=e2]',
    '- paragraph [ref=e3]',
    '- text: ". Each binary stanza names a field and the corresponding"',
    '- link "field" [ref=e5] [url=#field]',
    '- text: "consists exactly of the field names listed in"',
    '- code [ref=e6]: "Binary"',
    '- text: "."',
  ], 'the sentence whole, from its start to its end, its link inside it: not cut out because it matched on its own')
  t.equal(queryView(prose().lines, 'field', 5000).count, 1, 'one match: the sentence with its link')
  // among many matches (compact, the elements to act on first) the sentence is still one piece
  const paragraph = prose().lines[2]!
  t.equal(paragraph.text, 'paragraph [ref=e3]')
  const many = snapshotOf([el('main', undefined, 'e1', [
    ...Array.from({ length: 11 }, (_, i) => el('paragraph', undefined, `e${i + 20}`, [`Field ${i} is optional.`])),
    el('paragraph', undefined, 'e3', [
      'Stanzas hold fields. Each binary stanza names a field and the corresponding', el('link', 'field', 'e5', [], { url: '#field' }),
      'consists exactly of the field names listed in', el('code', undefined, 'e6', [], { text: 'Binary' }), '.',
      ...Array.from({ length: 6 }, (_, i) => `Other sentence ${i}.`), 'Each field', el('link', 'ends', 'e9', [], { url: '#ends' }), 'here.',
    ]),
  ])])
  const { key, lines: compact } = answered(many, 'field')
  t.equal(key, 'c', 'answered compactly')
  t.same(compact.slice(0, 9), [
    '- paragraph [ref=e3]',
    '  - text: "Stanzas hold fields. Each binary stanza names a field and the corresponding"',
    '  - link "field" [ref=e5] [url=#field]',
    '  - text: "consists exactly of the field names listed in"',
    '  - code [ref=e6]: "Binary"',
    '  - text: "."',
    '  - text: "Each field"',
    '  - link "ends" [ref=e9] [url=#ends]',
    '  - text: "here."',
  ], 'the paragraph\'s matching sentences under it, links inside them, ahead of the matches with nothing to act on')
  t.equal(compact.filter((l) => l.includes('[ref=e5]')).length, 1, 'the link once')
})

/** A reference page: a table of contents, a section that uses a term, then the section that defines it, and a glossary. */
const reference = () => snapshotOf([
  el('navigation', 'Contents', 'e1', [el('link', 'Standards-Version', 'e2', [], { url: '#standards-version' })]),
  el('main', undefined, 'e3', [
    el('heading', '5. Control files', 'e4', [], { level: 1 }),
    el('heading', '5.2. Source package control files', 'e5', [], { level: 2 }),
    el('paragraph', undefined, 'e6', ['Each source package names its Standards-Version and its upstream here.']),
    el('heading', '5.6. List of fields', 'e7', [], { level: 2 }),
    el('heading', '5.6.11. Standards-Version', 'e8', [el('code', undefined, 'e9', [], { text: 'Standards-Version' })], { level: 3 }),
    el('paragraph', undefined, 'e10', ['The most recent version of the standards with which the package complies.']),
    el('paragraph', undefined, 'e11', ['The version number has four components.']),
    el('heading', '5.6.12. Version', 'e12', [], { level: 3 }),
    el('paragraph', undefined, 'e13', ['The version of the package.']),
    el('heading', '6. Glossary', 'e24', [], { level: 1 }),
    el('list', 'Glossary', 'e14', [
      el('term', undefined, 'e15', [el('code', undefined, 'e16', [], { text: 'upstream' })]),
      el('definition', undefined, 'e17', [el('paragraph', undefined, 'e18', ['The authors of the software a package holds.'])]),
      el('term', undefined, 'e19', ['len', '(', el('emphasis', undefined, 'e20', [], { text: 's' }), ')', el('link', 'Link to this definition', 'e21', [], { url: '#len' })]),
      el('definition', undefined, 'e22', [el('paragraph', undefined, 'e23', ['Return the length (the number of items) of an object.'])]),
    ]),
  ]),
])

t.test('[ISSUE-47] a query for a term answers first with what defines it: its heading and paragraphs, placed in their section', async (t) => {
  for (const query of ['Standards-Version', 'what is Standards-Version?', 'What does Standards-Version mean']) {
    const { lines } = answered(reference(), query)
    t.same(lines.slice(0, 6), [
      '- main [ref=e3]',
      '  - heading "5. Control files" [level=1] [ref=e4]',
      '  - heading "5.6. List of fields" [level=2] [ref=e7]',
      '  - heading "5.6.11. Standards-Version" [level=3] [ref=e8]',
      '  - paragraph [ref=e10]',
      '    - text: "The most recent version of the standards with which the package complies."',
    ], `${query}: the defining heading in its section, then the paragraph under it`)
    t.ok(lines.some((l) => l.includes('The version number has four components.')), `${query}: the paragraphs up to the next heading`)
    t.notOk(lines.some((l) => l.includes('The version of the package.')), `${query}: not the next section`)
    t.ok(lines.some((l) => l.includes('Each source package names')) && lines.some((l) => l.includes('link "Standards-Version" [ref=e2]')), `${query}: then the other matches`)
    t.notOk(lines.some((l) => l.includes('code [ref=e9]')), `${query}: not the code that repeats the heading`)
    t.equal(lines.filter((l) => l.includes('[ref=e8]')).length, 1, `${query}: the heading once`)
  }
})

t.test('[ISSUE-47] a term of a definition list, or a signature, comes with its definition first, also among many matches', async (t) => {
  const upstream = answer(reference(), 'what is upstream').split('\n').map((l) => l.trim())
  t.same(upstream.slice(0, 7), [
    '- main [ref=e3]',
    '- heading "6. Glossary" [level=1] [ref=e24]',
    '- term [ref=e15]',
    '- code [ref=e16]: "upstream"',
    '- definition [ref=e17]',
    '- paragraph [ref=e18]',
    '- text: "The authors of the software a package holds."',
  ], 'the term in its section, then its definition, before the paragraph that uses the word earlier on the page')
  t.ok(upstream.slice(7).some((l) => l.includes('Each source package names')), 'then the other use')
  // a signature among more than ten matches: compact, the definition still first
  const many = snapshotOf([el('main', undefined, 'e1', [
    ...Array.from({ length: 12 }, (_, i) => el('paragraph', undefined, `e${i + 2}`, [`Call len on list ${i}.`])),
    el('term', undefined, 'e30', ['len', '(', el('emphasis', undefined, 'e31', [], { text: 's' }), ')']),
    el('definition', undefined, 'e32', [el('paragraph', undefined, 'e33', ['Return the length (the number of items) of an object.'])]),
  ])])
  const { key, view, count } = queryView(many.lines, 'what does len do?', 5000)
  t.equal(key, 'c', 'answered compactly')
  t.equal(count, 13, 'the twelve paragraphs and the signature')
  t.same(walk(many, key, view, 0, 5000).snapshot.split('\n').slice(0, 6), [
    '- term [ref=e30]',
    '  - text: "len"',
    '  - text: "("',
    '  - emphasis [ref=e31]: "s"',
    '  - text: ")"',
    '- definition [ref=e32]',
  ], 'the signature and its description first')
})

t.test('[ISSUE-47] a question is read as the term it asks about', async (t) => {
  t.equal(queryTerm('what is Standards-Version?'), 'Standards-Version')
  t.equal(queryTerm('What does `Pre-Depends` mean?'), 'Pre-Depends')
  t.equal(queryTerm('what is the meaning of a virtual package'), 'virtual package')
  t.equal(queryTerm('how do I declare a dependency'), 'declare a dependency')
  t.equal(queryTerm('Standards-Version'), 'Standards-Version', 'no question: the query itself')
  t.equal(definesTerm('5.6.11. Standards-Version', 'standards-version'), 1)
  t.equal(definesTerm('class int(number=0, /)', 'int'), 2)
  t.equal(definesTerm('str.split(sep=None, maxsplit=-1)', 'split'), 2)
  t.equal(definesTerm('pub fn push(&mut self, value: T)', 'push'), 2)
  t.equal(definesTerm('7.3. Packages which break other packages - Breaks', 'breaks'), 2)
  t.equal(definesTerm('5.6.12. Version', 'standards-version'), 0)
  t.equal(definesTerm('Standards conformance', 'standards'), 2)
  t.equal(definesTerm('Pushing changes', 'push'), 0)
})

t.test('a long data: URL is abbreviated in a query\'s answer, and its words are not matched', async (t) => {
  const url = 'data:text/html,' + encodeURIComponent('<p>download me</p>'.repeat(300))
  const page = snapshotOf([el('main', undefined, 'e1', [el('link', 'Download list', 'e2', [], { url: shownUrl(url) }), el('paragraph', undefined, 'e3', ['Nothing else.'])])])
  const text = answer(page, 'download')
  t.match(text, new RegExp(`- link "Download list" \\[ref=e2\\] \\[url=data:text/html,…\\(${url.length.toLocaleString('en-US')} chars\\)\\]$`, 'm'))
  t.ok(text.length < 200, `${text.length} characters`)
  t.equal(queryView(page.lines, 'me', 5000).view.length, 0, 'the address\'s words are not the page\'s')
})
