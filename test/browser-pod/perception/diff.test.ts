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
    '+ listitem [ref=e7]',
    '# … 5 more changed lines: perceive to read the page',
  ].join('\n'), 'the url line, what fits in 60 characters, then how many lines were left out')
  t.equal(diffSnapshots(snapshotOf(cart(true)), snapshotOf(cart(true), { url: 'https://shop.test/orders#top' }), 3000), 'url: https://shop.test/orders#top',
    'an address change alone is a change')
})

t.test('a new address that is a long data: URL is abbreviated in the url line', async (t) => {
  const doc = (n: number) => 'data:text/html,' + encodeURIComponent('<title>Pets</title>' + '<p>pet</p>'.repeat(n))
  const moved = diffSnapshots(snapshotOf(cart(false), { url: doc(500) }), snapshotOf(cart(false), { url: doc(500) + '#list' }), 3000)
  t.equal(moved, `url: data:text/html,…(${(doc(500) + '#list').length.toLocaleString('en-US')} chars)`, 'its type and length, not its thousands of characters')
})
