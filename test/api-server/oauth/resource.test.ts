import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../../../api-server/config.ts'
import { build } from '../../../api-server/app.ts'
import { sha256 } from '../../../contracts/ids.ts'
import { freePort, startTestServer, type TestServer } from '../../helpers/server.ts'
import { loginTokens, me, refresh } from './helpers.ts'

const mcpList = (url: string, token: string) => fetch(url + '/mcp', {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
})

t.test('the resource server', async (t) => {
  const s = await startTestServer(t)
  const org = await s.bootstrap()
  const tokens = await loginTokens(s, org)
  const bogus = await me(s, 'njk_' + 'Z'.repeat(43))

  t.test('[RULE-29] njk_ and njo_ resolve to the same AuthContext shape', async (t) => {
    const viaKey = await me(s, org.apiKey)
    const viaOAuth = await me(s, tokens.access_token)
    t.equal(viaOAuth.status, 200)
    t.same(Object.keys(viaOAuth.body).sort(), Object.keys(viaKey.body).sort())
    t.same(Object.keys(viaOAuth.body.principal).sort(), Object.keys(viaKey.body.principal).sort())
    t.equal(viaOAuth.body.orgId, viaKey.body.orgId)
    t.same(viaOAuth.body.scopes, ['identities:read', 'sessions:drive', 'sessions:write'])
    t.equal(viaOAuth.body.principal.kind, 'oauth')
    t.equal(viaOAuth.body.principal.principalId, viaOAuth.body.agentId)
    t.match(viaOAuth.body.principal.credentialId, /^nkey_/)
    const mcp = await mcpList(s.url, tokens.access_token)
    t.equal(mcp.status, 200, '/mcp accepts njo_ like njk_')
  })

  t.test('[RULE-29] token prefix routing: each prefix is checked only against its own records', async (t) => {
    // an njo_-shaped string whose hash sits in the API-key table: keys are never consulted for njo_
    const fakeOauth = 'njo_' + randomBytes(32).toString('hex').slice(0, 43)
    await s.testDb.db.query(`insert into api_keys (id, org_id, name, token_hash, scopes, agent_id) values ($1, $2, 'planted', $3, $4, $5)`,
      ['nkey_planted0000000000000000', org.orgId, sha256(fakeOauth), ['sessions:drive'], org.agentId])
    // an njk_-shaped string whose hash sits in the OAuth token table: OAuth records are never consulted for njk_
    const fakeKey = 'njk_' + randomBytes(32).toString('hex').slice(0, 43)
    const grant = await s.testDb.db.query('select grant_id, family_id, audience, scopes from oauth_tokens limit 1')
    const g = grant.rows[0]
    await s.testDb.db.query(`insert into oauth_tokens (token_hash, kind, grant_id, client_id, family_id, audience, scopes, expires_at) values ($1, 'access', $2, 'ncli_nightjar_cli', $3, $4, $5, now() + interval '1 hour')`,
      [sha256(fakeKey), g.grant_id, g.family_id, g.audience, g.scopes])
    const variants = [
      fakeOauth,
      fakeKey,
      'njk_' + tokens.access_token.slice(4), // a real access token under the key prefix
      'njo_' + org.apiKey.slice(4), // a real key under the OAuth prefix
      tokens.refresh_token, // a refresh token is not a Bearer credential
    ]
    for (const v of variants) {
      const r = await me(s, v)
      t.equal(r.status, 401)
      t.equal(r.text, bogus.text, 'byte-identical 401 body')
      t.equal(r.headers.get('www-authenticate'), bogus.headers.get('www-authenticate'))
    }
    t.equal((await me(s, tokens.access_token)).status, 200, 'the genuine token still works')
  })

  t.test('[ERR-01] another deployment on the same database: every request with the old token → 401', async (t) => {
    const port = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), 'nightjar-oauth-b-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    const config = loadConfig({
      NIGHTJAR_HOST: '127.0.0.1', NIGHTJAR_PORT: String(port), NIGHTJAR_DATA_DIR: dataDir, NIGHTJAR_LOG_LEVEL: 'silent',
      NIGHTJAR_BASE_URL: `http://localhost:${port}`,
    })
    const b = await build({ config, db: s.testDb.db, cookieKey: randomBytes(32) })
    await b.app.listen({ host: '127.0.0.1', port })
    t.teardown(() => b.app.close())
    const url = `http://127.0.0.1:${port}`
    const prm = await (await fetch(url + '/.well-known/oauth-protected-resource/mcp')).json()
    t.equal(prm.resource, `http://localhost:${port}/mcp`, 'B protects a different resource')

    const bogusB = await fetch(url + '/v1/me', { headers: { authorization: `Bearer njo_${'Q'.repeat(43)}` } })
    const bogusText = await bogusB.text()
    for (let i = 0; i < 3; i++) {
      const r = await fetch(url + '/v1/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })
      t.equal(r.status, 401, `request ${i + 1} to B with A's token`)
      t.equal(await r.text(), bogusText, 'the same 401 as any bad token')
    }
    t.equal((await mcpList(url, tokens.access_token)).status, 401, '/mcp on B refuses it too')
    const bServer = { url, config } as unknown as TestServer
    const r = await refresh(bServer, tokens.refresh_token)
    t.equal(r.body.error, 'invalid_grant', "B will not refresh a token minted for A's resource")
    // B's own tokens work on B and not on A
    const own = await loginTokens(bServer, org)
    t.equal((await fetch(url + '/v1/me', { headers: { authorization: `Bearer ${own.access_token}` } })).status, 200)
    t.equal((await me(s, own.access_token)).status, 401, "A refuses B's token")
    t.equal((await me(s, tokens.access_token)).status, 200, 'A still accepts its own access token')
    t.equal((await refresh(s, tokens.refresh_token)).status, 200, 'the refused refresh on B did not spend the refresh token')
  })
})
