// The secret canary: credentials created and rotated over REST, listed over REST and
// over MCP with the real SDK client, with unique canary values (an agent asking MCP to
// author one is refused without an echo), then every table, the server logs and
// every response are searched for them. Also: a sealed value moved to another row or
// org does not open. Canary values are only ever checked with t.ok(!x.includes(...)).
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { newId } from '../../../contracts/ids.ts'
import { prepareFill } from '../../../api-server/secrets/fill.ts'
import { createGrant, createIdentity, errShape, grantBody, HOUR, mintKey, rejection } from './helpers.ts'
import { dumpAllTables } from '../../helpers/db.ts'

async function mcpClient(t: { teardown(fn: () => unknown): void }, s: TestServer, token: string) {
  const client = new Client({ name: 'nightjar-persona-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(s.url + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  await client.connect(transport)
  t.teardown(() => client.close())
  return client
}

t.test('[INV-03] [FLD-07] [FLD-08] secret canary: no credential value anywhere outside its ciphertext', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const key = acme.apiKey
  const canaries: string[] = []
  const canary = () => {
    const c = `CANARY-${randomBytes(12).toString('hex')}-X`
    canaries.push(c)
    return c
  }
  const responses: string[] = []
  const rest = async (method: string, path: string, body?: unknown, token = key) => {
    const r = await s.request(method, path, { token, body })
    responses.push(r.text)
    return r
  }
  const mcp = await mcpClient(t, s, key)
  const call = async (name: string, args: Record<string, unknown>, client = mcp) => {
    const r = await client.callTool({ name, arguments: args })
    responses.push(JSON.stringify(r))
    return r as { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> }
  }

  const ident = await createIdentity(s, key)
  await createGrant(s, key, ident.id, grantBody(acme.agentId, new Date(Date.now() + HOUR).toISOString()))

  // REST: create, rotate, list
  const restValue = canary()
  const created = await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'rest-pw', value: restValue, originAllowlist: ['example.com'] })
  t.equal(created.status, 201)
  const rotated = await rest('POST', `/v1/identities/${ident.id}/credentials/${created.body.id}/rotate`, { value: canary() })
  t.equal(rotated.status, 200)
  await rest('GET', `/v1/identities/${ident.id}/credentials`)
  await rest('GET', '/v1/identities/assumable')

  // a second credential, rotated; then MCP lists what REST wrote
  const second = await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'second-pw', value: canary(), originAllowlist: ['example.com'] })
  t.equal(second.status, 201)
  t.match(second.body.maskedValue, /^•{8}.{4}$/)
  t.equal((await rest('POST', `/v1/identities/${ident.id}/credentials/${second.body.id}/rotate`, { value: canary() })).status, 200)
  const listed = await call('credential_list', { identityId: ident.id })
  t.equal(listed.structuredContent.result.length, 2)
  await call('identity_list_assumable', {})

  // error paths that carry a canary value: none may echo it
  const errors: Array<{ status: number }> = []
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'bad-origin', value: canary(), originAllowlist: ['https://example.com/login'] }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'too-long', value: canary().repeat(200), originAllowlist: ['example.com'] }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'empty-list', value: canary(), originAllowlist: [] }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'rest-pw', value: canary(), originAllowlist: ['example.com'] }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'extra', value: canary(), originAllowlist: ['example.com'], note: canary() }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: canary(), value: 'fine-value', originAllowlist: ['example.com'], placeholder: canary() }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials/${newId('ncred_')}/rotate`, { value: canary() }))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'foreign', value: canary(), originAllowlist: ['example.com'] }, other.apiKey))
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, `{"name":"broken","value":"${canary()}"`))
  const oauthSet = await mintKey(s, key, ['sessions:write', 'sessions:drive', 'identities:read'])
  errors.push(await rest('POST', `/v1/identities/${ident.id}/credentials`, { name: 'scope', value: canary(), originAllowlist: ['example.com'] }, oauthSet))
  t.same(errors.map((e) => e.status), [400, 400, 400, 409, 400, 400, 404, 404, 400, 403])
  // authoring is not a tool: an agent that tries to pass a secret through MCP is refused, and nothing echoes it
  for (const client of [mcp, await mcpClient(t, s, oauthSet)]) {
    const refused = await rejection(client.callTool({ name: 'credential_create', arguments: { identityId: ident.id, name: 'x', value: canary(), originAllowlist: ['example.com'] } }))
    t.not(refused, 'resolved', 'credential_create is no MCP tool')
    responses.push(String(refused?.message ?? refused))
  }

  // an identity's default proxy: its password is sealed like a credential's value
  t.equal((await rest('PUT', '/v1/governance', { proxyHosts: ['proxy.example:3128'] })).status, 200)
  const proxySet = await rest('PUT', `/v1/identities/${ident.id}/proxy`, { url: 'http://proxy.example:3128', username: 'svc', password: canary() })
  t.same(proxySet.body, { url: 'http://proxy.example:3128', authenticated: true }, 'the answer says it authenticates, nothing more')
  t.same((await rest('GET', '/v1/identities')).body.find((i: { id: string }) => i.id === ident.id)?.proxy, { url: 'http://proxy.example:3128', authenticated: true })
  const proxyRefusals = [
    await rest('PUT', `/v1/identities/${ident.id}/proxy`, { url: `http://svc:${canary()}@proxy.example:3128` }),
    await rest('PUT', `/v1/identities/${ident.id}/proxy`, { url: 'http://proxy.example:3128', password: canary() }),
    await rest('PUT', `/v1/identities/${ident.id}/proxy`, { url: 'http://not-listed.example:3128', username: 'svc', password: canary() }),
    await rest('PUT', `/v1/identities/${ident.id}/proxy`, { url: 'http://proxy.example:3128', username: 'svc', password: canary() }, oauthSet),
  ]
  t.same(proxyRefusals.map((r) => r.status), [400, 400, 400, 403], 'credentials in the URL, a password alone, a host not allowed, a key without identities:write')
  const proxyTool = await rejection(mcp.callTool({ name: 'identity_proxy_put', arguments: { identityId: ident.id, url: 'http://proxy.example:3128', username: 'svc', password: canary() } }))
  t.not(proxyTool, 'resolved', 'identity_proxy_put is no MCP tool')
  responses.push(String(proxyTool?.message ?? proxyTool))

  // a just-in-time open leaves nothing behind either
  const p = await prepareFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, credentialName: 'rest-pw' })
  p.secret.fill(0)

  const dump = await dumpAllTables(s.testDb.db)
  const logs = s.logs()
  const all = responses.join('\n')
  t.ok(dump.includes('org_data_keys') && dump.includes('credentials') && dump.includes('audit_events'), 'the dump covers every table')
  t.ok(logs.length > 0 && all.length > 0)
  let hits = 0
  for (const c of canaries) {
    const forms = [c, Buffer.from(c).toString('hex'), Buffer.from(c).toString('base64').slice(0, 20)]
    for (const f of forms) {
      if (dump.includes(f)) hits++
      if (logs.includes(f)) hits++
      if (all.includes(f)) hits++
    }
  }
  t.ok(hits === 0, `no canary in tables, logs or responses (${canaries.length} canaries, ${hits} hits)`)
  // negative control: the same search does find a canary that was written somewhere
  const control = canary()
  await s.testDb.db.query(`insert into audit_events (org_id, actor, action, reason) values ($1, 'test', 'control', $2)`, [acme.orgId, control])
  t.ok((await dumpAllTables(s.testDb.db)).includes(control), 'the search method detects a planted canary')
  // the ciphertext is really there (we searched a dump that contains it)
  const sealed = await s.testDb.db.query('select sealed_value from credentials where org_id = $1', [acme.orgId])
  t.equal(sealed.rows.length, 2)
  for (const r of sealed.rows) t.ok(dump.includes(r.sealed_value))
})

