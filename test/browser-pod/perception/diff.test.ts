// What an action changed (diff.ts), without a browser: two snapshots of one cart page,
// before and after an action, as the agent reads them in `changes`.
import t from 'tap'
import { diffSnapshots } from '../../../browser-pod/perception/diff.ts'
import { el, snapshotOf } from './page.ts'

/** A cart before (one item, checkout disabled, an empty-cart hint) and after adding tea and ticking gift wrap. */
const cart = (after: boolean) => [el('main', undefined, 'e0', [
  el('heading', 'Cart', 'e1', [], { level: 1 }),
  el('list', undefined, 'e2', [
    el('listitem', undefined, 'e3', ['Coffee beans', el('button', 'Remove', 'e4')]),
    ...(after ? [el('listitem', undefined, 'e7', ['Tea', el('button', 'Remove', 'e8')])] : []),
  ]),
  el('checkbox', 'Gift wrap', 'e5', [], { checked: after }),
  el('button', 'Checkout', 'e6', [], after ? {} : { disabled: true }),
  ...(after ? [] : [el('status', undefined, 'e9', ['Add something to check out'])]),
])]

t.test('a diff lists what was added (with its contents), changed and removed, each with its ref', async (t) => {
  t.equal(diffSnapshots(snapshotOf(cart(false)), snapshotOf(cart(true)), 3000), [
    '+ listitem [ref=e7]',
    '    text: "Tea"',
    '    button "Remove" [ref=e8]',
    '~ checkbox "Gift wrap" [checked] [ref=e5]',
    '~ button "Checkout" [ref=e6]',
    'removed: status (was e9)',
  ].join('\n'), 'the new item whole, the ticked box and the enabled button as they are now, the gone hint; nothing unchanged')
})

t.test('[ISSUE-47] a removed element never reads as one on the page: no `- role` line, no ref token', async (t) => {
  const rows = (gone: boolean) => [el('list', 'Pets', 'e1', [
    el('listitem', undefined, 'e2', ['Rex', el('button', 'Delete', 'e3')]),
    ...(gone ? [] : [el('listitem', undefined, 'e4', ['Tom', el('button', 'Delete', 'e5')])]),
    el('textbox', 'Name', 'e6', [], { text: gone ? 'Ada' : '' }),
  ])]
  const after = snapshotOf(rows(true))
  const changes = diffSnapshots(snapshotOf(rows(false)), after, 3000)
  t.equal(changes, '~ textbox "Name" [ref=e6]: "Ada"\nremoved: listitem (was e4)')
  t.notMatch(changes, /^\s*- /m, 'no line has perceive\'s shape of an element that is there')
  const tokens = [...changes.matchAll(/\[ref=(\w+)\]/g)].map((m) => m[1])
  const present = new Set(after.lines.map((l) => l.ref))
  t.same(tokens.filter((r) => !present.has(r)), [], 'every ref token names an element still on the page')
  const dialog = (open: boolean) => open ? [el('dialog', 'Sure?', 'e7', [el('button', 'Yes', 'e8')], { modal: 'true' })] : []
  t.equal(diffSnapshots(snapshotOf(dialog(true)), snapshotOf(dialog(false)), 3000), 'removed: dialog "Sure?" [modal="true"] (was e7)',
    'what follows the ref in its line stays; the ref itself is said as gone')
})

t.test('the same page twice says there is no change', async (t) => {
  t.equal(diffSnapshots(snapshotOf(cart(true)), snapshotOf(cart(true)), 3000), 'no change on the page')
})

t.test('a changed text inside an element shows the element and its new text', async (t) => {
  const before = snapshotOf([el('status', undefined, 'e1', ['2 items in your cart'])])
  const after = snapshotOf([el('status', undefined, 'e1', ['3 items in your cart'])])
  t.equal(diffSnapshots(before, after, 3000), '~ status [ref=e1]\n    text: "3 items in your cart"')
})

t.test('an element removed with everything inside it is said once', async (t) => {
  const dialog = (open: boolean) => [el('heading', 'Cart', 'e1', [], { level: 1 }),
    ...(open ? [el('dialog', 'Remove coffee beans?', 'e2', [el('button', 'Yes', 'e3'), el('button', 'No', 'e4')])] : [])]
  t.equal(diffSnapshots(snapshotOf(dialog(true)), snapshotOf(dialog(false)), 3000), 'removed: dialog "Remove coffee beans?" (was e2)',
    'the closed dialog, not each of its buttons')
})

