// Console sign-in under attack: throttling and lockout per account and
// per client address with Retry-After, equal work for unknown and known accounts,
// login CSRF (Origin and form token), and the post-login destination. Time runs on
// the injected service clock: no test sleeps.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:http'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { loginForm, postLogin, testClock, hiddenFields } from '../oauth/helpers.ts'
import { passwordCheck, checkPassword } from '../../../api-server/auth/login.ts'
import { DUMMY_PASSWORD_HASH, hashPassword } from '../../../api-server/auth/passwords.ts'

const PASSWORD = 'correct horse battery'
const hasSession = (r: { headers: Headers }) => r.headers.getSetCookie().some((c) => c.startsWith('nj_console='))
const retryAfter = (r: { headers: Headers }) => Number(r.headers.get('retry-after'))

/** A form POST from another loopback source address (another "client IP"). */
function postFrom(s: TestServer, localAddress: string, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const body = new URLSearchParams(fields).toString()
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const u = new URL(s.url + path)
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', localAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('console sign-in throttling and lockout', async (t) => {
  // frozen: the lockouts are checked to the second, and 60 requests under CI load take more than one
  const clock = testClock({ frozen: true })
  const s = await startTestServer(t, { now: clock.now })
  const org = await s.bootstrap()

  t.test('[AUTH-05] 60 wrong passwords: throttled with 429 + Retry-After, and the right password is refused until the lockout passes', async (t) => {
    const form = await loginForm(s)
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof postLogin>> | undefined
    for (let i = 0; i < 60; i++) {
      last = await postLogin(s, { email: org.email, password: `wrong password ${i}` }, { form })
      statuses.push(last.status)
    }
    t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'the first five failures are answered plainly')
    t.ok(statuses.slice(5).every((x) => x === 429), 'then every attempt is throttled')
    t.ok(retryAfter(last!) >= 1 && retryAfter(last!) <= 30, 'Retry-After says when to come back')
    const right = await postLogin(s, { email: org.email, password: PASSWORD }, { form })
    t.equal(right.status, 429, 'the right password is refused during the lockout')
    t.notOk(hasSession(right), 'and no session is started')
    t.ok(retryAfter(right) >= 1)
    clock.advance(29_000)
    t.equal((await postLogin(s, { email: org.email, password: PASSWORD }, { form })).status, 429, 'still locked just before the end')
    clock.advance(2_000)
    const after = await postLogin(s, { email: org.email, password: PASSWORD }, { form })
    t.equal(after.status, 303, 'once the lockout has passed the right password works')
    t.ok(hasSession(after))
  })

  t.test('the lock grows exponentially with each further failure, up to a cap; refused attempts do not extend it', async (t) => {
    const form = await loginForm(s)
    const email = 'nobody-backoff@example.test'
    for (let i = 0; i < 5; i++) await postLogin(s, { email, password: 'x' }, { form })
    const seen: number[] = []
    for (let round = 0; round < 8; round++) {
      const r = await postLogin(s, { email, password: 'x' }, { form })
      t.equal(r.status, 429)
      seen.push(retryAfter(r))
      // hammering during the lock neither counts nor lengthens it
      for (let i = 0; i < 3; i++) await postLogin(s, { email, password: 'x' }, { form })
      clock.advance(seen[seen.length - 1] * 1000 + 1000)
      t.equal((await postLogin(s, { email, password: 'x' }, { form })).status, 401, `round ${round}: free again after Retry-After; one more failure`)
    }
    // the first lock (5th failure) is 30 s; each failure after it doubles, capped at 900 s
    const expected = [30, 60, 120, 240, 480, 900, 900, 900]
    t.same(seen.map((v, i) => v <= expected[i] && v >= expected[i] - 2), expected.map(() => true), `Retry-After ${seen.join(',')} follows 30,60,120,240,480,900,900… (±2 s of real time)`)
  })

  t.test('an unknown e-mail is throttled exactly like a known one (no enumeration through the lockout)', async (t) => {
    const form = await loginForm(s)
    const run = async (email: string) => {
      const out: number[] = []
      for (let i = 0; i < 7; i++) out.push((await postLogin(s, { email, password: 'not it' }, { form })).status)
      return out
    }
    const other = await s.bootstrap()
    t.same(await run('no-such-user@example.test'), await run(other.email))
    clock.advance(60_000)
  })

  t.test('equal work: an unknown account runs the same scrypt verification as a known one with a wrong password', async (t) => {
    const form = await loginForm(s)
    const calls: string[] = []
    const original = passwordCheck.verify
    passwordCheck.verify = async (pw, hash) => {
      calls.push(hash.split('$').slice(0, 4).join('$') + '$' + Buffer.from(hash.split('$')[5] ?? '', 'base64').length)
      return original(pw, hash)
    }
    t.teardown(() => { passwordCheck.verify = original })
    const known = await (async () => { const o = await s.bootstrap(); return o.email })()
    const a = await postLogin(s, { email: 'unknown-equal-work@example.test', password: 'guess one' }, { form })
    const b = await postLogin(s, { email: known, password: 'guess one' }, { form })
    t.equal(calls.length, 2, 'exactly one verification per attempt, known or not')
    t.equal(calls[0], calls[1], 'same algorithm, cost parameters and key length')
    t.equal(calls[0], 'scrypt$16384$8$1$32')
    t.equal(a.status, 401)
    t.equal(a.text, b.text, 'byte-identical answers')

    // the same, one level down, with an injected verifier
    let n = 0
    const counting = async (_pw: string, hash: string) => { n++; return hash === 'never' }
    t.equal(await checkPassword(s.testDb.db, 'nobody@nowhere.test', 'pw', counting), null)
    t.equal(await checkPassword(s.testDb.db, known, 'pw', counting), null)
    t.equal(n, 2)
    t.equal(DUMMY_PASSWORD_HASH.split('$').slice(0, 4).join('$'), (await hashPassword('x')).split('$').slice(0, 4).join('$'), 'the dummy hash has the real parameters')
  })

  t.test('the account lock holds from every address; a browser that signed in before keeps working', async (t) => {
    const victim = await s.bootstrap()
    // the victim signed in earlier from their own browser: it holds the known-browser cookie
    const own = await postLogin(s, { email: victim.email, password: PASSWORD })
    t.equal(own.status, 303)
    const known = own.headers.getSetCookie().find((c) => c.startsWith('nj_known_browser='))!.split(';')[0]
    // an attacker on another address locks the account
    const page = await loginForm(s)
    for (let i = 0; i < 8; i++) {
      await postFrom(s, '127.0.0.2', '/console/login', { email: victim.email, password: `guess ${i}`, csrf: page.csrf, next: '/console/keys' }, { cookie: page.cookie })
    }
    const fromElsewhere = await postFrom(s, '127.0.0.3', '/console/login', { email: victim.email, password: PASSWORD, csrf: page.csrf, next: '/console/keys' }, { cookie: page.cookie })
    t.equal(fromElsewhere.status, 429, 'a new browser anywhere waits for the lock')
    const mine = await postLogin(s, { email: victim.email, password: PASSWORD }, { headers: { cookie: known } })
    t.equal(mine.status, 303, 'the victim\'s known browser is not locked out by the attacker')
    clock.advance(900_000)
  })

  t.test('a browser that wants a page gets the sign-in page with 429; other clients a JSON error', async (t) => {
    const form = await loginForm(s)
    const email = 'json-or-html@example.test'
    for (let i = 0; i < 6; i++) await postLogin(s, { email, password: 'x' }, { form })
    const json = await postLogin(s, { email, password: 'x' }, { form })
    t.equal(json.status, 429)
    t.equal(json.body.error.code, 'rate_limited')
    t.match(json.body.error.message, /^too many sign-in attempts; retry in \d+ s$/)
    const html = await postLogin(s, { email, password: 'x' }, { form, headers: { accept: 'text/html' } })
    t.equal(html.status, 429)
    t.ok(retryAfter(html) > 0)
    t.match(html.text, /Too many sign-in attempts\. Try again in \d+ seconds\./)
    clock.advance(900_000)
  })
})

