// Redaction (redaction.ts) without a browser: a secret value is masked in every form a
// snapshot, its visible text or a diff may give it, and only there.
import t from 'tap'
import { diffSnapshots } from '../../../browser-pod/perception/diff.ts'
import { MASK, redact } from '../../../browser-pod/perception/redaction.ts'
import { flatten } from '../../../browser-pod/perception/render.ts'
import { el, snapshotOf } from './page.ts'

t.test('redact (pure)', async (t) => {
  t.equal(redact('- textbox "Password": S3cret', ['S3cret'], true), `- textbox "Password": ${MASK}`)
  t.equal(redact('- textbox "Password": "-x: y"', ['-x: y'], true), `- textbox "Password": ${MASK}`, 'YAML-quoted value')
  t.equal(redact('- textbox "P": a b c', ['a  b\tc'], true), `- textbox "P": ${MASK}`, 'whitespace-normalised value')
  t.equal(redact('- checkbox "remember LongSecret"', ['LongSecret'], true), `- checkbox "remember ${MASK}"`, 'inside a name')
  t.equal(redact('- textbox "P": ab\n- text: ab', ['ab'], true), `- textbox "P": ${MASK}\n- text: ab`, 'short values: only as a textbox value')
  t.equal(redact('- textbox "P": q"uote\\d', ['q"uote\\d'], true), `- textbox "P": ${MASK}`)
  t.equal(redact('- checkbox "x q\\"uote\\\\d"', ['q"uote\\d'], true), `- checkbox "x ${MASK}"`, 'escaped inside a quoted name')
  t.equal(redact('nothing to see', [], true), 'nothing to see')
  t.equal(redact('echo: LongSecret!', ['LongSecret'], false), `echo: ${MASK}!`, 'visible text too')
})

const SECRET = 'Hunter2-Tango!'

t.test('a password typed into a field and folded into a label is masked in every line of the snapshot', async (t) => {
  const lines = flatten([el('form', 'Sign in', 'e1', [
    el('textbox', 'Password', 'e2', [], { text: SECRET }),
    el('checkbox', `Show ${SECRET}`, 'e3'),
    `You typed ${SECRET}`,
  ])], { give: (r) => r, secrets: [SECRET] }).map((l) => l.text)
  // compared, never printed: a failure must not show the secret
  t.ok(lines[1] === `textbox "Password" [ref=e2]: ${MASK}`, 'the field\'s value is the mask')
  t.ok(lines[2] === `checkbox "Show ${MASK}" [ref=e3]`, 'the label that repeats it too')
  t.ok(lines[3] === `text: "You typed ${MASK}"`, 'and the page text that echoes it')
  t.notOk(lines.some((l) => l.includes('Hunter2')), 'no line holds the secret')
})

t.test('a short secret is masked as a field\'s value, while the same letters elsewhere stay readable', async (t) => {
  const lines = flatten([
    el('textbox', 'PIN', 'e1', [], { text: '417' }),
    el('paragraph', undefined, 'e2', ['Room 417 is on the fourth floor']),
  ], { give: (r) => r, secrets: ['417'] }).map((l) => l.text)
  t.equal(lines[0], `textbox "PIN" [ref=e1]: ${MASK}`)
  t.equal(lines[2], 'text: "Room 417 is on the fourth floor"', 'masking every "417" would shred the page')
})

t.test('what an action changed never shows the secret typed into a field', async (t) => {
  const page = (value: string) => [el('textbox', 'Password', 'e1', [], { text: value }), el('button', 'Sign in', 'e2')]
  const before = snapshotOf(page(''), { secrets: [] })
  const after = snapshotOf(page(SECRET), { secrets: [SECRET] })
  t.ok(diffSnapshots(before, after, 3000) === `~ textbox "Password" [ref=e1]: ${MASK}`, 'the field changed, and reads as the mask')
})