t.test('a new address of the same document is said first; what does not fit the budget is counted', async (t) => {
  const moved = diffSnapshots(snapshotOf(cart(false)), snapshotOf(cart(true), { url: 'https://shop.test/orders#cart' }), 60)
  t.equal(moved, [
    'url: https://shop.test/orders#cart',
    'removed: status (was e9)',
    '# … 3 more changed lines: perceive to read the page',
  ].join('\n'), 'the url line, what fits in 60 characters (of the compact form: the whole does not fit), then how many lines were left out')
  t.equal(diffSnapshots(snapshotOf(cart(true)), snapshotOf(cart(true), { url: 'https://shop.test/orders#top' }), 3000), 'url: https://shop.test/orders#top',
    'an address change alone is a change')
})

t.test('a new address that is a long data: URL is abbreviated in the url line', async (t) => {
  const doc = (n: number) => 'data:text/html,' + encodeURIComponent('<title>Pets</title>' + '<p>pet</p>'.repeat(n))
  const moved = diffSnapshots(snapshotOf(cart(false), { url: doc(500) }), snapshotOf(cart(false), { url: doc(500) + '#list' }), 3000)
  t.equal(moved, `url: data:text/html,…(${(doc(500) + '#list').length.toLocaleString('en-US')} chars)`, 'its type and length, not its thousands of characters')
})

t.test('[ISSUE-47] a large render costs a line per added element, with how to read it; a small one comes whole', async (t) => {
  // a panel opened by a click (an API reference's operation), and a tree expanded whole
  const panel = (open: boolean) => [el('main', undefined, 'e1', [
    el('link', 'Find a pet by id', 'e2'),
    ...(open ? [el('region', 'Find a pet by id', 'e10', [
      el('heading', 'Find a pet by id', 'e11', [], { level: 3 }),
      ...Array.from({ length: 30 }, (_, i) => el('listitem', undefined, `e${20 + i}`, [`Parameter ${i} with a description long enough to matter`, el('button', `Copy link to parameter ${i}`, `e${60 + i}`)])),
    ])] : []),
  ])]
  const before = snapshotOf(panel(false))
  const after = snapshotOf(panel(true))
  const whole = diffSnapshots(before, after, 100_000)
  t.ok(whole.length > 3000, `in full it would cost ${whole.length} characters`)
  const changes = diffSnapshots(before, after, 3000, 1000)
  t.equal(changes, '+ region "Find a pet by id" [ref=e10] # 61 elements inside: perceive with ref e10 to read them', 'the panel in one line, with its ref to read it by')

  const tree = (expanded: boolean) => [el('tree', 'Document', 'e1', [
    el('treeitem', 'root', 'e2', [], { expanded }),
    ...(expanded ? Array.from({ length: 40 }, (_, i) => el('treeitem', `field${i}`, `e${10 + i}`, [el('textbox', `value of field${i}`, `e${100 + i}`)])) : []),
  ])]
  const expanded = diffSnapshots(snapshotOf(tree(false)), snapshotOf(tree(true)), 3000, 1000)
  t.ok(expanded.length <= 1000, `an expanded tree of 40 rows: ${expanded.length} characters`)
  t.match(expanded, /^~ treeitem "root" \[expanded\] \[ref=e2\]$/m, 'what changed in place')
  t.match(expanded, /^\+ treeitem "field0" \[ref=e10\] # 1 element inside: perceive with ref e10 to read it$/m, 'the first rows, each a line')
  t.match(expanded, /^# … 35 more added inside tree "Document": perceive with ref e1 to read them$/m, 'the rest counted, with where to read them')

  // what fits stays whole: the cart's new item keeps its button's ref
  t.match(diffSnapshots(snapshotOf(cart(false)), snapshotOf(cart(true)), 3000, 1000), /^ {4}button "Remove" \[ref=e8\]$/m, 'a small change in full')
})

t.test('[ISSUE-50] text a script adds outside every element with a ref is said as added, where it stands', async (t) => {
  const page = (clicked: boolean) => [el('button', 'Go', 'e1'), ...(clicked ? ['clicked!'] : [])]
  t.equal(diffSnapshots(snapshotOf(page(false)), snapshotOf(page(true)), 3000), '+ text: "clicked!"')
  t.equal(diffSnapshots(snapshotOf(page(true)), snapshotOf(page(false)), 3000), 'removed: text: "clicked!"', 'and its going as removed')
})

t.test('[ISSUE-50] text added inside an element after its children with refs is shown under it', async (t) => {
  const main = (clicked: boolean) => [el('main', undefined, 'e1', [
    el('heading', 'Pets', 'e2', [], { level: 1 }), 'Pick one', el('button', 'Add', 'e3'), ...(clicked ? ['Added Rex'] : []),
  ])]
  t.equal(diffSnapshots(snapshotOf(main(false)), snapshotOf(main(true)), 3000), '~ main [ref=e1]\n    text: "Added Rex"',
    'the new text, not the unchanged text before it')
  t.equal(diffSnapshots(snapshotOf(main(true)), snapshotOf(main(false)), 3000), '~ main [ref=e1]\n    removed: text: "Added Rex"')
})
