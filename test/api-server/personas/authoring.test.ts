// Identities, credentials and grants over real HTTP: every row of the endpoint table,
// validation, scopes and tenancy. Secret values are compared only with t.ok(...).
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { newId } from '../../../contracts/ids.ts'
import { bindIdentity } from '../../../api-server/personas/bind.ts'
import { release } from '../../../api-server/personas/leases.ts'
import { prepareFill } from '../../../api-server/secrets/fill.ts'
import { clock, createCredential, createGrant, createIdentity, grantBody, HOUR, insertAgent, mintKey } from './helpers.ts'

t.test('persona authoring over REST', async (t) => {
  const c = clock()
  const s = await startTestServer(t, { now: c.now })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const key = acme.apiKey
  const future = () => c.iso(24 * HOUR)
  const audit = async (action: string) =>
    (await s.request('GET', `/v1/audit?action=${encodeURIComponent(action)}&limit=500`, { token: key })).body.items as any[]

  t.test('[EP-08] [FLD-01] [FLD-03] create an identity: 201, nident_ id, default open mode exclusive', async (t) => {
    const r = await s.request('POST', '/v1/identities', { token: key, body: { name: 'support-bot' } })
    t.equal(r.status, 201)
    t.match(r.body.id, /^nident_[0-9A-Za-z]{22}$/)
    t.equal(r.body.name, 'support-bot')
    t.equal(r.body.defaultOpenMode, 'exclusive')
    for (const mode of ['fork', 'readonly', 'exclusive']) {
      const m = await s.request('POST', '/v1/identities', { token: key, body: { name: `mode-${mode}`, defaultOpenMode: mode } })
      t.equal(m.status, 201)
      t.equal(m.body.defaultOpenMode, mode)
    }
    const bad = await s.request('POST', '/v1/identities', { token: key, body: { name: 'x', defaultOpenMode: 'shared' } })
    t.equal(bad.status, 400)
    t.match(bad.body.error.message, /^invalid request: defaultOpenMode: /)
    t.ok((await audit('identity.create')).some((e) => e.identityId === r.body.id), 'audited')
  })

  t.test('[FLD-02] [ERR-18] a duplicate identity name in one org is 409; another org may reuse it', async (t) => {
    await createIdentity(s, key, 'dup-name')
    const again = await s.request('POST', '/v1/identities', { token: key, body: { name: 'dup-name' } })
    t.equal(again.status, 409)
    t.equal(again.body.error.code, 'conflict')
    const elsewhere = await s.request('POST', '/v1/identities', { token: other.apiKey, body: { name: 'dup-name' } })
    t.equal(elsewhere.status, 201)
  })

  t.test('identity names: length, charset, no id look-alikes, no unknown fields', async (t) => {
    for (const name of ['', 'a'.repeat(65), 'bad/name', ' padded', 'padded ', 'nident_abc', 'line\nbreak', '{{x}}']) {
      const r = await s.request('POST', '/v1/identities', { token: key, body: { name } })
      t.equal(r.status, 400, `rejected: ${JSON.stringify(name)}`)
      t.match(r.body.error.message, /^invalid request: name: /)
    }
    t.equal((await s.request('POST', '/v1/identities', { token: key, body: { name: 'a'.repeat(64) } })).status, 201)
    t.equal((await s.request('POST', '/v1/identities', { token: key, body: { name: 'Ops Bot 2.0' } })).status, 201)
    const unknown = await s.request('POST', '/v1/identities', { token: key, body: { name: 'ok-name', owner: 'me' } })
    t.equal(unknown.status, 400)
    t.equal(unknown.body.error.message, 'invalid request: body: unknown field: owner')
    const missing = await s.request('POST', '/v1/identities', { token: key, body: {} })
    t.equal(missing.body.error.message, 'invalid request: name: required')
  })

  t.test('identity_list shows the org identities only, with a lease state', async (t) => {
    const mine = await createIdentity(s, key)
    const theirs = await createIdentity(s, other.apiKey)
    const r = await s.request('GET', '/v1/identities', { token: key })
    t.equal(r.status, 200)
    t.ok(Array.isArray(r.body))
    const row = r.body.find((i: any) => i.id === mine.id)
    t.same(Object.keys(row).sort(), ['createdAt', 'defaultOpenMode', 'id', 'leaseState', 'name'])
    t.equal(row.leaseState, 'available')
    t.notOk(r.body.some((i: any) => i.id === theirs.id), 'another org never appears')
  })

  t.test('[EP-10] [FLD-04] [FLD-05] [FLD-06] [FLD-08] [FLD-09] create a credential: 201 with a mask and no value field', async (t) => {
    const ident = await createIdentity(s, key)
    const value = 'pw-' + newId('ncred_') // unique, never printed
    const r = await s.request('POST', `/v1/identities/${ident.id}/credentials`, {
      token: key, body: { name: 'login.password', value, originAllowlist: ['Login.Example.COM', 'localhost:8080', '[::1]:9000', 'login.example.com'] },
    })
    t.equal(r.status, 201)
    t.match(r.body.id, /^ncred_[0-9A-Za-z]{22}$/)
    t.equal(r.body.name, 'login.password')
    t.equal(r.body.placeholder, '{{credential:login.password}}')
    t.ok(r.body.maskedValue === '••••••••' + value.slice(-4), 'bullets plus the last 4 characters')
    t.same(r.body.originAllowlist, ['login.example.com', 'localhost:8080', '[::1]:9000'], 'normalised and de-duplicated')
    t.same(Object.keys(r.body).sort(), ['createdAt', 'id', 'identityId', 'kind', 'maskedValue', 'name', 'originAllowlist', 'placeholder', 'rotatedAt'])
    t.notOk(r.text.includes(value), 'the value is never returned')

    const explicit = await s.request('POST', `/v1/identities/${ident.id}/credentials`, {
      token: key, body: { name: 'user', placeholder: '{{credential:user}}', value: 'someone@example.com', originAllowlist: ['example.com'] },
    })
    t.equal(explicit.status, 201)
    const wrong = await s.request('POST', `/v1/identities/${ident.id}/credentials`, {
      token: key, body: { name: 'other', placeholder: '{{credential:user}}', value: 'x'.repeat(10), originAllowlist: ['example.com'] },
    })
    t.equal(wrong.status, 400)
    t.match(wrong.body.error.message, /^invalid request: placeholder: /)
    const dup = await s.request('POST', `/v1/identities/${ident.id}/credentials`, {
      token: key, body: { name: 'user', value: 'another-value-1', originAllowlist: ['example.com'] },
    })
    t.equal(dup.status, 409)

    const short = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pin', value: '4321', originAllowlist: ['example.com'] } })
    t.equal(short.status, 201)
    t.equal(short.body.maskedValue, '••••••••', 'a short value shows no characters (the mask would be the secret)')

    const rows = await s.testDb.db.query('select sealed_value from credentials where id = $1', [r.body.id])
    t.match(rows.rows[0].sealed_value, /^[A-Za-z0-9+/]+=*$/, 'stored as base64')
    t.notOk(Buffer.from(rows.rows[0].sealed_value, 'base64').includes(Buffer.from(value)), 'stored sealed')
    const a = (await audit('credential.create')).find((e) => e.credentialId === r.body.id)
    t.equal(a.credentialName, 'login.password')
    t.equal(a.identityId, ident.id)
  })

  t.test('[ERR-19] [LIM-09] an empty originAllowlist is 400 with the spec message', async (t) => {
    const ident = await createIdentity(s, key)
    const r = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pw', value: 'long-enough-value', originAllowlist: [] } })
    t.equal(r.status, 400)
    t.equal(r.body.error.message, 'origin_allowlist must list at least one origin')
    const missing = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pw', value: 'long-enough-value' } })
    t.equal(missing.status, 400)
    t.equal(missing.body.error.message, 'invalid request: originAllowlist: required')
    t.equal((await s.testDb.db.query('select count(*)::int as n from credentials where identity_id = $1', [ident.id])).rows[0].n, 0, 'nothing stored')
  })

  t.test('credential input: origins are hosts only, names and values are checked, nothing is echoed', async (t) => {
    const ident = await createIdentity(s, key)
    const value = 'val-' + newId('ncred_')
    for (const origin of ['https://example.com', 'example.com/login', '*.example.com', 'user@example.com', '', ' ', 'exa mple.com', 'example.com:0', 'example.com:99999', 'example.com?x']) {
      const r = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pw', value, originAllowlist: ['ok.example.com', origin] } })
      t.equal(r.status, 400, `rejected origin ${JSON.stringify(origin)}`)
      t.match(r.body.error.message, /^invalid request: originAllowlist\.1: must be a host/)
      t.notOk(r.text.includes(value), 'no echo of the value')
    }
    for (const name of ['', 'has space', 'a}b', 'x'.repeat(65), '.dot-first']) {
      const r = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name, value, originAllowlist: ['example.com'] } })
      t.equal(r.status, 400)
      t.match(r.body.error.message, /^invalid request: name: /)
    }
    const empty = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pw', value: '', originAllowlist: ['example.com'] } })
    t.equal(empty.body.error.message, 'invalid request: value: must not be empty')
    const long = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pw', value: value.repeat(200), originAllowlist: ['example.com'] } })
    t.equal(long.body.error.message, 'invalid request: value: must be at most 4096 characters')
    t.notOk(long.text.includes(value))
    const typed = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: key, body: { name: 'pw', value: 12345678, originAllowlist: ['example.com'] } })
    t.equal(typed.status, 400)
    t.match(typed.body.error.message, /^invalid request: value: /)
  })

  t.test('[EP-11] rotate re-seals the value; name, placeholder and allowlist are unchanged', async (t) => {
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const first = 'first-' + newId('ncred_')
    const second = 'second-' + newId('ncred_')
    const cred = await createCredential(s, key, ident.id, { name: 'pw', value: first, originAllowlist: ['example.com'] })
    const before = (await s.testDb.db.query('select sealed_value from credentials where id = $1', [cred.id])).rows[0].sealed_value
    const r = await s.request('POST', `/v1/identities/${ident.id}/credentials/${cred.id}/rotate`, { token: key, body: { value: second } })
    t.equal(r.status, 200)
    t.equal(r.body.id, cred.id)
    t.equal(r.body.name, 'pw')
    t.equal(r.body.placeholder, '{{credential:pw}}')
    t.same(r.body.originAllowlist, ['example.com'])
    t.ok(r.body.maskedValue === '••••••••' + second.slice(-4))
    t.ok(r.body.rotatedAt)
    t.notOk(r.text.includes(second))
    const after = (await s.testDb.db.query('select sealed_value from credentials where id = $1', [cred.id])).rows[0].sealed_value
    t.not(after, before, 're-sealed')
    const p = await prepareFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, credentialName: 'pw' })
    const ok = p.secret.equals(Buffer.from(second))
    p.secret.fill(0)
    t.ok(ok, 'opens to the new value')
    const extra = await s.request('POST', `/v1/identities/${ident.id}/credentials/${cred.id}/rotate`, { token: key, body: { value: second, originAllowlist: ['evil.com'] } })
    t.equal(extra.status, 400, 'rotate cannot change the allowlist')
    t.equal(extra.body.error.message, 'invalid request: body: unknown field: originAllowlist')
    t.ok((await audit('credential.rotate')).some((e) => e.credentialId === cred.id))
  })

  t.test('[EP-12] delete a credential: 204, then gone (404)', async (t) => {
    const ident = await createIdentity(s, key)
    const cred = await createCredential(s, key, ident.id, { name: 'pw', value: 'some-long-value', originAllowlist: ['example.com'] })
    const r = await s.request('DELETE', `/v1/identities/${ident.id}/credentials/${cred.id}`, { token: key })
    t.equal(r.status, 204)
    t.equal(r.text, '')
    const list = await s.request('GET', `/v1/identities/${ident.id}/credentials`, { token: key })
    t.same(list.body, [])
    const again = await s.request('DELETE', `/v1/identities/${ident.id}/credentials/${cred.id}`, { token: key })
    t.equal(again.status, 404)
    t.ok((await audit('credential.delete')).some((e) => e.credentialId === cred.id))
  })

  t.test('credential_list: names, placeholders, origins and masks only', async (t) => {
    const ident = await createIdentity(s, key)
    const value = 'listed-' + newId('ncred_')
    await createCredential(s, key, ident.id, { name: 'pw', value, originAllowlist: ['example.com'] })
    const reader = await mintKey(s, key, ['identities:read'])
    const r = await s.request('GET', `/v1/identities/${ident.id}/credentials`, { token: reader })
    t.equal(r.status, 200)
    t.equal(r.body.length, 1)
    t.same(Object.keys(r.body[0]).sort(), ['createdAt', 'id', 'identityId', 'kind', 'maskedValue', 'name', 'originAllowlist', 'placeholder', 'rotatedAt'])
    t.notOk(r.text.includes(value))
  })

  t.test('[EP-13] [FLD-10] [FLD-11] [FLD-12] [FLD-14] [FLD-15] [FLD-17] [FLD-18] [FLD-19] create a grant: 201 with every field', async (t) => {
    const ident = await createIdentity(s, key)
    const agent = await insertAgent(s, acme.orgId)
    const expiresAt = c.iso(2 * HOUR)
    const r = await s.request('POST', `/v1/identities/${ident.id}/grants`, {
      token: key,
      body: grantBody(agent, expiresAt, {
        role: 'manage', allowedOrigins: ['Example.com', 'login.example.com:443'], propagation: 'same_conversation',
        maxSessionDurationSecs: 900, reason: 'ticket 42', principalUserId: acme.userId, principalOrgRole: 'admin',
      }),
    })
    t.equal(r.status, 201)
    t.match(r.body.id, /^ngrnt_[0-9A-Za-z]{22}$/)
    t.equal(r.body.identityId, ident.id)
    t.equal(r.body.principalAgentId, agent)
    t.equal(r.body.principalUserId, acme.userId)
    t.equal(r.body.principalOrgRole, 'admin')
    t.equal(r.body.role, 'manage')
    t.equal(r.body.expiresAt, expiresAt)
    t.same(r.body.allowedOrigins, ['example.com', 'login.example.com:443'])
    t.equal(r.body.propagation, 'same_conversation')
    t.equal(r.body.maxSessionDurationSecs, 900)
    t.equal(r.body.reason, 'ticket 42')
    t.equal(r.body.createdByUserId, acme.userId, 'the human who minted the calling key')
    t.equal(r.body.revoked_at, null)
    t.equal(r.body.state, 'live')
    const offset = await s.request('POST', `/v1/identities/${ident.id}/grants`, { token: key, body: grantBody(agent, '2030-01-02T05:30:00+05:30') })
    t.equal(offset.status, 201, 'an RFC 3339 offset is accepted')
    t.equal(offset.body.expiresAt, '2030-01-02T00:00:00.000Z')
    const a = (await audit('grant.create')).find((e) => e.grantId === r.body.id)
    t.equal(a.identityId, ident.id)
    t.equal(a.reason, undefined, 'the grant reason is on the grant, the audit row stays minimal')
  })

  t.test('grant input validation: clear 400s naming the field', async (t) => {
    const ident = await createIdentity(s, key)
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ expiresAt: 'tomorrow' }, /^invalid request: expiresAt: must be an RFC 3339 timestamp/],
      [{ expiresAt: '2031-01-01' }, /^invalid request: expiresAt: must be an RFC 3339/],
      [{ expiresAt: '2031-01-01T00:00:00' }, /^invalid request: expiresAt: must be an RFC 3339/],
      [{ expiresAt: '2031-13-45T00:00:00Z' }, /^invalid request: expiresAt: must be an RFC 3339/],
      [{ expiresAt: c.iso(-1000) }, /^invalid request: expiresAt: must be in the future$/],
      [{ expiresAt: c.iso(0) }, /^invalid request: expiresAt: must be in the future$/],
      [{ role: 'owner' }, /^invalid request: role: /],
      [{ propagation: 'everyone' }, /^invalid request: propagation: /],
      [{ maxSessionDurationSecs: 0 }, /^invalid request: maxSessionDurationSecs: must be a positive integer$/],
      [{ maxSessionDurationSecs: -5 }, /^invalid request: maxSessionDurationSecs: must be a positive integer$/],
      [{ maxSessionDurationSecs: 1.5 }, /^invalid request: maxSessionDurationSecs: must be an integer$/],
      [{ maxSessionDurationSecs: '60' }, /^invalid request: maxSessionDurationSecs: /],
      [{ allowedOrigins: ['https://example.com/'] }, /^invalid request: allowedOrigins\.0: must be a host/],
      [{ allowedOrigins: ['*.example.com'] }, /^invalid request: allowedOrigins\.0: must be a host/],
      [{ reason: '' }, /^invalid request: reason: /],
      [{ reason: undefined }, /^invalid request: reason: required$/],
      [{ maxSessionDurationSecs: undefined }, /^invalid request: maxSessionDurationSecs: required$/],
      [{ principalOrgRole: 'root' }, /^invalid request: principalOrgRole: /],
      [{ createdByUserId: acme.userId }, /^invalid request: body: unknown field: createdByUserId$/],
    ]
    for (const [over, re] of cases) {
      const r = await s.request('POST', `/v1/identities/${ident.id}/grants`, { token: key, body: grantBody(acme.agentId, future(), over) })
      t.equal(r.status, 400, JSON.stringify(over))
      t.match(r.body.error.message, re)
    }
    t.equal((await s.testDb.db.query('select count(*)::int as n from identity_grants where identity_id = $1', [ident.id])).rows[0].n, 0)
  })

  t.test('grant principals must be in the org: foreign and unknown give the identical 404', async (t) => {
    const ident = await createIdentity(s, key)
    const foreign = await s.request('POST', `/v1/identities/${ident.id}/grants`, { token: key, body: grantBody(other.agentId, future()) })
    const unknown = await s.request('POST', `/v1/identities/${ident.id}/grants`, { token: key, body: grantBody(newId('nagt_'), future()) })
    t.equal(foreign.status, 404)
    t.equal(foreign.text, unknown.text)
    const foreignUser = await s.request('POST', `/v1/identities/${ident.id}/grants`, { token: key, body: grantBody(acme.agentId, future(), { principalUserId: other.userId }) })
    const unknownUser = await s.request('POST', `/v1/identities/${ident.id}/grants`, { token: key, body: grantBody(acme.agentId, future(), { principalUserId: newId('nusr_') }) })
    t.equal(foreignUser.status, 404)
    t.equal(foreignUser.text, unknownUser.text)
  })

  t.test('[EP-14] [EP-15] [FLD-20] [ST-06] list grants; soft revoke is 204 and idempotent', async (t) => {
    const ident = await createIdentity(s, key)
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const r1 = await s.request('POST', `/v1/identities/${ident.id}/grants/${g.id}/revoke`, { token: key })
    t.equal(r1.status, 204)
    const listed1 = (await s.request('GET', `/v1/identities/${ident.id}/grants`, { token: key })).body
    t.equal(listed1.length, 1)
    t.ok(listed1[0].revoked_at)
    t.equal(listed1[0].state, 'revoked')
    c.advance(60_000)
    const r2 = await s.request('POST', `/v1/identities/${ident.id}/grants/${g.id}/revoke`, { token: key, body: {} })
    t.equal(r2.status, 204)
    const listed2 = (await s.request('GET', `/v1/identities/${ident.id}/grants`, { token: key })).body
    t.equal(listed2[0].revoked_at, listed1[0].revoked_at, 'a second revoke keeps the first timestamp')
    const expiring = await createGrant(s, key, ident.id, grantBody(acme.agentId, c.iso(1000)))
    c.advance(2000)
    const listed3 = (await s.request('GET', `/v1/identities/${ident.id}/grants`, { token: key })).body
    t.equal(listed3.find((x: any) => x.id === expiring.id).state, 'expired')
  })

  t.test('[EP-16] [RULE-35] a hard delete removes the grant row and its audit trail', async (t) => {
    const ident = await createIdentity(s, key)
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const keep = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const sessionId = newId('nsess_')
    await bindIdentity(s.services, { orgId: acme.orgId, agentId: acme.agentId, scopes: ['sessions:write'], identityRef: ident.id, sessionId, admission: 'direct' })
    await release(s.services.db, sessionId)
    await s.request('POST', `/v1/identities/${ident.id}/grants/${g.id}/revoke`, { token: key })
    await s.request('POST', `/v1/identities/${ident.id}/grants/${keep.id}/revoke`, { token: key })
    const count = async (id: string) =>
      (await s.testDb.db.query(`select count(*)::int as n from audit_events where grant_id = $1 or target_id = $1`, [id])).rows[0].n
    t.ok((await count(g.id)) >= 2, 'the grant has an audit trail')
    const r = await s.request('DELETE', `/v1/identities/${ident.id}/grants/${g.id}`, { token: key })
    t.equal(r.status, 204)
    t.equal((await s.testDb.db.query('select count(*)::int as n from identity_grants where id = $1', [g.id])).rows[0].n, 0, 'row gone')
    t.equal(await count(g.id), 0, 'audit trail gone')
    t.ok((await count(keep.id)) >= 2, "another grant's trail is untouched")
    const del = (await audit('grant.delete')).find((e) => e.identityId === ident.id)
    t.ok(del, 'the deletion is recorded')
    t.equal(del.grantId, undefined, 'without the deleted grant id')
    t.equal((await s.request('DELETE', `/v1/identities/${ident.id}/grants/${g.id}`, { token: key })).status, 404)
    t.equal((await s.request('POST', `/v1/identities/${ident.id}/grants/${g.id}/revoke`, { token: key })).status, 404)
  })

  t.test('[EP-09] [ERR-17] deleting a leased identity is 409 identity in use; after release it is 204', async (t) => {
    const ident = await createIdentity(s, key)
    await createCredential(s, key, ident.id, { name: 'pw', value: 'delete-me-value', originAllowlist: ['example.com'] })
    await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const sessionId = newId('nsess_')
    await bindIdentity(s.services, { orgId: acme.orgId, agentId: acme.agentId, scopes: ['sessions:write'], identityRef: ident.id, sessionId, admission: 'direct' })
    const r = await s.request('DELETE', `/v1/identities/${ident.id}`, { token: key })
    t.equal(r.status, 409)
    t.equal(r.body.error.message, 'identity in use')
    t.equal((await s.testDb.db.query('select count(*)::int as n from credentials where identity_id = $1', [ident.id])).rows[0].n, 1, 'nothing deleted')
    await release(s.services.db, sessionId)
    const ok = await s.request('DELETE', `/v1/identities/${ident.id}`, { token: key })
    t.equal(ok.status, 204)
    for (const table of ['identities', 'credentials', 'identity_grants']) {
      const col = table === 'identities' ? 'id' : 'identity_id'
      t.equal((await s.testDb.db.query(`select count(*)::int as n from ${table} where ${col} = $1`, [ident.id])).rows[0].n, 0, `${table} cleared`)
    }
    t.equal((await s.request('DELETE', `/v1/identities/${ident.id}`, { token: key })).status, 404)
    t.ok((await audit('identity.delete')).some((e) => e.identityId === ident.id))
  })

  t.test('[RULE-26] [AUTH-10] [ERR-04] authoring needs identities:write; the OAuth default set cannot author', async (t) => {
    const ident = await createIdentity(s, key)
    const cred = await createCredential(s, key, ident.id, { name: 'pw', value: 'scope-test-value', originAllowlist: ['example.com'] })
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const oauthSet = await mintKey(s, key, ['sessions:write', 'sessions:drive', 'identities:read'])
    const authoring: Array<[string, string, unknown?]> = [
      ['POST', '/v1/identities', { name: 'nope' }],
      ['DELETE', `/v1/identities/${ident.id}`],
      ['POST', `/v1/identities/${ident.id}/credentials`, { name: 'x', value: 'yyyyyyyyyy', originAllowlist: ['example.com'] }],
      ['POST', `/v1/identities/${ident.id}/credentials/${cred.id}/rotate`, { value: 'zzzzzzzzzz' }],
      ['DELETE', `/v1/identities/${ident.id}/credentials/${cred.id}`],
      ['POST', `/v1/identities/${ident.id}/grants`, grantBody(acme.agentId, future())],
      ['GET', `/v1/identities/${ident.id}/grants`],
      ['POST', `/v1/identities/${ident.id}/grants/${g.id}/revoke`],
      ['DELETE', `/v1/identities/${ident.id}/grants/${g.id}`],
    ]
    for (const [method, path, body] of authoring) {
      const r = await s.request(method, path, { token: oauthSet, body })
      t.equal(r.status, 403, `${method} ${path}`)
      t.equal(r.body.error.message, 'missing required scope: identities:write')
      t.equal(r.body.error.reason, 'missing_scope')
    }
    t.equal((await s.request('GET', '/v1/identities', { token: oauthSet })).status, 200, 'identities:read lists identities')
    t.equal((await s.request('GET', `/v1/identities/${ident.id}/credentials`, { token: oauthSet })).status, 200, 'and credentials')
    t.equal((await s.request('GET', '/v1/identities/assumable', { token: oauthSet })).status, 200, 'and assumable identities')
    const driveOnly = await mintKey(s, key, ['sessions:drive'])
    for (const path of ['/v1/identities', `/v1/identities/${ident.id}/credentials`, '/v1/identities/assumable']) {
      const r = await s.request('GET', path, { token: driveOnly })
      t.equal(r.status, 403)
      t.equal(r.body.error.message, 'missing required scope: identities:read')
    }
    const noAdmin = await mintKey(s, key, ['identities:write', 'identities:read', 'sessions:write'])
    t.equal((await s.request('GET', '/v1/governance', { token: noAdmin })).body.error.message, 'missing required scope: org:admin')
    t.equal((await s.request('PUT', '/v1/governance', { token: noAdmin, body: { credential_freetext_fill: true } })).status, 403)
    t.equal((await s.testDb.db.query('select count(*)::int as n from credentials where identity_id = $1', [ident.id])).rows[0].n, 1, 'nothing changed')
  })

  t.test('[INV-04] another org probing every route with our ids gets byte-identical 404s to unknown ids', async (t) => {
    const ident = await createIdentity(s, key)
    const cred = await createCredential(s, key, ident.id, { name: 'pw', value: 'tenancy-test-value', originAllowlist: ['example.com'] })
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const theirIdent = await createIdentity(s, other.apiKey)
    const unknownIdent = newId('nident_')
    const unknownCred = newId('ncred_')
    const unknownGrant = newId('ngrnt_')
    const routes = (i: string, cr: string, gr: string): Array<[string, string, unknown?]> => [
      ['DELETE', `/v1/identities/${i}`],
      ['GET', `/v1/identities/${i}/credentials`],
      ['POST', `/v1/identities/${i}/credentials`, { name: 'pw2', value: 'probe-value-123', originAllowlist: ['example.com'] }],
      ['POST', `/v1/identities/${i}/credentials/${cr}/rotate`, { value: 'probe-value-456' }],
      ['DELETE', `/v1/identities/${i}/credentials/${cr}`],
      ['GET', `/v1/identities/${i}/grants`],
      ['POST', `/v1/identities/${i}/grants`, grantBody(other.agentId, future())],
      ['POST', `/v1/identities/${i}/grants/${gr}/revoke`],
      ['DELETE', `/v1/identities/${i}/grants/${gr}`],
    ]
    // their ids on our identity path, then our credential/grant ids under their own identity
    const probes: Array<[[string, string, unknown?], [string, string, unknown?]]> = []
    const foreignAll = routes(ident.id, cred.id, g.id)
    const unknownAll = routes(unknownIdent, unknownCred, unknownGrant)
    foreignAll.forEach((f, i) => probes.push([f, unknownAll[i]]))
    const foreignChild = routes(theirIdent.id, cred.id, g.id)
    const unknownChild = routes(theirIdent.id, unknownCred, unknownGrant)
    for (const i of [3, 4, 7, 8]) probes.push([foreignChild[i], unknownChild[i]])
    for (const [[m, p, b], [m2, p2, b2]] of probes) {
      const foreign = await s.request(m, p, { token: other.apiKey, body: b })
      const unknown = await s.request(m2, p2, { token: other.apiKey, body: b2 })
      t.equal(foreign.status, 404, `${m} ${p.replace(/n[a-z]+_\w+/g, ':id')}`)
      t.equal(foreign.text, unknown.text, 'byte-identical to an unknown id')
    }
    const listed = await s.request('GET', '/v1/identities', { token: other.apiKey })
    t.notOk(listed.text.includes(ident.id))
    const still = await s.request('GET', `/v1/identities/${ident.id}/credentials`, { token: key })
    t.equal(still.body.length, 1, 'our credential survived every probe')
    const grants = await s.request('GET', `/v1/identities/${ident.id}/grants`, { token: key })
    t.equal(grants.body[0].revoked_at, null, 'our grant was not revoked by the probe')
  })
})
