// Abuse limits on the OAuth surface: the device endpoint and the verification page's
// user-code entry are limited (429 + Retry-After), and every refresh token that does
// not work gets one byte-identical invalid_grant. Time runs on the injected clock.
import t from 'tap'
import * as oauth from 'oauth4webapi'
import { startTestServer } from '../../helpers/server.ts'
import { BUILTIN, consoleLogin, getPage, hiddenFields, loginTokens, postForm, refresh, requestFrom, testClock } from './helpers.ts'

const insecure = { [oauth.allowInsecureRequests]: true }

async function discover(url: string) {
  const issuer = new URL(url)
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }))
}

t.test('[EP-05] [RULE-22] POST /oauth/device: a flood from one address gets 429 with Retry-After, in RFC 6749 error form', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now, env: { NIGHTJAR_DEVICE_RATE_LIMIT: '5', NIGHTJAR_DEVICE_RATE_WINDOW_SECONDS: '60' } })
  const as = await discover(s.url)
  const client: oauth.Client = { client_id: BUILTIN }
  const ask = () => oauth.deviceAuthorizationRequest(as, client, oauth.None(), {}, insecure)
  for (let i = 0; i < 5; i++) {
    const d = await oauth.processDeviceAuthorizationResponse(as, client, await ask())
    t.ok(d.device_code, `request ${i + 1} is served`)
  }
  const flooded: Response[] = []
  for (let i = 0; i < 20; i++) flooded.push(await ask())
  t.ok(flooded.every((r) => r.status === 429), 'every further request: 429')
  const r = flooded[0]
  const retry = Number(r.headers.get('retry-after'))
  t.ok(retry >= 1 && retry <= 60, 'Retry-After within the window')
  t.equal(r.headers.get('cache-control'), 'no-store')
  const body = await r.json()
  t.same(Object.keys(body).sort(), ['error', 'error_description'])
  t.equal(body.error, 'too_many_requests')
  await t.rejects(oauth.processDeviceAuthorizationResponse(as, client, await ask()), 'the OAuth client sees an error, not a device code')
  const rows = (await s.testDb.db.query('select count(*)::int as n from oauth_device_codes')).rows[0].n
  t.equal(rows, 5, 'refused requests write no rows')
  const other = await requestFrom(s, '127.0.0.2', 'POST', '/oauth/device', { form: { client_id: BUILTIN } })
  t.equal(other.status, 200, 'another address is not affected')
  clock.advance(61_000)
  t.equal((await ask()).status, 200, 'a new window serves again')
})

t.test('[EP-03] [RULE-22] the verification page: user-code guessing is limited per account and per address', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now, env: { NIGHTJAR_USER_CODE_LIMIT: '5', NIGHTJAR_USER_CODE_WINDOW_SECONDS: '300' } })
  const org = await s.bootstrap()
  const other = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const otherCookie = await consoleLogin(s, other)
  const as = await discover(s.url)
  const client: oauth.Client = { client_id: BUILTIN }
  const d = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), {}, insecure))
  const guess = (code: string, c = cookie, accept?: string) => getPageWith(`/oauth/authorize?user_code=${code}`, c, accept)
  const getPageWith = async (path: string, c: string, accept?: string) => {
    const res = await fetch(s.url + path, { headers: { cookie: c, ...(accept ? { accept } : {}) }, redirect: 'manual' })
    return { status: res.status, headers: res.headers, text: await res.text() }
  }
  const wrong = (i: number) => `WXYZ-${'23456789'.slice(i % 4, (i % 4) + 4)}`

  const first: number[] = []
  for (let i = 0; i < 5; i++) first.push((await guess(wrong(i))).status)
  t.same(first, [400, 400, 400, 400, 400], 'five wrong codes are answered as invalid')
  const flood: number[] = []
  for (let i = 0; i < 100; i++) flood.push((await guess(wrong(i))).status)
  t.ok(flood.every((x) => x === 429), '100 more guesses: all 429')
  const page = await guess(d.user_code, cookie, 'text/html')
  t.equal(page.status, 429, 'the right code too, while limited (no oracle)')
  t.ok(Number(page.headers.get('retry-after')) > 0)
  t.match(page.text, /Too many wrong codes\. Try again in \d+ seconds\./)
  const json = await guess(d.user_code)
  t.equal(json.status, 429)
  t.equal(JSON.parse(json.text).error.code, 'rate_limited')

  // the POST side of the page counts too (with a valid form token from the entry page)
  const entry = await getPage(s, '/oauth/authorize', otherCookie)
  const csrf = hiddenFields(entry.text).csrf
  const post = await postForm(s, '/oauth/authorize', { user_code: d.user_code, csrf, decision: 'approve' }, { cookie: otherCookie })
  t.equal(post.status, 429, 'another account on the same address is limited by the address')
  const elsewhere = await requestFrom(s, '127.0.0.2', 'GET', `/oauth/authorize?user_code=${d.user_code}`, { headers: { cookie: otherCookie } })
  t.equal(elsewhere.status, 200, 'that account from another address sees the consent page')
  const orgElsewhere = await requestFrom(s, '127.0.0.2', 'GET', `/oauth/authorize?user_code=${d.user_code}`, { headers: { cookie } })
  t.equal(orgElsewhere.status, 429, 'the guessing account stays limited from any address')

  clock.advance(301_000)
  const ok = await guess(d.user_code)
  t.equal(ok.status, 200, 'after the window the right code shows the consent page')
  const fields = hiddenFields(ok.text)
  t.equal((await postForm(s, '/oauth/authorize', { ...fields, decision: 'approve' }, { cookie })).status, 200)
})

