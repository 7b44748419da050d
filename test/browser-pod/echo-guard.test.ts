// The echo guard on its own: every encoding it fingerprints, overlapping and adjacent
// matches, no false positive across two strings, nothing of the secret kept in the
// object, the pod API as the boundary (results, errors, log lines; binary fields
// left alone), and the scan cost (reported, not asserted).
// Secret-bearing text is only ever checked with t.ok(x === y) / t.notOk(x.includes(s)),
// so a failure never prints the secret.
import t from 'tap'
import { inspect } from 'node:util'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { EchoGuard, MASK, MIN_GUARDED_LENGTH, variants } from '../../browser-pod/secrets/echo-guard.ts'
import { createPodApi } from '../../browser-pod/pod-api.ts'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import type { PodSession } from '../../browser-pod/session.ts'
import { shown } from '../helpers/perceived.ts'

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

t.test('the pod API is the boundary: results, errors and log lines; binary fields left alone', async (t) => {
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
  const server = createPodApi({ token, session: fakeSession, log: (l) => logs.push(l) })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const client = new PodClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, token)
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

// Every encoding a page makes with one built-in call, made by real Chromium's own
// built-ins after a real secure fill, through every echo channel the pod API reads
// back: the console (strings, and arrays as the console renders them), dialogs,
// document.title, the visible text and the aria snapshot, and the URL's fragment.
t.test('real Chromium: each one-call encoding is masked in the console, dialogs, title, text, snapshot and URL', async (t) => {
  const { startPagePod } = await import('./harness.ts')
  // Latin-1 only (btoa takes it), both cases, the characters the encoders disagree on
  const canary = `Cn&ry  "<${randomBytes(5).toString('hex')}>" é+'x/~Q`
  const HOST = 'encodings.example'
  // name → the page's one call (a string, or an array the console renders itself)
  const CALLS: Record<string, string> = {
    hex: `Array.from(new TextEncoder().encode(v), (b) => b.toString(16).padStart(2, '0')).join('')`,
    HEX: `Array.from(new TextEncoder().encode(v), (b) => b.toString(16).padStart(2, '0').toUpperCase()).join('')`,
    toHex: `new TextEncoder().encode(v).toHex()`,
    btoa: `btoa(v)`,
    toBase64: `new TextEncoder().encode(v).toBase64()`,
    toBase64url: `new TextEncoder().encode(v).toBase64({ alphabet: 'base64url' })`,
    encodeURIComponent: `encodeURIComponent(v)`,
    encodeURI: `encodeURI(v)`,
    escape: `escape(v)`,
    'JSON.stringify': `JSON.stringify(v)`,
    'CSS.escape': `CSS.escape(v)`,
    toUpperCase: `v.toUpperCase()`,
    toLowerCase: `v.toLowerCase()`,
    'normalize NFD': `v.normalize('NFD')`,
    'String(TextEncoder bytes)': `String(new TextEncoder().encode(v))`,
    'String(split)': `String(v.split(''))`,
    'console array of characters': `[...v]`,
    'console array of bytes': `Array.from(new TextEncoder().encode(v))`,
  }
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>encodings</title></head><body>
<input id="pw" type="password"><button id="go" onclick="echo()">go</button><div id="out"></div><p id="state">idle</p>
<script>
const CALLS = ${JSON.stringify(CALLS)}
function echo() {
  const v = document.getElementById('pw').value
  const titles = []
  for (const [name, call] of Object.entries(CALLS)) {
    const e = new Function('v', 'return ' + call)(v)
    console.log(e)
    console.log(name + ': ' + e)
    alert(String(e))
    const line = document.createElement('p')
    line.textContent = name + ': ' + e
    document.getElementById('out').append(line)
    titles.push(String(e))
  }
  document.title = titles.join(' | ')
  location.hash = new TextEncoder().encode(v).toHex() + '.' + new TextEncoder().encode(v).toBase64({ alphabet: 'base64url', omitPadding: true })
  document.getElementById('state').textContent = 'echoed'
}
</script></body></html>`
  const { pod, client, logs } = await startPagePod(t, 'nsess_encodings', HOST, page)
  await client.drive('navigate', { url: `http://${HOST}/login.html` })
  const value = Buffer.from(canary)
  await client.secureType({ selector: '#pw', value, allowlist: [HOST] }).finally(() => value.fill(0))
  await client.drive('act', { verb: 'click', selector: '#go' })
  await client.drive('wait_for', { text: 'echoed' })
  const consoleReply = await client.drive('console_messages', {})
  const perceived = await client.drive('perceive', { full: true })

  // the same encodings, computed here in Node (no guard code), in each rendering the channels use
  const te = (s: string) => new TextEncoder().encode(s)
  const forms: Record<string, string[]> = {
    hex: [Buffer.from(canary).toString('hex')],
    HEX: [Buffer.from(canary).toString('hex').toUpperCase()],
    toHex: [Buffer.from(canary).toString('hex')],
    btoa: [Buffer.from(canary, 'latin1').toString('base64').replace(/=+$/, '')],
    toBase64: [Buffer.from(canary).toString('base64').replace(/=+$/, '')],
    toBase64url: [Buffer.from(canary).toString('base64url')],
    encodeURIComponent: [encodeURIComponent(canary)],
    encodeURI: [encodeURI(canary)],
    escape: [escape(canary)],
    'JSON.stringify': [JSON.stringify(canary).slice(1, -1)],
    toUpperCase: [canary.toUpperCase(), canary.toUpperCase().replace(/\s+/g, ' ')],
    toLowerCase: [canary.toLowerCase(), canary.toLowerCase().replace(/\s+/g, ' ')],
    'normalize NFD': [canary.normalize('NFD'), canary.normalize('NFD').replace(/\s+/g, ' ')],
    'String(TextEncoder bytes)': [String(te(canary))],
    'String(split)': [String(canary.split('')), String(canary.split('')).replace(/\s+/g, ' ')],
    'console array of characters': [[...canary].join(', ')],
    'console array of bytes': [Array.from(te(canary)).join(', ')],
    raw: [canary, canary.replace(/\s+/g, ' ')],
    'the random core': [canary.slice(9, 19)],
  }
  // CSS.escape has no Node twin: Chromium's own answer, read back without passing the pod API
  const cssEscaped = await pod.session.page.evaluate((s) => CSS.escape(s), canary)
  forms['CSS.escape'] = [cssEscaped, cssEscaped.replace(/\s+/g, ' ')]
  t.equal(Object.keys(forms).filter((k) => k in CALLS).length, Object.keys(CALLS).length, 'every call the page makes is searched for')

  const replies = { console: JSON.stringify(consoleReply), perceive: JSON.stringify(perceived), log: logs.join('\n') }
  for (const [name, list] of Object.entries(forms)) {
    for (const [channel, text] of Object.entries(replies)) t.notOk(list.some((f) => text.includes(f)), `${name}: not in the ${channel} reply`)
  }
  // the echoes are there, masked: the channels carried them (so the check above could fail)
  const messages = consoleReply.messages as Array<{ type: string; text: string }>
  const n = Object.keys(CALLS).length
  // what the page adds around the value stays: base64's padding, JSON's quotes
  const bare = (s: string) => s.replace(/=+$/, '').replace(/^"(.*)"$/, '$1')
  t.equal(messages.filter((m) => m.type === 'log' && bare(m.text) === MASK).length, n - 2, 'console.log(e) of each string: the mask alone')
  t.equal(messages.filter((m) => m.type === 'log' && /^[\w .()]+: /.test(m.text) && bare(m.text.replace(/^[\w .()]+: /, '')) === MASK).length, n, 'console.log(name + e) of each: the name, then the mask')
  t.equal(messages.filter((m) => m.type === 'log' && m.text === `[${MASK}]`).length, 2, 'an array the console renders itself: masked inside the brackets')
  t.equal(messages.filter((m) => m.type === 'dialog' && m.text.includes(MASK)).length, n, 'each alert: masked')
  t.ok(perceived.title.split(' | ').map(bare).join(' | ') === Array(n).fill(MASK).join(' | '), 'document.title: every encoding masked')
  // the page's lines are the snapshot's (text holds only lines the snapshot does not say)
  t.ok(shown(perceived).split(MASK).length - 1 >= n, 'what perceive shows of the page: each line masked')
  t.ok(perceived.snapshot.split(MASK).length - 1 >= n, 'aria snapshot: each line masked')
  t.ok(perceived.url === `http://${HOST}/login.html#${MASK}.${MASK}`, 'the fragment: hex and base64url masked')
})

// A secret below MIN_GUARDED_LENGTH is typed but never fingerprinted: the paths that
// cannot be scanned (a PDF, a CDP connection) ask whether anything was filled at all.
t.test('real Chromium: after a fill too short to fingerprint, no PDF and no CDP', async (t) => {
  const { startPagePod } = await import('./harness.ts')
  const { WebSocket } = await import('ws')
  const { POD_CDP_PATH } = await import('../../contracts/pod-api.ts')
  const HOST = 'short.example'
  const page = `<!doctype html><title>short</title><input id="pw" type="password"><p id="t">a page</p>`
  const { pod, client, token } = await startPagePod(t, 'nsess_shortfill', HOST, page)
  await client.drive('navigate', { url: `http://${HOST}/` })
  t.equal(Buffer.from((await client.drive('pdf', {})).pdf, 'base64').subarray(0, 5).toString(), '%PDF-', 'a PDF before the fill')
  const value = Buffer.from('k9!')
  await client.secureType({ selector: '#pw', value, allowlist: [HOST] }).finally(() => value.fill(0))
  t.equal(pod.session.echoGuard.size, 0, 'nothing was fingerprinted (3 characters)')
  const err = await client.drive('pdf', {}).then(() => null, (e: ApiError) => e)
  t.equal(err?.status, 403)
  t.same(err?.toBody(), { error: { code: 'forbidden', message: 'no PDF is made of a session a credential was filled in', reason: 'pdf_after_fill' } }, 'pdf: refused all the same')
  const upgrade = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const ws = new WebSocket(pod.endpoint.replace(/^http/, 'ws') + POD_CDP_PATH, { headers: { authorization: `Bearer ${token}` } })
    ws.once('open', () => { ws.close(); reject(new Error('the CDP upgrade was accepted')) })
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    ws.once('error', reject)
  })
  t.same(upgrade, { status: 403, body: 'CDP is refused on a session a credential was filled in' }, 'CDP: refused all the same')
})
