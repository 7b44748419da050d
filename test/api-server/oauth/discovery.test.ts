import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { DEFAULT_SCOPES, DEVICE_GRANT } from './helpers.ts'

t.test('OAuth discovery', async (t) => {
  const s = await startTestServer(t)

  t.test('[EP-01] RFC 9728 protected-resource metadata at the /mcp-suffixed and the root location', async (t) => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const r = await s.request('GET', path)
      t.equal(r.status, 200, path)
      t.same(Object.keys(r.body).sort(), ['authorization_servers', 'bearer_methods_supported', 'resource', 'resource_name', 'scopes_supported'])
      t.equal(r.body.resource, `${s.url}/mcp`, 'resource is the base URL + /mcp, no trailing slash')
      t.same(r.body.authorization_servers, [s.url])
      t.same(r.body.scopes_supported, DEFAULT_SCOPES)
      t.same(r.body.bearer_methods_supported, ['header'])
    }
  })

  t.test('[EP-02] RFC 8414 authorization-server metadata', async (t) => {
    const r = await s.request('GET', '/.well-known/oauth-authorization-server')
    t.equal(r.status, 200)
    const prm = await s.request('GET', '/.well-known/oauth-protected-resource/mcp')
    t.equal(r.body.issuer, prm.body.authorization_servers[0], 'issuer byte-identical to the PRM entry')
    t.equal(r.body.issuer, s.url)
    t.equal(r.body.authorization_endpoint, `${s.url}/oauth/authorize`)
    t.equal(r.body.token_endpoint, `${s.url}/oauth/token`)
    t.equal(r.body.device_authorization_endpoint, `${s.url}/oauth/device`)
    t.equal(r.body.revocation_endpoint, `${s.url}/oauth/revoke`)
    t.equal(r.body.registration_endpoint, `${s.url}/oauth/register`, 'present while DCR is on (the default)')
    t.same(r.body.response_types_supported, ['code'])
    t.same(r.body.grant_types_supported, ['authorization_code', 'refresh_token', DEVICE_GRANT])
    t.same(r.body.code_challenge_methods_supported, ['S256'])
    t.same(r.body.token_endpoint_auth_methods_supported, ['none'])
    t.same(r.body.scopes_supported, DEFAULT_SCOPES)
  })

  t.test('CORS on discovery, the OAuth endpoints and /mcp, preflight included; not on authorize', async (t) => {
    const origin = 'http://localhost:6274'
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server', '/oauth/token', '/oauth/register', '/oauth/revoke', '/oauth/device', '/mcp']) {
      const pre = await fetch(s.url + path, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
      })
      t.equal(pre.status, 204, `preflight ${path}`)
      t.equal(pre.headers.get('access-control-allow-origin'), '*')
      t.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/)
      t.match((pre.headers.get('access-control-allow-headers') ?? '').toLowerCase(), /authorization/)
    }
    const prm = await fetch(s.url + '/.well-known/oauth-protected-resource', { headers: { origin } })
    t.equal(prm.headers.get('access-control-allow-origin'), '*')
    const mcp = await fetch(s.url + '/mcp', { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' })
    t.equal(mcp.status, 401)
    t.equal(mcp.headers.get('access-control-allow-origin'), '*', 'the 401 is readable cross-origin')
    t.match((mcp.headers.get('access-control-expose-headers') ?? '').toLowerCase(), /www-authenticate/)
    t.match((mcp.headers.get('access-control-expose-headers') ?? '').toLowerCase(), /mcp-session-id/)
    const authz = await fetch(s.url + '/oauth/authorize', { headers: { origin } })
    t.equal(authz.headers.get('access-control-allow-origin'), null, 'the cookie-backed consent page is not CORS-enabled')
    const keys = await fetch(s.url + '/v1/me', { headers: { origin } })
    t.equal(keys.headers.get('access-control-allow-origin'), null)
  })
})

t.test('[AUTH-11] discovery drops registration_endpoint when DCR is disabled', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_OAUTH_DCR_ENABLED: 'false' } })
  const r = await s.request('GET', '/.well-known/oauth-authorization-server')
  t.equal(r.status, 200)
  t.notOk('registration_endpoint' in r.body)
  t.equal(r.body.token_endpoint, `${s.url}/oauth/token`, 'the rest is unchanged')
})

t.test('the resource honours NIGHTJAR_BASE_URL exactly (trailing slash stripped by config)', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_BASE_URL: 'https://nightjar.example.com/' } })
  const prm = await s.request('GET', '/.well-known/oauth-protected-resource/mcp')
  t.equal(prm.body.resource, 'https://nightjar.example.com/mcp')
  t.same(prm.body.authorization_servers, ['https://nightjar.example.com'])
  const as = await s.request('GET', '/.well-known/oauth-authorization-server')
  t.equal(as.body.issuer, 'https://nightjar.example.com')
})
