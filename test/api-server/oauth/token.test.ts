import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import {
  BUILTIN, consent, consoleLogin, DEFAULT_SCOPE, DEFAULT_SCOPES, leaks, loginTokens, me, pkce, postForm, refresh, testClock,
} from './helpers.ts'

t.test('the token endpoint', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now })
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const redirectUri = 'http://127.0.0.1:7777/callback'
  const getCode = async (p: { challenge: string; clientId?: string; workspace?: string; scope?: string }) => {
    const loc = await consent(s, cookie, { redirectUri, ...p })
    return loc.searchParams.get('code')!
  }
  const exchange = (fields: Record<string, string | undefined>) =>
    postForm(s, '/oauth/token', { grant_type: 'authorization_code', client_id: BUILTIN, redirect_uri: redirectUri, ...fields })

  t.test('[EP-04] [FLD-34] [LIM-01] code + verifier → exactly the token response, never cached', async (t) => {
    const { verifier, challenge } = pkce()
    const code = await getCode({ challenge })
    const r = await exchange({ code, code_verifier: verifier })
    t.equal(r.status, 200)
    t.same(Object.keys(r.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type'])
    t.match(r.body.access_token, /^njo_[0-9A-Za-z]{43}$/)
    t.match(r.body.refresh_token, /^njr_[0-9A-Za-z]{43}$/)
    t.equal(r.body.token_type, 'Bearer')
    t.equal(r.body.expires_in, 900)
    t.equal(r.body.scope, DEFAULT_SCOPE)
    t.equal(r.headers.get('cache-control'), 'no-store')
    t.match(r.headers.get('content-type'), /application\/json/)
  })

  t.test('[AUTH-02] the access token works as a Bearer for 15 minutes, then 401', async (t) => {
    const tokens = await loginTokens(s, org, {}, cookie)
    const ok = await me(s, tokens.access_token)
    t.equal(ok.status, 200)
    t.equal(ok.body.orgId, org.orgId)
    t.equal(ok.body.principal.kind, 'oauth')
    clock.pause() // the one-second margin below is the clock's, not the machine's
    t.teardown(() => clock.resume())
    clock.advance(899_000)
    t.equal((await me(s, tokens.access_token)).status, 200, 'still valid at 899 s')
    clock.advance(2_000)
    const expired = await me(s, tokens.access_token)
    t.equal(expired.status, 401, 'expired at 900 s')
    const bogus = await me(s, 'njo_' + 'A'.repeat(43))
    t.equal(expired.text, bogus.text, 'the same 401 as any bad token')
    t.equal(expired.headers.get('www-authenticate'), bogus.headers.get('www-authenticate'))
  })

  t.test('[AUTH-03] [LIM-02] refresh: single-use rotation, 30-day lifetime', async (t) => {
    const first = await loginTokens(s, org, { workspace: 'rotation' }, cookie)
    const r1 = await refresh(s, first.refresh_token)
    t.equal(r1.status, 200)
    t.equal(r1.headers.get('cache-control'), 'no-store')
    t.same(Object.keys(r1.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type'])
    t.ok(r1.body.refresh_token !== first.refresh_token, 'a new refresh token')
    t.ok(r1.body.access_token !== first.access_token, 'a new access token')
    t.equal((await me(s, r1.body.access_token)).status, 200)
    // 30 days: the rotated token still works just before, and not after
    clock.advance(30 * 86_400_000 - 5_000)
    const r2 = await refresh(s, r1.body.refresh_token)
    t.equal(r2.status, 200, 'valid just under 30 days after issue')
    clock.advance(30 * 86_400_000 + 1_000)
    const r3 = await refresh(s, r2.body.refresh_token)
    t.equal(r3.status, 400)
    t.equal(r3.body.error, 'invalid_grant', 'expired after 30 days')
  })

  t.test('refresh reuse: invalid_grant and the whole grant is revoked', async (t) => {
    const first = await loginTokens(s, org, { workspace: 'reuse' }, cookie)
    const r1 = await refresh(s, first.refresh_token)
    t.equal(r1.status, 200)
    t.equal((await me(s, r1.body.access_token)).status, 200)
    const replay = await refresh(s, first.refresh_token)
    t.equal(replay.status, 400)
    t.equal(replay.body.error, 'invalid_grant')
    t.equal((await me(s, r1.body.access_token)).status, 401, 'the access token of the rotation dies')
    const r2 = await refresh(s, r1.body.refresh_token)
    t.equal(r2.body.error, 'invalid_grant', 'and so does the unspent refresh token')
    const g = await s.testDb.db.query(`select revoked_at from oauth_grants where workspace = 'reuse'`)
    t.ok(g.rows[0].revoked_at, 'the grant is revoked')
  })

  t.test('refresh is bound to its client', async (t) => {
    const reg = await s.request('POST', '/oauth/register', { body: { redirect_uris: [redirectUri] } })
    const first = await loginTokens(s, org, { workspace: 'bound' }, cookie)
    const r = await refresh(s, first.refresh_token, reg.body.client_id)
    t.equal(r.body.error, 'invalid_grant')
    const unknown = await refresh(s, first.refresh_token, 'ncli_unknown000000000000000')
    t.equal(unknown.status, 401)
    t.equal(unknown.body.error, 'invalid_client')
    t.equal((await refresh(s, first.refresh_token)).status, 200, 'the failed attempts did not spend it')
  })

  t.test('PKCE failure: invalid_grant, and the code is burnt', async (t) => {
    const { verifier, challenge } = pkce()
    const code = await getCode({ challenge })
    const wrong = await exchange({ code, code_verifier: pkce().verifier })
    t.equal(wrong.status, 400)
    t.equal(wrong.body.error, 'invalid_grant')
    const right = await exchange({ code, code_verifier: verifier })
    t.equal(right.body.error, 'invalid_grant', 'no second guess')
    const code2 = await getCode({ challenge })
    const missing = await exchange({ code: code2 })
    t.equal(missing.body.error, 'invalid_request', 'code_verifier is required')
    const code3 = await getCode({ challenge })
    t.equal((await exchange({ code: code3, code_verifier: 'short' })).body.error, 'invalid_grant')
  })

  t.test('code replay: invalid_grant, and what the first use issued is revoked', async (t) => {
    const { verifier, challenge } = pkce()
    const code = await getCode({ challenge, workspace: 'replay' })
    const first = await exchange({ code, code_verifier: verifier })
    t.equal(first.status, 200)
    t.equal((await me(s, first.body.access_token)).status, 200)
    const again = await exchange({ code, code_verifier: verifier })
    t.equal(again.status, 400)
    t.equal(again.body.error, 'invalid_grant')
    t.equal((await me(s, first.body.access_token)).status, 401, 'the access token it issued is dead')
    t.equal((await refresh(s, first.body.refresh_token)).body.error, 'invalid_grant', 'so is the refresh token')
  })

  t.test('a code lives about 60 s and is bound to its client and redirect_uri', async (t) => {
    const { verifier, challenge } = pkce()
    const late = await getCode({ challenge })
    clock.advance(61_000)
    t.equal((await exchange({ code: late, code_verifier: verifier })).body.error, 'invalid_grant', 'expired')
    const c2 = await getCode({ challenge })
    t.equal((await exchange({ code: c2, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:7778/callback' })).body.error, 'invalid_grant', 'another redirect_uri')
    const c3 = await getCode({ challenge })
    t.equal((await exchange({ code: c3, code_verifier: verifier, redirect_uri: undefined })).body.error, 'invalid_grant', 'redirect_uri is required when it was sent')
    const reg = await s.request('POST', '/oauth/register', { body: { redirect_uris: [redirectUri] } })
    const c4 = await getCode({ challenge })
    t.equal((await exchange({ code: c4, code_verifier: verifier, client_id: reg.body.client_id })).body.error, 'invalid_grant', 'another client')
    const c5 = await getCode({ challenge })
    t.equal((await exchange({ code: c5, code_verifier: verifier, resource: 'https://other.example/mcp' })).body.error, 'invalid_target')
    const c6 = await getCode({ challenge })
    const ok = await exchange({ code: c6, code_verifier: verifier, resource: `${s.url}/mcp/` })
    t.equal(ok.status, 200, 'the resource with one trailing slash is the same resource')
  })

  t.test('[AUTH-09] [LIM-10] scopes are clamped to exactly the default set, whatever is asked', async (t) => {
    const { verifier, challenge } = pkce()
    const code = await getCode({ challenge, scope: 'identities:write agents:write keys:write org:admin billing:admin networks:write' })
    const r = await exchange({ code, code_verifier: verifier })
    t.equal(r.body.scope, DEFAULT_SCOPE)
    const who = await me(s, r.body.access_token)
    t.same(who.body.scopes, [...DEFAULT_SCOPES].sort())
    const mint = await s.request('POST', '/v1/keys', { token: r.body.access_token, body: { name: 'x', scopes: ['sessions:drive'] } })
    t.equal(mint.status, 403, 'an OAuth token cannot mint keys')
    t.equal(mint.body.error.message, 'missing required scope: keys:write')
    const narrow = await getCode({ challenge, scope: 'sessions:drive' })
    t.equal((await exchange({ code: narrow, code_verifier: verifier })).body.scope, DEFAULT_SCOPE, 'exactly the default set, never less either')
    const rr = await refresh(s, r.body.refresh_token)
    t.equal(rr.body.scope, DEFAULT_SCOPE)
  })

  t.test('RFC 6749 error responses', async (t) => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{}, 400, 'invalid_request'],
      [{ grant_type: 'password', client_id: BUILTIN }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'client_credentials', client_id: BUILTIN }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'authorization_code' }, 400, 'invalid_request'],
      [{ grant_type: 'authorization_code', client_id: 'ncli_nope00000000000000000' , code: 'x', code_verifier: 'y' }, 401, 'invalid_client'],
      [{ grant_type: 'authorization_code', client_id: BUILTIN, code_verifier: 'y' }, 400, 'invalid_request'],
      [{ grant_type: 'authorization_code', client_id: BUILTIN, code: 'nope', code_verifier: 'A'.repeat(43) }, 400, 'invalid_grant'],
      [{ grant_type: 'refresh_token', client_id: BUILTIN }, 400, 'invalid_request'],
      [{ grant_type: 'refresh_token', client_id: BUILTIN, refresh_token: 'njr_' + 'A'.repeat(43) }, 400, 'invalid_grant'],
      [{ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: BUILTIN, device_code: 'nope' }, 400, 'invalid_grant'],
    ]
    for (const [fields, status, error] of cases) {
      const r = await postForm(s, '/oauth/token', fields)
      t.equal(r.status, status, JSON.stringify(fields))
      t.equal(r.body.error, error)
      t.type(r.body.error_description, 'string')
      t.same(Object.keys(r.body).sort(), ['error', 'error_description'])
      t.equal(r.headers.get('cache-control'), 'no-store')
    }
    const dup = await fetch(s.url + '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&grant_type=authorization_code' })
    t.equal((await dup.json()).error, 'invalid_request', 'a repeated parameter')
    const text = await fetch(s.url + '/oauth/token', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'grant_type=x' })
    t.equal(text.status, 400)
    t.equal((await text.json()).error, 'invalid_request', 'an unreadable body is an RFC error too')
  })

  t.test('tokens are stored only as SHA-256 and never logged', async (t) => {
    const tokens = await loginTokens(s, org, { workspace: 'hygiene' }, cookie)
    await me(s, tokens.access_token)
    const r = await refresh(s, tokens.refresh_token)
    const dump = JSON.stringify((await s.testDb.db.query('select * from oauth_tokens')).rows)
    t.notOk(leaks(dump, tokens.access_token, tokens.refresh_token, r.body.access_token, r.body.refresh_token), 'no token in the table')
    t.ok(dump.includes('"token_hash"'))
    t.notOk(leaks(s.logs(), tokens.access_token, tokens.refresh_token, r.body.access_token, r.body.refresh_token), 'no token in the logs')
  })
})
