// The person-text rule (contracts/person-text.ts): text another party writes for a person
// to read must show something, and nothing in it may be drawn as nothing. Checked through
// a field wrapped with personText(), as every door parses it, and through the words a
// door answers (REST's "invalid request: <field>: <rule>").
import t from 'tap'
import { z } from 'zod'
import { personText, personTextProblem, revealHidden } from '../../contracts/person-text.ts'
import { describeIssues } from '../../api-server/door-kit/validate.ts'

const field = z.object({ name: personText(z.string().min(1).max(80)) })
/** what a door answers for this name: null when accepted, else "name: <rule>" */
const verdict = (name: string) => {
  const r = field.safeParse({ name })
  return r.success ? null : describeIssues(r.error)
}
const hidden = (cp: string) => `name: must not contain control, invisible or text-direction characters (found ${cp})`
const BLANK = 'name: must contain a visible character (not only spaces or invisible characters)'

t.test('characters drawn as nothing are refused anywhere, by code point', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['one Braille pattern blank', '\u2800', 'U+2800'],
    ['three of them (the probe’s client name)', '\u2800\u2800\u2800', 'U+2800'],
    ['a Braille blank between letters', 'Claude\u2800Code', 'U+2800'],
    ['a Braille blank after a name', 'Claude Code\u2800', 'U+2800'],
    ['the Hangul filler', '\u3164', 'U+3164'],
    ['the Hangul filler inside a name', 'Bob\u3164', 'U+3164'],
    ['the Hangul choseong filler', '\u115f', 'U+115F'],
    ['the Hangul jungseong filler', 'a\u1160b', 'U+1160'],
    ['the halfwidth Hangul filler', '\uffa0', 'U+FFA0'],
    ['a Khmer inherent vowel', 'x\u17b4', 'U+17B4'],
    ['the musical null notehead', '\u{1d159}', 'U+1D159'],
    ['a right-to-left override (as before)', 'ab\u202ecd', 'U+202E'],
  ]
  for (const [what, text, cp] of cases) t.equal(verdict(text), hidden(cp), what)
})

t.test('text that shows nothing is refused, whatever blank it is made of', async (t) => {
  const cases: Array<[string, string]> = [
    ['one em space', '\u2003'],
    ['an ideographic space', '\u3000'],
    ['every space separator U+2000–U+200A', '\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a'],
    ['no-break and narrow no-break spaces', '\u00a0\u202f'],
    ['plain spaces', '   '],
    ['a combining mark with no letter under it', '\u0301'],
    ['a variation selector alone', '\ufe0f'],
    ['a Mongolian free variation selector alone', '\u180b'],
  ]
  for (const [what, text] of cases) t.equal(verdict(text), BLANK, what)
  t.equal(personTextProblem(''), null, 'empty text is the field’s own length rule’s to refuse, not this one’s')
  t.equal(verdict(''), 'name: Too small: expected string to have >=1 characters', 'and the field refuses it in its words')
})

t.test('names people write are still accepted', async (t) => {
  for (const name of [
    'Claude Code', 'Mary Ann  Smith', 'John\u2003Smith', 'Ünïcödé naïve café', 'e\u0301t\u00e9', '東京 チーム', 'عربي', 'עברית', '한국어 팀',
    'deploy bot 🤖', '❤️ team', '#1 — the “best”', '⠁⠃ braille dots', 'x',
  ]) {
    t.equal(verdict(name), null, JSON.stringify(name))
  }
})

t.test('a stored value that shows nothing is written out for a person, so it is never an empty name', async (t) => {
  t.equal(revealHidden('\u2800\u2800\u2800'), '[U+2800][U+2800][U+2800]')
  t.equal(revealHidden('\u2003'), '[U+2003]')
  t.equal(revealHidden('Bob\u3164'), 'Bob[U+3164]')
  t.equal(revealHidden('Mary Ann'), 'Mary Ann', 'an ordinary name is shown as it is')
})