t.test('[AUTH-03] [EP-04] every refresh token that does not work gets one byte-identical invalid_grant', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now })
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const as = await discover(s.url)
  const client: oauth.Client = { client_id: BUILTIN }

  // unknown
  const unknown = await refresh(s, 'njr_' + 'A'.repeat(43))
  // used (a replay: it also revokes the grant, silently)
  const used = await loginTokens(s, org, { workspace: 'used' }, cookie)
  t.equal((await refresh(s, used.refresh_token)).status, 200)
  const replayed = await refresh(s, used.refresh_token)
  // revoked
  const revokedPair = await loginTokens(s, org, { workspace: 'revoked' }, cookie)
  t.equal((await postForm(s, '/oauth/revoke', { token: revokedPair.access_token })).status, 200)
  const revoked = await refresh(s, revokedPair.refresh_token)
  // another client's
  const reg = await s.request('POST', '/oauth/register', { body: { client_name: 'other', redirect_uris: ['http://127.0.0.1/callback'] } })
  const foreignPair = await loginTokens(s, org, { clientId: reg.body.client_id, redirectUri: 'http://127.0.0.1:5000/callback', workspace: 'foreign' }, cookie)
  const foreign = await refresh(s, foreignPair.refresh_token, BUILTIN)
  // malformed
  const malformed = await refresh(s, 'not-a-token')
  // expired (30 days)
  const old = await loginTokens(s, org, { workspace: 'expired' }, cookie)
  clock.advance(31 * 86_400_000)
  const expired = await refresh(s, old.refresh_token)

  const all = { unknown, used: replayed, revoked, foreign, malformed, expired }
  for (const [name, r] of Object.entries(all)) {
    t.equal(r.status, 400, `${name}: 400`)
    t.equal(r.text, unknown.text, `${name}: byte-identical body`)
    t.equal(r.headers.get('cache-control'), 'no-store')
  }
  t.same(unknown.body, { error: 'invalid_grant', error_description: 'the refresh token is invalid, expired or revoked' })
  // and through the OAuth client library
  const res = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), revokedPair.refresh_token, insecure)
  const err = await oauth.processRefreshTokenResponse(as, client, res).then(() => null, (e) => e)
  t.ok(err instanceof oauth.ResponseBodyError)
  t.equal(err.error, 'invalid_grant')
  // a replay still revoked the grant behind the identical answer
  const grant = await s.testDb.db.query("select revoked_at from oauth_grants where workspace = 'used'")
  t.ok(grant.rows[0].revoked_at, 'the reused token\'s grant is revoked')
})

t.test('the limiter behind its store interface: windows, backoff with a cap, address keys, bounded memory', async (t) => {
  const { Limits, MemoryLimitStore, WindowLimit, BackoffLock, addressKey, LIMIT_DEFAULTS } = await import('../../../api-server/limits/index.ts')
  let now = 1_000_000
  const clock = () => now
  const store = new MemoryLimitStore(50)
  const w = new WindowLimit(store, 'w', { limit: 3, windowMs: 10_000 }, clock)
  t.same([await w.hit('a'), await w.hit('a'), await w.hit('a')].map((v) => v.allowed), [true, true, true])
  t.same(await w.hit('a'), { allowed: false, retryAfterSecs: 10 })
  t.same(await w.check('b'), { allowed: true }, 'keys are independent')
  now += 10_000
  t.same(await w.hit('a'), { allowed: true }, 'a new window')
  const b = new BackoffLock(store, 'b', { freeFailures: 2, baseMs: 1000, maxMs: 4000, memoryMs: 60_000 }, clock)
  t.same(await b.fail('k'), { allowed: true })
  t.same(await b.fail('k'), { allowed: false, retryAfterSecs: 1 }, 'the second failure locks for the base')
  t.same(await b.fail('k'), { allowed: false, retryAfterSecs: 1 }, 'a refused attempt does not extend the lock')
  const locks: number[] = []
  for (let i = 0; i < 4; i++) {
    now += 5000
    const v = await b.fail('k')
    locks.push(v.allowed ? 0 : v.retryAfterSecs)
  }
  t.same(locks, [2, 4, 4, 4], 'doubling up to the cap')
  await b.reset('k')
  t.same(await b.check('k'), { allowed: true }, 'a success clears the streak')
  for (let i = 0; i < 500; i++) await w.hit(`flood-${i}`)
  t.ok(store.size <= 50, 'a flood of fresh keys cannot grow the store without bound')
  t.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7')
  t.equal(addressKey('2001:db8:aa:bb:1:2:3:4'), addressKey('2001:db8:aa:bb:ffff::1'), 'IPv6 peers share their /64')
  t.not(addressKey('2001:db8:aa:bb::1'), addressKey('2001:db8:aa:bc::1'))
  const limits = new Limits({ ...LIMIT_DEFAULTS }, clock)
  t.equal(limits.device.rule.limit, LIMIT_DEFAULTS.deviceLimit)
})
