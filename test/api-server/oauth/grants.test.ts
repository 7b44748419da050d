import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { BUILTIN, consent, consoleLogin, loginTokens, me, pkce, postForm, refresh, testClock } from './helpers.ts'

t.test('grants and revocation', async (t) => {
  const clock = testClock()
  const s = await startTestServer(t, { now: clock.now })
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const reg = await s.request('POST', '/oauth/register', { body: { client_name: 'Cursor', redirect_uris: ['http://127.0.0.1/callback'] } })
  const otherClient = reg.body.client_id as string
  const principal = async (token: string) => (await me(s, token)).body

  t.test('[FLD-37] one grant (nkey_) per (org, user, client, workspace), bound to a developer agent', async (t) => {
    const tokens = await loginTokens(s, org, { workspace: 'repo-a' }, cookie)
    const p = await principal(tokens.access_token)
    t.match(p.principal.credentialId, /^nkey_[0-9A-Za-z]{22}$/)
    t.equal(p.principal.kind, 'oauth')
    t.equal(p.principal.principalId, p.agentId)
    t.match(p.agentId, /^nagt_/)
    t.not(p.agentId, org.agentId, 'not the org default agent: a per-developer agent')
    const agent = await s.testDb.db.query('select kind, org_id from agents where id = $1', [p.agentId])
    t.same(agent.rows[0], { kind: 'developer', org_id: org.orgId })
    const g = await s.testDb.db.query('select * from oauth_grants where id = $1', [p.principal.credentialId])
    t.equal(g.rows[0].org_id, org.orgId)
    t.equal(g.rows[0].user_id, org.userId)
    t.equal(g.rows[0].client_id, BUILTIN)
    t.equal(g.rows[0].workspace, 'repo-a')
    t.equal(g.rows[0].agent_id, p.agentId)
    t.match(p.principal.name, /Nightjar CLI/)
    t.match(p.principal.name, /repo-a/)
  })

  t.test('[RULE-24] re-login from the same workspace reuses the grant and agent; another workspace, client or user does not', async (t) => {
    const a1 = await principal((await loginTokens(s, org, { workspace: 'ws-1' }, cookie)).access_token)
    const a2 = await principal((await loginTokens(s, org, { workspace: 'ws-1' }, cookie)).access_token)
    t.equal(a2.principal.credentialId, a1.principal.credentialId, 'same grant')
    t.equal(a2.agentId, a1.agentId, 'same agent')
    const def1 = await principal((await loginTokens(s, org, {}, cookie)).access_token)
    const def2 = await principal((await loginTokens(s, org, { workspace: 'default' }, cookie)).access_token)
    t.equal(def1.principal.credentialId, def2.principal.credentialId, 'absent workspace means "default"')
    const b = await principal((await loginTokens(s, org, { workspace: 'ws-2' }, cookie)).access_token)
    t.not(b.principal.credentialId, a1.principal.credentialId, 'another workspace: another grant')
    t.not(b.agentId, a1.agentId)
    const c = await principal((await loginTokens(s, org, { workspace: 'ws-1', clientId: otherClient, redirectUri: 'http://127.0.0.1:4000/callback' }, cookie)).access_token)
    t.not(c.principal.credentialId, a1.principal.credentialId, 'another client: another grant')
    const other = await s.bootstrap()
    const d = await principal((await loginTokens(s, other, { workspace: 'ws-1' })).access_token)
    t.not(d.principal.credentialId, a1.principal.credentialId, 'another user: another grant')
    t.equal(d.orgId, other.orgId)
    const n = await s.testDb.db.query(`select count(*)::int as n from oauth_grants where user_id = $1 and client_id = $2 and workspace = 'ws-1'`, [org.userId, BUILTIN])
    t.equal(n.rows[0].n, 1)
  })

  t.test('[EP-07] [RULE-25] /oauth/revoke answers 200 always, with no existence oracle', async (t) => {
    const bodies: Array<string | undefined> = [
      'token=njo_' + 'A'.repeat(43), 'token=njr_' + 'A'.repeat(43), 'token=nonsense', 'token=', '', 'token_type_hint=access_token',
      `token=${encodeURIComponent(org.apiKey)}`, 'token=a&token=b',
    ]
    const replies = []
    for (const body of bodies) {
      const r = await fetch(s.url + '/oauth/revoke', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
      replies.push({ status: r.status, text: await r.text() })
    }
    const json = await fetch(s.url + '/oauth/revoke', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' })
    replies.push({ status: json.status, text: await json.text() })
    const real = await loginTokens(s, org, { workspace: 'oracle' }, cookie)
    const realR = await postForm(s, '/oauth/revoke', { token: real.access_token })
    replies.push({ status: realR.status, text: realR.text })
    for (const r of replies) {
      t.equal(r.status, 200)
      t.equal(r.text, replies[0].text, 'identical body')
    }
    t.equal((await me(s, org.apiKey)).status, 200, 'an njk_ key posted to /oauth/revoke is not touched')
  })

  t.test('[RULE-25] revoking the access token stops access and refresh at once', async (t) => {
    const tokens = await loginTokens(s, org, { workspace: 'revoke-access' }, cookie)
    const sibling = await loginTokens(s, org, { workspace: 'revoke-access' }, cookie) // a second pair of the same grant
    t.equal((await me(s, tokens.access_token)).status, 200)
    t.equal((await postForm(s, '/oauth/revoke', { token: tokens.access_token, token_type_hint: 'access_token' })).status, 200)
    t.equal((await me(s, tokens.access_token)).status, 401, 'access stops')
    t.equal((await refresh(s, tokens.refresh_token)).body.error, 'invalid_grant', 'refresh stops')
    t.equal((await me(s, sibling.access_token)).status, 401, 'every token of the grant stops')
    t.equal((await refresh(s, sibling.refresh_token)).body.error, 'invalid_grant')
    const mcp = await fetch(s.url + '/mcp', { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
    t.equal(mcp.status, 401, '/mcp too')
  })

  t.test('[RULE-25] revoking the refresh token stops the access token too; other grants live on', async (t) => {
    const keep = await loginTokens(s, org, { workspace: 'keep' }, cookie)
    const tokens = await loginTokens(s, org, { workspace: 'revoke-refresh' }, cookie)
    t.equal((await postForm(s, '/oauth/revoke', { token: tokens.refresh_token })).status, 200)
    t.equal((await me(s, tokens.access_token)).status, 401)
    t.equal((await refresh(s, tokens.refresh_token)).body.error, 'invalid_grant')
    t.equal((await me(s, keep.access_token)).status, 200, 'another workspace is another grant')
    const again = await postForm(s, '/oauth/revoke', { token: tokens.refresh_token })
    t.equal(again.status, 200, 'idempotent')
  })

  t.test('revocation also kills codes not yet redeemed; a new consent revives the grant, never the old tokens', async (t) => {
    const tokens = await loginTokens(s, org, { workspace: 'revive' }, cookie)
    const grantId = (await principal(tokens.access_token)).principal.credentialId
    const { verifier, challenge } = pkce()
    const loc = await consent(s, cookie, { redirectUri: 'http://127.0.0.1:9/callback', challenge, workspace: 'revive' })
    await postForm(s, '/oauth/revoke', { token: tokens.access_token })
    const late = await postForm(s, '/oauth/token', { grant_type: 'authorization_code', client_id: BUILTIN, code: loc.searchParams.get('code')!, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:9/callback' })
    t.equal(late.body.error, 'invalid_grant', 'a code issued before the revocation is dead')
    const fresh = await loginTokens(s, org, { workspace: 'revive' }, cookie)
    const p = await principal(fresh.access_token)
    t.equal(p.principal.credentialId, grantId, 'the same grant, re-activated by consent')
    t.equal((await me(s, tokens.access_token)).status, 401, 'tokens from before the revocation stay dead')
    t.equal((await refresh(s, tokens.refresh_token)).body.error, 'invalid_grant')
    const audit = await s.request('GET', '/v1/audit?action=oauth.grant.revoke', { token: org.apiKey })
    t.ok(audit.body.items.some((e: any) => e.grantId === grantId), 'the revocation is audited')
  })
})
