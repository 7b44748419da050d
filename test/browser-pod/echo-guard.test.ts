// The echo guard on its own: every encoding it fingerprints, overlapping and adjacent
// matches, no false positive across two strings, nothing of the secret kept in the
// object, the node API as the boundary (results, errors, log lines; binary fields
// left alone), and the scan cost (reported, not asserted).
// Secret-bearing text is only ever checked with t.ok(x === y) / t.notOk(x.includes(s)),
// so a failure never prints the secret.
import t from 'tap'
import { inspect } from 'node:util'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { EchoGuard, MASK, MIN_GUARDED_LENGTH, variants } from '../../browser-pod/echo-guard.ts'
import { createNodeApi } from '../../browser-pod/node-api.ts'
import { NodeClient } from '../../api-server/sessions/node-client.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import type { PodSession } from '../../browser-pod/session.ts'

// Every character class the encoders treat differently: & < > " ' space runs, +, /,
// non-ASCII, a backslash, ^ { } | ` ~ * ( ).
const SECRET = `Pa&ss <w0rd>  "q" é+'x/\\^{|}\`~*()-${randomBytes(4).toString('hex')}`
const ALNUM = 'Cnry' + randomBytes(8).toString('hex')

function guardOf(...secrets: string[]): EchoGuard {
  const g = new EchoGuard()
  for (const s of secrets) {
    const b = Buffer.from(s, 'utf8')
    g.remember(b)
    b.fill(0)
  }
  return g
}