t.test('[EP-32] [RULE-30] MCP reads personas (assumable identities, credential names); authoring and governance are REST only', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const mcp = await mcpClient(t, s, acme.apiKey)
  const names = (await mcp.listTools()).tools.map((x) => x.name)
  for (const n of ['identity_list_assumable', 'credential_list']) t.ok(names.includes(n), n)
  for (const n of ['identity_list', 'identity_create', 'identity_delete', 'credential_create', 'credential_rotate', 'credential_delete',
    'grant_list', 'grant_create', 'grant_revoke', 'grant_delete']) t.notOk(names.includes(n), `${n} is REST only`)
  t.notOk(names.some((n) => n.startsWith('governance')))
  const ident = await createIdentity(s, acme.apiKey)
  t.equal((await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: acme.apiKey, body: { name: 'login', value: 'not-shown-value', originAllowlist: ['example.com'] } })).status, 201)
  // an agent holding only identities:read learns the credential names it can fill, never a value
  const reader = await mintKey(s, acme.apiKey, ['identities:read'])
  const listed = await (await mcpClient(t, s, reader)).callTool({ name: 'credential_list', arguments: { identityId: ident.id } })
  t.same((listed as any).structuredContent.result.map((c: any) => c.name), ['login'])
  t.notOk(JSON.stringify(listed).includes('not-shown-value'))
})

