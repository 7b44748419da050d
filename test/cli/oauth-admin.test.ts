// The operator commands, run as the real `nightjar admin …` process against the test
// database while the server is up: revocation takes effect on the next request.
import t from 'tap'
import { run } from '../helpers/process.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { BUILTIN, consoleLogin, leaks, loginTokens, me, refresh } from '../api-server/oauth/helpers.ts'
import { revokeOAuthClient, revokeOAuthGrant } from '../../api-server/oauth/admin.ts'

const BIN = fileURLToPath(new URL('../../bin/nightjar.mjs', import.meta.url))

async function nightjar(s: TestServer, dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('NIGHTJAR_')) env[k] = v
  const r = await run(process.execPath, [BIN, 'admin', ...args], { env: { ...env, DATABASE_URL: s.testDb.url, NIGHTJAR_DATA_DIR: dataDir } })
  return { ...r, code: r.code ?? -1 }
}

t.test('operator commands', async (t) => {
  const s = await startTestServer(t)
  const dataDir = mkdtempSync(join(tmpdir(), 'nightjar-oauth-cli-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const org = await s.bootstrap()
  const cookie = await consoleLogin(s, org)
  const reg = await s.request('POST', '/oauth/register', { body: { client_name: 'Zed', redirect_uris: ['http://127.0.0.1/callback'] } })
  const dyn = reg.body.client_id as string
  const viaDyn = await loginTokens(s, org, { clientId: dyn, redirectUri: 'http://127.0.0.1:6000/callback', workspace: 'w1' }, cookie)
  const viaDyn2 = await loginTokens(s, org, { clientId: dyn, redirectUri: 'http://127.0.0.1:6000/callback', workspace: 'w2' }, cookie)
  const viaBuiltin = await loginTokens(s, org, { workspace: 'cli' }, cookie)

  t.test('list-oauth-clients', async (t) => {
    const json = await nightjar(s, dataDir, 'list-oauth-clients', '--json')
    t.equal(json.code, 0, json.stderr)
    const clients = JSON.parse(json.stdout)
    const builtin = clients.find((c: any) => c.clientId === BUILTIN)
    t.equal(builtin.builtin, true)
    const z = clients.find((c: any) => c.clientId === dyn)
    t.same({ name: z.name, builtin: z.builtin, activeGrants: z.activeGrants, revokedAt: z.revokedAt }, { name: 'Zed', builtin: false, activeGrants: 2, revokedAt: null })
    const table = await nightjar(s, dataDir, 'list-oauth-clients')
    t.equal(table.code, 0)
    t.match(table.stdout, /^CLIENT ID/)
    t.match(table.stdout, new RegExp(`${dyn}\\s+dynamic\\s+active\\s+2`))
    t.match(table.stdout, new RegExp(`${BUILTIN}\\s+built-in\\s+active`))
    t.notOk(leaks(json.stdout + table.stdout, viaDyn.access_token, viaDyn.refresh_token), 'no secrets printed')
  })

  t.test('revoke-grant --id nkey_…: that grant stops at once, others live', async (t) => {
    const grantId = (await me(s, viaDyn2.access_token)).body.principal.credentialId
    const r = await nightjar(s, dataDir, 'revoke-grant', '--id', grantId)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, `revoked grant ${grantId}`)
    t.equal((await me(s, viaDyn2.access_token)).status, 401)
    t.equal((await refresh(s, viaDyn2.refresh_token, dyn)).body.error, 'invalid_grant')
    t.equal((await me(s, viaDyn.access_token)).status, 200, 'the other workspace still works')
    const unknown = await nightjar(s, dataDir, 'revoke-grant', '--id', 'nkey_0000000000000000000000')
    t.equal(unknown.code, 1)
    t.match(unknown.stderr, /no OAuth grant/)
    // the rest in-process (each process start costs seconds): same functions the command calls
    t.equal(await revokeOAuthGrant(s.testDb.db, org.apiKeyId, Date.now()), false, 'an API key id is not an OAuth grant')
    t.equal((await me(s, org.apiKey)).status, 200)
  })

  t.test('revoke-oauth-client --id ncli_…: the client and all its grants stop; the built-in client is refused', async (t) => {
    const refused = await nightjar(s, dataDir, 'revoke-oauth-client', '--id', BUILTIN)
    t.equal(refused.code, 1)
    t.match(refused.stderr, /built-in client and cannot be revoked/)
    t.equal((await me(s, viaBuiltin.access_token)).status, 200, 'built-in grants untouched')

    const r = await nightjar(s, dataDir, 'revoke-oauth-client', '--id', dyn)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /revoked 1 grant/)
    t.equal((await me(s, viaDyn.access_token)).status, 401)
    t.equal((await refresh(s, viaDyn.refresh_token, dyn)).status, 401, 'a revoked client is invalid_client')
    const authz = await fetch(`${s.url}/oauth/authorize?response_type=code&client_id=${dyn}&redirect_uri=${encodeURIComponent('http://127.0.0.1:6000/callback')}`, { headers: { cookie }, redirect: 'manual' })
    t.equal(authz.status, 400, 'the consent page refuses a revoked client')
    const reg2 = await s.request('POST', '/oauth/register', { body: { redirect_uris: ['http://127.0.0.1/cb'] } })
    t.equal(reg2.status, 201)
    t.same(await revokeOAuthClient(s.testDb.db, 'ncli_nope', Date.now()), { ok: false, reason: 'not_found' })
    const list = JSON.parse((await nightjar(s, dataDir, 'list-oauth-clients', '--json')).stdout)
    const z = list.find((c: any) => c.clientId === dyn)
    t.ok(z.revokedAt)
    t.equal(z.activeGrants, 0)
  })
})