t.test('per-address limit: spraying many accounts from one address is throttled', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now, env: { NIGHTJAR_LOGIN_IP_LIMIT: '8', NIGHTJAR_LOGIN_IP_WINDOW_SECONDS: '600' } })
  const org = await s.bootstrap()
  const form = await loginForm(s)
  for (let i = 0; i < 8; i++) t.equal((await postLogin(s, { email: `spray${i}@example.test`, password: 'Winter2024!' }, { form })).status, 401)
  const r = await postLogin(s, { email: org.email, password: PASSWORD }, { form })
  t.equal(r.status, 429, 'the ninth attempt from the address is refused, whatever the account')
  t.ok(retryAfter(r) > 500 && retryAfter(r) <= 600)
  const elsewhere = await postFrom(s, '127.0.0.2', '/console/login', { email: org.email, password: PASSWORD, csrf: form.csrf, next: '/console/keys' }, { cookie: form.cookie })
  t.equal(elsewhere.status, 303, 'another address is not affected')
  clock.advance(601_000)
  t.equal((await postLogin(s, { email: org.email, password: PASSWORD }, { form })).status, 303, 'after the window the address may sign in again')
})

t.test('login CSRF and the post-login destination', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const browser = await launchTestBrowser(t)

  t.test('a cross-site POST is refused: evil Origin, null Origin, cross-site fetch metadata or Referer, missing or wrong form token', async (t) => {
    const form = await loginForm(s)
    const good = { email: org.email, password: PASSWORD }
    const cases: Array<[string, Parameters<typeof postLogin>[2]]> = [
      ['Origin evil', { form, headers: { origin: 'http://evil.example' } }],
      ['Origin null', { form, headers: { origin: 'null' } }],
      ['same host, other port', { form, headers: { origin: s.url.replace(/:\d+$/, ':1') } }],
      ['Sec-Fetch-Site cross-site', { form, headers: { 'sec-fetch-site': 'cross-site' } }],
      ['Sec-Fetch-Site same-site', { form, headers: { 'sec-fetch-site': 'same-site' } }],
      ['Referer evil', { form, headers: { referer: 'http://evil.example/login' } }],
      ['no form token', { form: { cookie: form.cookie, csrf: '' } }],
      ['wrong form token', { form: { cookie: form.cookie, csrf: 'A'.repeat(43) } }],
      ['no token cookie', { form: { cookie: '', csrf: form.csrf } }],
      ['another browser\'s token', { form: { cookie: (await loginForm(s)).cookie, csrf: form.csrf } }],
    ]
    for (const [name, o] of cases) {
      const r = await postLogin(s, good, o)
      t.equal(r.status, 403, name)
      t.notOk(hasSession(r), `${name}: no session`)
    }
    const ok = await postLogin(s, good, { form, headers: { origin: s.url, 'sec-fetch-site': 'same-origin' } })
    t.equal(ok.status, 303, 'the same form from our own origin signs in')
  })

  t.test('in Chromium: an auto-submitting form on another site does not sign the victim in', async (t) => {
    // the attacker's page, on another site (localhost vs 127.0.0.1), posts the attacker's credentials
    const target = `${s.url}/console/login`
    const evil = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><form id="f" method="post" action="${target}">
        <input name="email" value="${org.email}"><input name="password" value="${PASSWORD}"><input name="next" value="/console/keys"></form>
        <script>document.getElementById('f').submit()</script>`)
    })
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()))
    t.teardown(() => new Promise<void>((r) => evil.close(() => r())))
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    // the victim has visited the real sign-in page before (so a token cookie exists)
    await page.goto(`${s.url}/console/login`)
    await page.goto(`http://localhost:${(evil.address() as { port: number }).port}/`)
    await page.waitForURL((u) => u.origin === new URL(s.url).origin)
    await page.waitForSelector('[role=alert]')
    t.match(await page.textContent('[role=alert]'), /did not come from this site/)
    t.notOk((await ctx.cookies()).some((c) => c.name === 'nj_console'), 'no console session cookie')
  })

  const hostile = [
    '/%09/evil.example/x',
    '/\t/evil.example/x',
    '//evil.example',
    '//evil.example/x',
    '/\\evil.example',
    '/\\/evil.example',
    '\\/evil.example',
    'https://evil.example',
    'http:evil.example',
    'javascript:alert(1)',
    '/console/keys\r\nSet-Cookie: x=1',
    '/console/keys%0d%0aSet-Cookie:%20x=1',
    '/\r\n/evil.example',
    '/x\u0000y',
    ' //evil.example',
    '/%2F/evil.example',
    '/%5Cevil.example',
  ]

  t.test('next: every hostile value lands on a same-origin path, never a 500 (POST)', async (t) => {
    const origin = new URL(s.url).origin
    for (const next of hostile) {
      const r = await postLogin(s, { email: org.email, password: PASSWORD, next })
      t.equal(r.status, 303, `${JSON.stringify(next)}: 303`)
      const loc = r.headers.get('location') ?? ''
      t.ok(loc.startsWith('/') && !loc.startsWith('//') && !/[\\\u0000-\u001f]/.test(loc), `${JSON.stringify(next)}: a path (${JSON.stringify(loc)})`)
      // what a browser makes of it: tab/CR/LF stripped, backslash read as slash
      const asBrowser = new URL(loc.replace(/[\t\r\n]/g, ''), s.url)
      t.equal(asBrowser.origin, origin, `${JSON.stringify(next)}: same origin`)
    }
    const kept = await postLogin(s, { email: org.email, password: PASSWORD, next: '/oauth/authorize?user_code=ABCD-EFGH&x=%2F%2F' })
    t.equal(kept.headers.get('location'), '/oauth/authorize?user_code=ABCD-EFGH&x=%2F%2F', 'a same-origin path with its query is kept as is')
  })

  t.test('next: the sign-in page answers 200 with a safe hidden field whatever next holds (GET)', async (t) => {
    for (const next of hostile) {
      const res = await fetch(`${s.url}/console/login?next=${encodeURIComponent(next)}`)
      t.equal(res.status, 200, JSON.stringify(next))
      const value = hiddenFields(await res.text()).next
      t.ok(value.startsWith('/') && !value.startsWith('//') && !/[\\\u0000-\u001f]/.test(value), `${JSON.stringify(next)} → ${JSON.stringify(value)}`)
    }
    // the raw issue repro: the percent-encoded tab arrives decoded in the query
    const raw = await fetch(`${s.url}/console/login?next=/%09/evil.example/x`)
    t.equal(hiddenFields(await raw.text()).next, '/console/keys')
    const crlf = await fetch(`${s.url}/console/login?next=/%0d%0aLocation:%20http://evil.example`)
    t.equal(crlf.status, 200)
  })

  t.test('in Chromium: next=/%09/evil.example/x signs in and stays on this origin', async (t) => {
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await page.goto(`${s.url}/console/login?next=/%09/evil.example/x`)
    await page.fill('#email', org.email)
    await page.fill('#password', PASSWORD)
    await Promise.all([page.waitForURL((u) => u.pathname === '/console/keys'), page.click('button[type=submit]')])
    t.equal(new URL(page.url()).origin, new URL(s.url).origin)
  })

  t.test('sign-in never logs a password', async (t) => {
    t.notOk(s.logs().includes(PASSWORD))
  })
})