t.test('[INV-04] ciphertext swap: a sealed value moved to another credential, identity or org does not open', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const future = new Date(Date.now() + HOUR).toISOString()
  const setup = async (org: typeof acme) => {
    const ident = await createIdentity(s, org.apiKey)
    await createGrant(s, org.apiKey, ident.id, grantBody(org.agentId, future))
    for (const name of ['a', 'b']) {
      const r = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: org.apiKey, body: { name, value: `swap-${name}-${newId('ncred_')}`, originAllowlist: ['example.com'] } })
      t.equal(r.status, 201)
    }
    return ident
  }
  const i1 = await setup(acme)
  const i2 = await setup(acme)
  const i3 = await setup(other)
  const sealedOf = async (identityId: string, name: string) =>
    (await s.testDb.db.query('select sealed_value from credentials where identity_id = $1 and name = $2', [identityId, name])).rows[0].sealed_value as string
  const put = (identityId: string, name: string, v: string) => s.testDb.db.query('update credentials set sealed_value = $3 where identity_id = $1 and name = $2', [identityId, name, v])
  const fill = async (org: typeof acme, identityId: string, name: string) =>
    errShape(await rejection(prepareFill(s.services, { orgId: org.orgId, agentId: org.agentId, identityId, credentialName: name })))
  const refused = { status: 500, code: 'internal', message: 'sealed value could not be opened', reason: undefined }

  t.equal(await fill(acme, i1.id, 'a'), 'resolved', 'untouched rows open')
  const a1 = await sealedOf(i1.id, 'a')
  const b1 = await sealedOf(i1.id, 'b')
  await put(i1.id, 'b', a1)
  t.same(await fill(acme, i1.id, 'b'), refused, 'to another credential of the same identity')
  const b2 = await sealedOf(i2.id, 'a')
  await put(i2.id, 'a', a1)
  t.same(await fill(acme, i2.id, 'a'), refused, 'to another identity of the same org')
  const a3 = await sealedOf(i3.id, 'a')
  await put(i3.id, 'a', a1)
  t.same(await fill(other, i3.id, 'a'), refused, 'to another org')
  await put(i1.id, 'b', b1)
  await put(i2.id, 'a', b2)
  await put(i3.id, 'a', a3)
  for (const [org, id, name] of [[acme, i1.id, 'b'], [acme, i2.id, 'a'], [other, i3.id, 'a']] as const) {
    t.equal(await fill(org, id, name), 'resolved', 'each value opens again in its own row')
  }
})
