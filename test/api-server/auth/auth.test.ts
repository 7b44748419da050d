import t from 'tap'
import { randomBytes } from 'node:crypto'
import { freePort, startTestServer } from '../../helpers/server.ts'
import { loginTokens } from '../oauth/helpers.ts'

t.test('foundation auth over real HTTP', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap('acme')

  t.test('[AUTH-01] an njk_ key resolves to its org, agent and literal scopes', async (t) => {
    const r = await s.request('GET', '/v1/me', { token: acme.apiKey })
    t.equal(r.status, 200)
    t.equal(r.body.orgId, acme.orgId)
    t.equal(r.body.agentId, acme.agentId)
    t.ok(r.body.scopes.includes('identities:write'))
    t.equal(r.body.principal.kind, 'key')
  })

  t.test('[RULE-29] wrong, unknown, malformed and absent tokens give one identical 401', async (t) => {
    const variants = [
      undefined,
      'Bearer',
      'Basic dXNlcjpwYXNz',
      `Bearer ${acme.apiKey}x`,
      `Bearer njk_${'A'.repeat(43)}`,
      `Bearer njo_${'A'.repeat(43)}`,
      `Bearer njr_${'A'.repeat(43)}`,
      `Bearer ${acme.apiKey.replace('njk_', 'njo_')}`,
      'Bearer not-a-token-at-all',
      `Bearer ${acme.apiKey} extra`,
    ]
    const replies = []
    for (const v of variants) {
      const res = await fetch(s.url + '/v1/me', { headers: v ? { authorization: v } : {} })
      replies.push({ status: res.status, body: await res.text(), www: res.headers.get('www-authenticate') })
    }
    for (const r of replies) {
      t.equal(r.status, 401)
      t.equal(r.body, replies[0].body, 'byte-identical body')
      t.equal(r.www, replies[0].www)
    }
    t.match(replies[0].www, /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/)
  })

  t.test('[AUTH-07] no-escalation: a key cannot mint a scope it does not hold', async (t) => {
    const narrow = await s.request('POST', '/v1/keys', { token: acme.apiKey, body: { name: 'narrow', scopes: ['keys:write', 'sessions:drive'] } })
    t.equal(narrow.status, 201)
    t.match(narrow.body.secret, /^njk_[0-9A-Za-z]{43}$/)
    const esc = await s.request('POST', '/v1/keys', { token: narrow.body.secret, body: { name: 'wider', scopes: ['sessions:drive', 'identities:write'] } })
    t.equal(esc.status, 403)
    t.equal(esc.body.error.reason, 'no_escalation')
    t.match(esc.body.error.message, /identities:write/)
    const ok = await s.request('POST', '/v1/keys', { token: narrow.body.secret, body: { name: 'same', scopes: ['sessions:drive'] } })
    t.equal(ok.status, 201)
  })

  t.test('[AUTH-06] a key carries only its own scopes, never its owner role', async (t) => {
    const minted = await s.request('POST', '/v1/keys', { token: acme.apiKey, body: { name: 'drive-only', scopes: ['sessions:drive'] } })
    const me = await s.request('GET', '/v1/me', { token: minted.body.secret })
    t.same(me.body.scopes, ['sessions:drive'])
    const audit = await s.request('GET', '/v1/audit', { token: minted.body.secret })
    t.equal(audit.status, 403, 'the owner role holds org:admin, the key does not')
    t.equal(audit.body.error.message, 'missing required scope: org:admin')
    const mint = await s.request('POST', '/v1/keys', { token: minted.body.secret, body: { name: 'x', scopes: ['sessions:drive'] } })
    t.equal(mint.status, 403)
    t.equal(mint.body.error.message, 'missing required scope: keys:write')
  })

  t.test('tokens are stored only as SHA-256', async (t) => {
    const rows = await s.testDb.db.query('select * from api_keys')
    const dump = JSON.stringify(rows.rows)
    t.notOk(dump.includes(acme.apiKey), 'no key secret in the table')
    t.notOk(s.logs().includes(acme.apiKey), 'no key secret in the logs')
  })

  t.test('bad input gets a clear 400 naming the field', async (t) => {
    const r = await s.request('POST', '/v1/keys', { token: acme.apiKey, body: { name: 'x', scopes: ['sessions:drive'], bogus: 1 } })
    t.equal(r.status, 400)
    t.equal(r.body.error.message, 'invalid request: body: unknown field: bogus')
    const bad = await s.request('POST', '/v1/keys', { token: acme.apiKey, body: '{not json' })
    t.equal(bad.status, 400)
    t.equal(bad.body.error.code, 'bad_request')
    const unknownScope = await s.request('POST', '/v1/keys', { token: acme.apiKey, body: { name: 'x', scopes: ['root'] } })
    t.equal(unknownScope.status, 400)
    t.equal(unknownScope.body.error.message, 'unknown scope: root')
  })

  t.test('two orgs never see each other', async (t) => {
    const other = await s.bootstrap('globex')
    const a = await s.request('GET', '/v1/audit', { token: acme.apiKey })
    const b = await s.request('GET', '/v1/audit', { token: other.apiKey })
    t.ok(a.body.items.length > 0)
    t.ok(a.body.items.every((e: any) => e.orgId === acme.orgId))
    t.ok(b.body.items.every((e: any) => e.orgId === other.orgId))
    const foreignAgent = await s.request('POST', '/v1/keys', { token: other.apiKey, body: { name: 'x', scopes: ['sessions:drive'], agent: acme.agentId } })
    const unknownAgent = await s.request('POST', '/v1/keys', { token: other.apiKey, body: { name: 'x', scopes: ['sessions:drive'], agent: 'nagt_0000000000000000000000' } })
    t.equal(foreignAgent.status, 404)
    t.equal(foreignAgent.text, unknownAgent.text, 'cross-org and unknown ids give byte-identical 404s')
  })

  t.test('health, readiness, metrics and openapi', async (t) => {
    t.equal((await s.request('GET', '/healthz')).status, 200)
    t.equal((await s.request('GET', '/readyz')).status, 200)
    const m = await fetch(s.url + '/metrics')
    t.match(await m.text(), /nightjar_http_requests_total\{method="GET",route="\/v1\/me",status="200"\}/)
    const oa = await s.request('GET', '/openapi.json')
    t.equal(oa.body.openapi, '3.1.0')
    t.ok(oa.body.paths['/v1/me'].get)
    const nf = await s.request('GET', '/v1/nope')
    t.equal(nf.status, 404)
    t.same(nf.body, { error: { code: 'not_found', message: 'no such route' } })
  })

  t.test('[AUTH-01] [AUTH-02] the Bearer scheme is case-insensitive (RFC 7235): bearer, BEARER, Bearer with extra spaces', async (t) => {
    const oauthTokens = await loginTokens(s, acme, { workspace: 'scheme-case' })
    for (const token of [acme.apiKey, oauthTokens.access_token]) {
      const kind = token.slice(0, 4)
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        const r = await fetch(s.url + '/v1/me', { headers: { authorization: `${scheme} ${token}` } })
        t.equal(r.status, 200, `${scheme} ${kind}…`)
      }
      const spaced = await fetch(s.url + '/v1/me', { headers: { authorization: `bearer   ${token}` } })
      t.equal(spaced.status, 200, `several spaces after the scheme (${kind}…)`)
      const glued = await fetch(s.url + '/v1/me', { headers: { authorization: `bearer${token}` } })
      t.equal(glued.status, 401, `no space: not a Bearer credential (${kind}…)`)
    }
    const mcp = await fetch(s.url + '/mcp', {
      method: 'POST',
      headers: { authorization: `bearer ${oauthTokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    })
    t.equal(mcp.status, 200, 'MCP accepts the lower-case scheme too')
  })
})

t.test('/metrics behind a token', async (t) => {
  const token = randomBytes(24).toString('base64url')
  const s = await startTestServer(t, { env: { NIGHTJAR_METRICS_TOKEN: token } })
  const get = (authorization?: string) => fetch(s.url + '/metrics', { headers: authorization ? { authorization } : {} })
  const none = await get()
  t.equal(none.status, 401, 'no token: 401')
  t.match(none.headers.get('www-authenticate'), /^Bearer realm="metrics"$/)
  t.equal((await get('Bearer wrong-token-wrong-token')).status, 401, 'a wrong token: 401')
  t.equal((await get(`Basic ${token}`)).status, 401, 'another scheme: 401')
  const ok = await get(`Bearer ${token}`)
  t.equal(ok.status, 200, 'the token: 200')
  t.match(await ok.text(), /nightjar_http_requests_total/)
  t.equal((await get(`bearer ${token}`)).status, 200, 'scheme case-insensitive')
  t.notOk(s.logs().includes(token), 'the metrics token is never logged')
})

t.test('/metrics on a separate port', async (t) => {
  const token = randomBytes(24).toString('base64url')
  const metricsPort = await freePort()
  const s = await startTestServer(t, { env: { NIGHTJAR_METRICS_PORT: String(metricsPort), NIGHTJAR_METRICS_HOST: '127.0.0.1' } })
  t.equal((await s.request('GET', '/healthz')).status, 200)
  const main = await fetch(s.url + '/metrics')
  t.equal(main.status, 404, 'not served on the main port')
  const there = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
  t.equal(there.status, 200, 'served on the metrics port')
  t.match(await there.text(), /nightjar_http_requests_total\{method="GET",route="\/healthz",status="200"\}/, 'the main port\'s traffic is counted')
  t.equal((await fetch(`http://127.0.0.1:${metricsPort}/v1/me`)).status, 404, 'nothing else is served there')
  await s.close()
  t.ok(await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(() => false, () => true), 'closed with the app')

  // both: a separate port and a token
  const port2 = await freePort()
  const s2 = await startTestServer(t, { env: { NIGHTJAR_METRICS_PORT: String(port2), NIGHTJAR_METRICS_TOKEN: token } })
  t.equal((await fetch(`http://127.0.0.1:${port2}/metrics`)).status, 401, 'the token applies on the metrics port')
  t.equal((await fetch(`http://127.0.0.1:${port2}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 200)
  t.equal((await fetch(s2.url + '/metrics', { headers: { authorization: `Bearer ${token}` } })).status, 404)
})
