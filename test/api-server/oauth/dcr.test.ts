import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { consoleLogin, consent, DEFAULT_SCOPE, pkce, postForm, testClock } from './helpers.ts'

const good = (extra: Record<string, unknown> = {}) => ({
  client_name: 'Claude Code',
  redirect_uris: ['http://127.0.0.1:33418/callback'],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  ...extra,
})

t.test('dynamic client registration', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now })
  // each subtest starts in a fresh rate-limit window, so only the rate-limit test meets the limit
  t.beforeEach(() => clock.advance(61_000))
  const register = (body: unknown) => s.request('POST', '/oauth/register', { body })

  t.test('[EP-06] [FLD-36] 201 with the registered client', async (t) => {
    const r = await register(good())
    t.equal(r.status, 201)
    t.equal(r.headers.get('cache-control'), 'no-store')
    t.match(r.body.client_id, /^ncli_[0-9A-Za-z]{22}$/)
    t.type(r.body.client_id_issued_at, 'number')
    t.ok(Math.abs(r.body.client_id_issued_at - Math.floor(clock.now() / 1000)) <= 2, 'issued_at from the service clock')
    t.same(r.body, {
      client_id: r.body.client_id, client_id_issued_at: r.body.client_id_issued_at, client_name: 'Claude Code',
      redirect_uris: ['http://127.0.0.1:33418/callback'], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: DEFAULT_SCOPE,
    })
    const row = await s.testDb.db.query('select * from oauth_clients where id = $1', [r.body.client_id])
    t.equal(row.rowCount, 1)
  })

  t.test('loopback (any port, with or without) and oob redirect URIs are accepted; unknown fields ignored', async (t) => {
    const r = await register(good({
      redirect_uris: ['http://localhost/cb', 'http://127.0.0.1/', 'http://localhost:8080/a/b?x=1', 'urn:ietf:wg:oauth:2.0:oob'],
      logo_uri: 'https://example.com/logo.png', software_id: 'x', something_new: { nested: true },
    }))
    t.equal(r.status, 201)
    t.notOk('logo_uri' in r.body)
    t.notOk('something_new' in r.body)
    t.equal(r.body.redirect_uris.length, 4)
  })

  t.test('omitted token_endpoint_auth_method means none; omitted grant and response types get defaults', async (t) => {
    const r = await register({ redirect_uris: ['http://127.0.0.1/callback'] })
    t.equal(r.status, 201)
    t.equal(r.body.token_endpoint_auth_method, 'none')
    t.same(r.body.grant_types, ['authorization_code', 'refresh_token'])
    t.same(r.body.response_types, ['code'])
    t.type(r.body.client_name, 'string')
  })

  t.test('[AUTH-12] [ERR-24] token_endpoint_auth_method other than none gives invalid_client_metadata', async (t) => {
    for (const m of ['client_secret_basic', 'client_secret_post', 'private_key_jwt', '', 42]) {
      const r = await register(good({ token_endpoint_auth_method: m }))
      t.equal(r.status, 400, String(m))
      t.equal(r.body.error, 'invalid_client_metadata')
      t.type(r.body.error_description, 'string')
    }
  })

  t.test('[AUTH-13] [ERR-25] a non-loopback, non-oob redirect URI gives invalid_redirect_uri', async (t) => {
    const bad = [
      'https://127.0.0.1/callback', // https is not the loopback form the spec allows
      'http://example.com/callback',
      'http://localhost.evil.com/callback',
      'http://127.0.0.1.nip.io/callback',
      'http://localhost@evil.com/',
      'http://evil.com@127.0.0.1/',
      'http://[::1]/callback',
      'http://127.1/callback',
      'http://10.0.0.5/callback',
      'myapp://callback',
      'urn:ietf:wg:oauth:2.0:oob:auto',
      'http://127.0.0.1/cb#frag',
      'javascript:alert(1)',
      '',
    ]
    for (const uri of bad) {
      const r = await register(good({ redirect_uris: ['http://127.0.0.1/ok', uri] }))
      t.equal(r.status, 400, uri)
      t.equal(r.body.error, 'invalid_redirect_uri', uri)
    }
    const none = await register(good({ redirect_uris: [] }))
    t.equal(none.body.error, 'invalid_redirect_uri', 'the code grant needs a redirect URI')
    const notArray = await register(good({ redirect_uris: 'http://127.0.0.1/cb' }))
    t.equal(notArray.body.error, 'invalid_redirect_uri')
  })

  t.test('other metadata validation', async (t) => {
    const cases: Array<[unknown, string]> = [
      [good({ grant_types: ['client_credentials'] }), 'invalid_client_metadata'],
      [good({ grant_types: ['implicit'] }), 'invalid_client_metadata'],
      [good({ response_types: ['token'] }), 'invalid_client_metadata'],
      [good({ client_name: 7 }), 'invalid_client_metadata'],
      [good({ client_name: 'x'.repeat(201) }), 'invalid_client_metadata'],
      [[1, 2], 'invalid_client_metadata'],
      ['"a string"', 'invalid_client_metadata'],
      ['{not json', 'invalid_client_metadata'],
    ]
    for (const [body, error] of cases) {
      const r = await register(body)
      t.equal(r.status, 400, JSON.stringify(body).slice(0, 60))
      t.equal(r.body.error, error)
    }
    const deviceOnly = await register({ client_name: 'headless', grant_types: [ 'urn:ietf:params:oauth:grant-type:device_code', 'refresh_token' ] })
    t.equal(deviceOnly.status, 201, 'a device-only client needs no redirect URI')
    t.same(deviceOnly.body.redirect_uris, [])
  })

  t.test('[AUTH-15] [AUTH-09] registration confers no authority: scope clamped, a token still needs consent', async (t) => {
    const r = await register(good({ scope: 'identities:write keys:write org:admin networks:write billing:admin agents:write' }))
    t.equal(r.status, 201)
    t.equal(r.body.scope, DEFAULT_SCOPE)
    const clientId = r.body.client_id
    // without a console session the authorize endpoint only sends the browser to sign in
    const { challenge } = pkce()
    const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:5555/callback', code_challenge: challenge, code_challenge_method: 'S256' })
    const anon = await fetch(`${s.url}/oauth/authorize?${q}`, { redirect: 'manual' })
    t.equal(anon.status, 302)
    t.match(anon.headers.get('location'), /^\/console\/login\?next=/)
    // no grant type lets a client get a token on its own
    for (const grant_type of ['client_credentials', 'password']) {
      const tok = await postForm(s, '/oauth/token', { grant_type, client_id: clientId, username: 'owner', password: 'x' })
      t.equal(tok.status, 400)
      t.equal(tok.body.error, 'unsupported_grant_type')
    }
    // with consent, the token carries the default set only
    const org = await s.bootstrap()
    const cookie = await consoleLogin(s, org)
    const loc = await consent(s, cookie, { clientId, redirectUri: 'http://127.0.0.1:5555/callback', challenge, scope: 'identities:write keys:write' })
    t.ok(loc.searchParams.get('code'))
  })

  t.test('[AUTH-14] rate-limited per source IP: 429 with Retry-After, then a new window', async (t) => {
    const statuses: number[] = []
    let limited: Awaited<ReturnType<typeof register>> | undefined
    for (let i = 0; i < 21; i++) {
      const r = await register(i % 2 ? good() : { token_endpoint_auth_method: 'client_secret_basic' })
      statuses.push(r.status)
      if (r.status === 429) limited = r
    }
    t.same(statuses.slice(0, 20).filter((x) => x === 429), [], 'the first 20 attempts (good or bad) pass')
    t.equal(statuses[20], 429, 'the 21st in the same minute is refused')
    t.ok(limited)
    const retry = Number(limited!.headers.get('retry-after'))
    t.ok(retry >= 1 && retry <= 60, 'Retry-After in seconds')
    t.equal(limited!.body.error, 'too_many_requests')
    const bad = await register('{not json')
    t.equal(bad.status, 429, 'even unreadable bodies are counted and refused')
    clock.advance(60_000)
    const after = await register(good())
    t.equal(after.status, 201, 'a new window opens when the minute is over')
  })
})

t.test('[AUTH-11] [ERR-26] registration disabled: 404', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_OAUTH_DCR_ENABLED: 'false' } })
  const r = await s.request('POST', '/oauth/register', { body: good() })
  t.equal(r.status, 404)
  const unknown = await s.request('POST', '/oauth/nope', { body: good() })
  t.equal(r.text, unknown.text, 'the same body as any unknown route')
  const count = await s.testDb.db.query('select count(*)::int as n from oauth_clients where not builtin')
  t.equal(count.rows[0].n, 0)
  // the built-in client still works without registration
  const dev = await postForm(s, '/oauth/device', { client_id: 'ncli_nightjar_cli' })
  t.equal(dev.status, 200)
})