// Independent encoders (what pages, browsers and servers write), not the module's own.
const htmlEscape = (s: string, apos = '&#39;') =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, apos)
const ENCODINGS: Array<[string, (s: string) => string]> = [
  ['raw', (s) => s],
  ['encodeURIComponent', (s) => encodeURIComponent(s)],
  ['encodeURIComponent, lower-case hex', (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
  ['form-urlencoded (URLSearchParams, spaces as +)', (s) => new URLSearchParams({ p: s }).toString().slice(2)],
  ['URL path as the URL parser writes it', (s) => new URL('http://h/p/' + s.replace(/[?#]/g, '')).pathname.slice(3)],
  ['URL query as the URL parser writes it', (s) => new URL('http://h/p?' + s.replace(/#/g, '')).search.slice(1)],
  ['URL fragment as the URL parser writes it', (s) => new URL('http://h/p#' + s).hash.slice(1)],
  ['HTML-escaped (&#39;)', (s) => htmlEscape(s)],
  ['HTML-escaped (&#x27;)', (s) => htmlEscape(s, '&#x27;')],
  ['HTML-escaped (&#039;)', (s) => htmlEscape(s, '&#039;')],
  ['JSON string', (s) => JSON.stringify(s).slice(1, -1)],
  ['JSON string, ASCII only', (s) => JSON.stringify(s).slice(1, -1).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))],
  ['whitespace collapsed (document.title, innerText)', (s) => s.replace(/\s+/g, ' ').trim()],
  ['as the aria snapshot quotes text', (s) => JSON.stringify(s.replace(/\s+/g, ' ').trim()).slice(1, -1)],
  ['JSON shown on a page, as the aria snapshot quotes it', (s) => JSON.stringify(JSON.stringify(s).slice(1, -1).replace(/\s+/g, ' ').trim()).slice(1, -1)],
  ['HTML-escaped text with its whitespace collapsed', (s) => htmlEscape(s).replace(/\s+/g, ' ').trim()],
  ['base64 (btoa)', (s) => Buffer.from(s).toString('base64')],
  ['base64url', (s) => Buffer.from(s).toString('base64url')],
  ['hex of the UTF-8 bytes', (s) => [...new TextEncoder().encode(s)].map((b) => b.toString(16).padStart(2, '0')).join('')],
  ['HEX of the UTF-8 bytes', (s) => [...new TextEncoder().encode(s)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join('')],
  ['encodeURI', (s) => encodeURI(s)],
  ['escape', (s) => escape(s)],
  ['String(new TextEncoder().encode(v))', (s) => String(new TextEncoder().encode(s))],
  ['an array of the bytes as the console shows it', (s) => Array.from(new TextEncoder().encode(s)).join(', ')],
  ['String(v.split(""))', (s) => String(Array.from(s))],
  ['toUpperCase', (s) => s.toUpperCase()],
  ['toLowerCase', (s) => s.toLowerCase()],
  ['normalize NFD', (s) => s.normalize('NFD')],
  ['normalize NFKC', (s) => s.normalize('NFKC')],
]

t.test('each encoding of the secret is masked where it stands', async (t) => {
  const g = guardOf(SECRET)
  for (const [name, enc] of ENCODINGS) {
    const e = enc(SECRET)
    const text = `before ${e} after`
    const out = g.redact(text)
    t.notOk(out.includes(e), `${name}: the encoded form is gone`)
    // base64 is matched without its padding, which stays behind
    const rest = name.startsWith('base64') ? out.replace(/=+ after$/, ' after') : out
    t.ok(rest === `before ${MASK} after`, `${name}: exactly the span is masked`)
  }
  t.ok(g.redact(`url: http://h/p?x=1&pw=${encodeURIComponent(SECRET)}&y=2`) === `url: http://h/p?x=1&pw=${MASK}&y=2`, 'inside a URL')
})

t.test('btoa of a Latin-1 secret (one byte per character), and a secret with no case', async (t) => {
  const latin = `Pässwörd-${randomBytes(3).toString('hex')}`
  const g = guardOf(latin)
  const b = Buffer.from(latin, 'latin1').toString('base64')
  t.ok(g.redact(`b=${b}`).replace(/=+$/, '') === `b=${MASK}`, 'btoa(v) is masked')
  t.ok(g.redact(`b=${Buffer.from(latin).toString('base64')}`).replace(/=+$/, '') === `b=${MASK}`, 'base64 of its UTF-8 bytes too')
  const digits = guardOf('20261127')
  t.ok(digits.redact('pin 20261127') === `pin ${MASK}`, 'a value case changes leave alone is remembered once')
})

t.test('a plain secret: raw, inside words, in several strings of an object', async (t) => {
  const g = guardOf(ALNUM)
  t.ok(g.redact(`T:${ALNUM}`) === `T:${MASK}`)
  t.ok(g.redact(`x${ALNUM}y`) === `x${MASK}y`, 'no word boundary needed')
  const o = g.scrub({ url: `http://h/?pw=${ALNUM}`, nested: [{ text: ALNUM }, 3, null, true], [ALNUM]: 'key' })
  const json = JSON.stringify(o)
  t.notOk(json.includes(ALNUM), 'keys and nested values are scrubbed')
  t.ok(o.url === `http://h/?pw=${MASK}`)
  t.same((o as any).nested.slice(1), [3, null, true], 'non-strings untouched')
  t.ok(g.redact('nothing here') === 'nothing here')
})

t.test('overlapping and adjacent matches become one mask per run', async (t) => {
  const g = guardOf('abcabc')
  t.ok(g.redact('xabcabcabcx') === `x${MASK}x`, 'overlapping occurrences')
  t.ok(g.redact('abcabcabcabc') === MASK, 'adjacent occurrences')
  t.ok(g.redact('abcabc-abcabc') === `${MASK}-${MASK}`, 'separate occurrences')
  const g2 = guardOf(ALNUM, ALNUM.slice(2) + 'zz')
  t.ok(g2.redact(`<${ALNUM}zz>`) === `<${MASK}>`, 'two secrets overlapping')
  const g3 = guardOf(SECRET)
  const both = SECRET + encodeURIComponent(SECRET) + JSON.stringify(SECRET).slice(1, -1)
  t.ok(g3.redact(`[${both}]`) === `[${MASK}]`, 'different encodings back to back')
})

t.test('a secret split across two strings is no false positive; fragments stay', async (t) => {
  const g = guardOf(ALNUM)
  const half = ALNUM.length >> 1
  const parts = { a: ALNUM.slice(0, half), b: ALNUM.slice(half) }
  const out = g.scrub(parts)
  t.ok(out.a === parts.a && out.b === parts.b, 'each half alone is not the secret')
  t.ok(g.redact(ALNUM.slice(1)) === ALNUM.slice(1), 'a proper substring is not the secret')
  const reversed = [...ALNUM].reverse().join('')
  t.ok(g.redact(reversed) === reversed, 'a transform that takes more than one call (reversed) is not caught')
})

t.test('short secrets are not guarded; inactive guard is a no-op', async (t) => {
  const g = guardOf('abc')
  t.equal(g.size, 0, `below ${MIN_GUARDED_LENGTH} characters nothing is fingerprinted`)
  t.ok(g.redact('abc abc') === 'abc abc')
  const value = { url: 'http://x/' }
  t.equal(g.scrub(value), value, 'an inactive guard returns the same object')
  const g2 = guardOf('abcd')
  t.ok(g2.redact('xabcdx') === `x${MASK}x`, 'four characters are guarded')
  t.ok(g2.redact('\ud800 lone surrogates \udc00 do not throw') === '\ud800 lone surrogates \udc00 do not throw')
})

t.test('no plaintext retained: the object holds no secret, no variant, no key in view', async (t) => {
  const secretBuf = Buffer.from(SECRET, 'utf8')
  const g = new EchoGuard()
  const n = g.remember(secretBuf)
  secretBuf.fill(0) // the caller zeroes the plaintext, as secure-fill does
  t.ok(n > 5, 'several variants fingerprinted')
  t.equal(g.size, n)
  const views = [
    inspect(g, { showHidden: true, depth: Infinity, maxArrayLength: Infinity, maxStringLength: Infinity }),
    JSON.stringify(g),
    JSON.stringify(Object.getOwnPropertyNames(g).map((k) => (g as any)[k])),
  ]
  for (const v of variants(SECRET)) {
    if (v.length < MIN_GUARDED_LENGTH) continue
    t.notOk(views.some((x) => x.includes(v)), 'no variant string in the object')
  }
  t.notOk(views.some((x) => x.includes(SECRET.slice(0, 6))), 'not even a prefix')
  t.same(Object.keys(g), [], 'no public state at all')
  t.ok(g.redact(`x ${SECRET} y`) === `x ${MASK} y`, 'still matches after the Buffer was zeroed')
  // two guards of the same secret are keyed apart: one's fingerprints mean nothing to the other
  const other = new EchoGuard()
  t.ok(other.redact(SECRET) === SECRET)
})

t.test('the node API is the boundary: results, errors and log lines; binary fields left alone', async (t) => {
  const guard = new EchoGuard()
  const logs: string[] = []
  let mode: 'ok' | 'typed' | 'crash' = 'ok'
  const secret = ALNUM
  const fakeSession = {
    configured: true,
    echoGuard: guard,
    consoleMessages: [{ type: 'log', text: `pw is ${secret}`, time: 1 }],
    get page() {
      if (mode === 'typed') throw errors.navigationTimeout(`http://h/?pw=${secret}`)
      if (mode === 'crash') throw new Error(`boom ${secret}`)
      return { screenshot: async () => Buffer.from(secret), pdf: async () => Buffer.from(secret) }
    },
  } as unknown as PodSession
  const token = randomBytes(16).toString('hex')
  const server = createNodeApi({ token, session: fakeSession, log: (l) => logs.push(l) })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const client = new NodeClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, token)
  t.teardown(() => client.close())

  const before = await client.drive('console_messages', {})
  t.ok(before.messages[0].text.includes(secret), 'nothing is masked before a fill (the guard is empty)')
  t.ok((await client.drive('pdf', {})).pdf === Buffer.from(secret).toString('base64'), 'a PDF before any fill is made (opaque: not rewritten)')
  const b = Buffer.from(secret)
  guard.remember(b)
  b.fill(0)

  const after = await client.drive('console_messages', {})
  t.ok(after.messages[0].text === `pw is ${MASK}`, 'earlier console messages are masked once the secret is known')
  const shot = await client.drive('screenshot', {})
  t.ok(shot.png === Buffer.from(secret).toString('base64'), 'a screenshot (opaque) is not rewritten')
  const pdf = await client.drive('pdf', {}).then(() => null, (e: ApiError) => e)
  t.same(pdf?.toBody(), { error: { code: 'forbidden', message: 'no PDF is made of a session a credential was filled in', reason: 'pdf_after_fill' } },
    'no PDF once a secret was filled (a PDF is text, not pixels)')

  mode = 'typed'
  const typed = await client.drive('console_messages', {}).then(() => null, (e: Error) => e)
  t.ok(typed && typed.message === `navigation timed out at http://h/?pw=${MASK}`, 'a typed error message is masked')
  mode = 'crash'
  const crash = await client.drive('console_messages', {}).then(() => null, (e: Error) => e)
  t.ok(crash && crash.message === 'internal error')
  t.ok(logs.some((l) => l.includes('boom')), 'the unexpected error was logged')
  t.notOk(logs.some((l) => l.includes(secret)), 'the log line is masked')
})

t.test('scan cost (reported, not asserted)', async (t) => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,:;-\n'
  const bytes = randomBytes(200 * 1024)
  let text = ''
  for (const b of bytes) text += alphabet[b % alphabet.length]
  const secrets = [0, 1, 2].map(() => 'Pw' + randomBytes(6).toString('hex'))
  const measure = (g: EchoGuard, s: string) => {
    for (let i = 0; i < 5; i++) g.redact(s) // warm up
    const runs = 20
    const t0 = performance.now()
    for (let i = 0; i < runs; i++) g.redact(s)
    return (performance.now() - t0) / runs
  }
  const one = guardOf(secrets[0])
  const plain = guardOf(...secrets)
  const special = guardOf(SECRET)
  const withHits = text.slice(0, 100_000) + secrets[0] + text.slice(100_000)
  const msOne = measure(one, text)
  const msPlain = measure(plain, text)
  const msSpecial = measure(special, text)
  const msHits = measure(plain, withHits)
  t.comment(`scan of 200 KB: ${msOne.toFixed(2)} ms for one alphanumeric secret (${one.size} fingerprints); ` +
    `${msPlain.toFixed(2)} ms for three (${plain.size} fingerprints); ` +
    `${msSpecial.toFixed(2)} ms for one secret full of special characters (${special.size} fingerprints); ${msHits.toFixed(2)} ms for three, with a hit`)
  t.ok(plain.redact(text) === text, 'random text: no false positive')
  t.ok(plain.redact(withHits).includes(MASK))
})
