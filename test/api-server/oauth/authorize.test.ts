import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import {
  authorizeUrl, BUILTIN, consent, consoleLogin, DEFAULT_SCOPES, getPage, hiddenFields, pkce, postForm, postLogin, testClock,
} from './helpers.ts'

t.test('the authorization endpoint and consent', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now })
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const reg = await s.request('POST', '/oauth/register', { body: { client_name: 'Claude <Code>', redirect_uris: ['http://127.0.0.1:33418/callback'], token_endpoint_auth_method: 'none' } })
  const dcrClient = reg.body.client_id as string
  const { challenge } = pkce()

  t.test('[EP-03] [RULE-21] a signed-in human approves: 302 to redirect_uri with a code, the state and iss', async (t) => {
    const loc = await consent(s, cookie, { clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge, state: 'xyz 123' })
    t.equal(loc.origin + loc.pathname, 'http://127.0.0.1:33418/callback')
    t.match(loc.searchParams.get('code'), /^[A-Za-z0-9_-]{43}$/)
    t.equal(loc.searchParams.get('state'), 'xyz 123')
    t.equal(loc.searchParams.get('iss'), s.url)
    const rows = await s.testDb.db.query('select code_hash from oauth_codes')
    t.notOk(JSON.stringify(rows.rows).includes(loc.searchParams.get('code')!), 'codes are stored only as SHA-256')
  })

  t.test('client_id and redirect_uri are validated before any redirect: an HTML error page, never a redirect', async (t) => {
    const base = { response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: 's' }
    const cases: Record<string, Record<string, string>> = {
      'unknown client': { ...base, client_id: 'ncli_doesnotexist0000000000', redirect_uri: 'http://127.0.0.1/callback' },
      'missing client_id': { ...base, redirect_uri: 'http://127.0.0.1/callback' },
      'missing redirect_uri': { ...base, client_id: dcrClient },
      'foreign redirect_uri': { ...base, client_id: dcrClient, redirect_uri: 'http://evil.example/callback' },
      'other path': { ...base, client_id: dcrClient, redirect_uri: 'http://127.0.0.1:33418/other' },
      'other loopback host': { ...base, client_id: dcrClient, redirect_uri: 'http://localhost:33418/callback' },
      'https variant': { ...base, client_id: dcrClient, redirect_uri: 'https://127.0.0.1:33418/callback' },
      'built-in to a web host': { ...base, client_id: BUILTIN, redirect_uri: 'https://example.com/callback' },
      // an error that would otherwise be redirected (bad response_type) is still a page when the redirect is foreign
      'bad response_type + foreign redirect': { ...base, response_type: 'token', client_id: dcrClient, redirect_uri: 'http://evil.example/callback' },
    }
    for (const [name, q] of Object.entries(cases)) {
      for (const c of [undefined, cookie]) {
        const r = await getPage(s, `/oauth/authorize?${new URLSearchParams(q)}`, c)
        t.equal(r.status, 400, name)
        t.equal(r.headers.get('location'), null, `${name}: no redirect`)
        t.match(r.headers.get('content-type'), /text\/html/)
        t.match(r.text, /id="oauth-error"/)
      }
    }
    const dup = await getPage(s, `/oauth/authorize?client_id=${dcrClient}&client_id=${BUILTIN}&redirect_uri=http://127.0.0.1/callback`, cookie)
    t.equal(dup.status, 400, 'a repeated parameter is refused')
    t.equal(dup.headers.get('location'), null)
  })

  t.test('loopback redirect URIs match on any port (RFC 8252)', async (t) => {
    for (const port of [1024, 49152, 65535]) {
      const loc = await consent(s, cookie, { clientId: dcrClient, redirectUri: `http://127.0.0.1:${port}/callback`, challenge })
      t.equal(loc.port, String(port))
      t.ok(loc.searchParams.get('code'))
    }
    const noPort = await consent(s, cookie, { clientId: dcrClient, redirectUri: 'http://127.0.0.1/callback', challenge })
    t.ok(noPort.searchParams.get('code'))
  })

  t.test('[RULE-23] the built-in client: fixed id, loopback and oob redirects only', async (t) => {
    const row = await s.testDb.db.query('select * from oauth_clients where id = $1', [BUILTIN])
    t.equal(row.rows[0].builtin, true)
    t.same(row.rows[0].redirect_uris, ['http://127.0.0.1/callback', 'http://localhost/callback', 'urn:ietf:wg:oauth:2.0:oob'])
    const loc = await consent(s, cookie, { clientId: BUILTIN, redirectUri: 'http://localhost:40123/callback', challenge })
    t.ok(loc.searchParams.get('code'))
    // oob: the code is shown on a page for the human to copy
    const page = await getPage(s, authorizeUrl({ clientId: BUILTIN, redirectUri: 'urn:ietf:wg:oauth:2.0:oob', challenge }), cookie)
    t.equal(page.status, 200)
    const r = await postForm(s, '/oauth/authorize', { ...hiddenFields(page.text), decision: 'approve' }, { cookie })
    t.equal(r.status, 200)
    t.match(r.text, /id="authorization-code">[A-Za-z0-9_-]{43}</)
  })

  t.test('errors after the redirect is trusted go back to the client with the state', async (t) => {
    const good = { clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback' }
    const go = async (q: Record<string, string>) => {
      const params = new URLSearchParams({ response_type: 'code', client_id: good.clientId, redirect_uri: good.redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 'st', ...q })
      for (const [k, v] of [...params]) if (v === '') params.delete(k)
      const r = await getPage(s, `/oauth/authorize?${params}`, cookie)
      t.equal(r.status, 302)
      const loc = new URL(r.headers.get('location')!)
      t.equal(loc.origin + loc.pathname, good.redirectUri)
      t.equal(loc.searchParams.get('state'), 'st')
      t.notOk(loc.searchParams.get('code'))
      return loc.searchParams.get('error')
    }
    t.equal(await go({ response_type: 'token' }), 'unsupported_response_type')
    t.equal(await go({ response_type: '' }), 'unsupported_response_type')
    t.equal(await go({ code_challenge: '' }), 'invalid_request', 'PKCE is required')
    t.equal(await go({ code_challenge: 'short' }), 'invalid_request')
    t.equal(await go({ code_challenge_method: 'plain' }), 'invalid_request', 'S256 only')
    t.equal(await go({ code_challenge_method: '' }), 'invalid_request', 'an absent method would mean plain')
    t.equal(await go({ resource: 'https://other.example/mcp' }), 'invalid_target')
    t.equal(await go({ resource: `${s.url}/` }), 'invalid_target', 'the bare base URL is not the resource')
    t.equal(await go({ resource: `${s.url}/mcp//` }), 'invalid_target', 'only one trailing slash is forgiven')
    t.equal(await go({ workspace: 'x'.repeat(101) }), 'invalid_request')
  })

  t.test('RFC 8707 resource: absent, exact or with one trailing slash is accepted', async (t) => {
    for (const resource of [undefined, `${s.url}/mcp`, `${s.url}/mcp/`]) {
      const loc = await consent(s, cookie, { clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge, resource })
      t.ok(loc.searchParams.get('code'), String(resource))
    }
  })

  t.test('signed out: redirect to the console login with next= back; after sign-in the consent shows', async (t) => {
    const url = authorizeUrl({ clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge, state: 'abc' })
    const r = await getPage(s, url)
    t.equal(r.status, 302)
    const loc = r.headers.get('location')!
    t.equal(loc, `/console/login?next=${encodeURIComponent(url)}`)
    const login = await postLogin(s, { email: org.email, password: 'correct horse battery', next: new URL(loc, s.url).searchParams.get('next')! })
    t.equal(login.status, 303)
    t.equal(login.headers.get('location'), url, 'the console sends the human back to the authorization request')
  })

  t.test('the consent page: client name (escaped), clamped scopes, Approve/Deny, CSRF, no framing, no caching', async (t) => {
    const r = await getPage(s, authorizeUrl({ clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge, scope: 'identities:write keys:write org:admin', workspace: 'repo-a' }), cookie)
    t.equal(r.status, 200)
    t.match(r.text, 'Claude &lt;Code&gt;')
    t.notMatch(r.text, 'Claude <Code>')
    t.match(r.text, /its name is not verified/)
    for (const sc of DEFAULT_SCOPES) t.match(r.text, `<code>${sc}</code>`)
    const offered = /<ul id="scopes">[\s\S]*?<\/ul>/.exec(r.text)?.[0] ?? ''
    const refused = /<div id="not-granted">[\s\S]*?<\/div>/.exec(r.text)?.[0] ?? ''
    for (const sc of ['identities:write', 'keys:write', 'org:admin']) {
      t.notMatch(offered, `<code>${sc}</code>`, `${sc} is never offered`)
      t.match(refused, `<code>${sc}</code>`, `${sc} is shown as asked for and not granted`)
    }
    t.match(r.text, /id="approve"/)
    t.match(r.text, /id="deny"/)
    t.match(r.text, 'repo-a')
    const fields = hiddenFields(r.text)
    t.ok(fields.csrf, 'a CSRF token')
    t.equal(fields.workspace, 'repo-a')
    t.equal(r.headers.get('cache-control'), 'no-store')
    t.equal(r.headers.get('x-frame-options'), 'DENY')
    t.equal(r.headers.get('referrer-policy'), 'same-origin', 'no URL of ours reaches another site; the form POST still carries our Origin')
    t.match(r.headers.get('content-security-policy'), /frame-ancestors 'none'/)
    t.match(r.headers.get('content-security-policy'), /form-action 'self' http:\/\/127\.0\.0\.1:33418/)
  })

  t.test('deny: error=access_denied with the state, and no grant', async (t) => {
    const before = await s.testDb.db.query('select count(*)::int as n from oauth_grants where workspace = $1', ['deny-ws'])
    const loc = await consent(s, cookie, { clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge, state: 'st8', workspace: 'deny-ws' }, 'deny')
    t.equal(loc.searchParams.get('error'), 'access_denied')
    t.equal(loc.searchParams.get('state'), 'st8')
    t.notOk(loc.searchParams.get('code'))
    const after = await s.testDb.db.query('select count(*)::int as n from oauth_grants where workspace = $1', ['deny-ws'])
    t.equal(after.rows[0].n, before.rows[0].n)
  })

  t.test('the consent POST: CSRF checked, every field validated again', async (t) => {
    const page = await getPage(s, authorizeUrl({ clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge }), cookie)
    const fields = hiddenFields(page.text)
    const noCsrf = await postForm(s, '/oauth/authorize', { ...fields, csrf: undefined, decision: 'approve' }, { cookie })
    t.equal(noCsrf.status, 403)
    t.equal(noCsrf.headers.get('location'), null)
    const wrongCsrf = await postForm(s, '/oauth/authorize', { ...fields, csrf: 'A'.repeat(43), decision: 'approve' }, { cookie })
    t.equal(wrongCsrf.status, 403)
    const other = await s.bootstrap()
    const otherCookie = await consoleLogin(s, other)
    const crossUser = await postForm(s, '/oauth/authorize', { ...fields, decision: 'approve' }, { cookie: otherCookie })
    t.equal(crossUser.status, 403, "another human's form token does not work")
    const tampered = await postForm(s, '/oauth/authorize', { ...fields, redirect_uri: 'http://evil.example/cb', decision: 'approve' }, { cookie })
    t.equal(tampered.status, 400)
    t.equal(tampered.headers.get('location'), null)
    const signedOut = await postForm(s, '/oauth/authorize', { ...fields, decision: 'approve' })
    t.equal(signedOut.status, 302)
    t.match(signedOut.headers.get('location'), /^\/console\/login\?next=%2Foauth%2Fauthorize%3F/)
  })

  t.test('the consent POST from another site (Origin, else Sec-Fetch-Site, else Referer) is refused and issues no code', async (t) => {
    const codes = async () => (await s.testDb.db.query('select count(*)::int as n from oauth_codes')).rows[0].n as number
    const before = await codes()
    const page = await getPage(s, authorizeUrl({ clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge, state: 'foreign' }), cookie)
    const fields = { ...hiddenFields(page.text), decision: 'approve' }
    for (const headers of [{ origin: 'http://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { referer: 'http://evil.example/page' }] as Record<string, string>[]) {
      const r = await postForm(s, '/oauth/authorize', fields, { cookie, ...headers })
      t.equal(r.status, 403, `refused with ${Object.keys(headers)[0]}`)
      t.equal(r.headers.get('location'), null, 'no redirect to the client')
      t.match(r.text, /This sign-in request cannot continue/)
    }
    t.equal(await codes(), before, 'no authorization code was issued')
    const same = await postForm(s, '/oauth/authorize', fields, { cookie, origin: s.url })
    t.equal(same.status, 302, 'the same form from our own origin still works')
    t.match(new URL(same.headers.get('location')!).searchParams.get('code'), /^[A-Za-z0-9_-]{43}$/)
    t.equal(await codes(), before + 1)
  })

  t.test('no code, state or cookie in the logs', async (t) => {
    const loc = await consent(s, cookie, { clientId: dcrClient, redirectUri: 'http://127.0.0.1:33418/callback', challenge })
    const code = loc.searchParams.get('code')!
    t.notOk(s.logs().includes(code))
    t.notOk(s.logs().includes(cookie.split('=')[1]))
  })
})
