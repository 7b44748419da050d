// Fill preparation on the control side: credential lookup, grant narrowing before any
// decrypt, just-in-time open, the deprecated free-text gate and governance, and the
// value-free audit rows. The pod side is a later task; these call the functions.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { newId } from '../../../contracts/ids.ts'
import { prepareFill } from '../../../api-server/secrets/fill.ts'
import { checkFreetextAllowed, findFreetextMarker, prepareFreetextFill } from '../../../api-server/secrets/fill.ts'
import { auditFieldDenied, auditFill, auditOriginDenied } from '../../../api-server/personas/audit.ts'
import { NO_KMS_MESSAGE } from '../../../api-server/kms/index.ts'
import { clock, createCredential, createGrant, createIdentity, errShape, grantBody, HOUR, insertAgent, mintKey, rejection } from './helpers.ts'

t.test('fill preparation', async (t) => {
  const c = clock()
  const s = await startTestServer(t, { now: c.now })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const key = acme.apiKey
  const future = () => c.iso(24 * HOUR)
  const fails = async (p: Promise<unknown>) => errShape(await rejection(p))

  // counts decrypts, so a test can prove a refusal came before any
  let opens = 0
  const realOpen = s.services.sealer.open.bind(s.services.sealer)
  s.services.sealer.open = async (...args) => { opens++; return realOpen(...args) }

  async function persona(value: string, originAllowlist: string[], grant: Record<string, unknown> = {}, agentId = acme.agentId) {
    const ident = await createIdentity(s, key)
    const cred = await createCredential(s, key, ident.id, { name: 'password', value, originAllowlist })
    const g = await createGrant(s, key, ident.id, grantBody(agentId, future(), grant))
    return { ident, cred, grant: g }
  }
  const req = (identityId: string, over: Record<string, string> = {}) => ({ orgId: acme.orgId, agentId: acme.agentId, identityId, credentialName: 'password', ...over })

  t.test('[RULE-02] [INV-02] the secret is opened just in time into a Buffer the caller wipes', async (t) => {
    const value = 'jit-' + newId('ncred_')
    const { ident, cred, grant } = await persona(value, ['example.com', 'localhost:3000'])
    const before = opens
    const p = await prepareFill(s.services, req(ident.id))
    t.equal(opens, before + 1, 'one decrypt')
    t.ok(Buffer.isBuffer(p.secret))
    const same = p.secret.equals(Buffer.from(value))
    p.secret.fill(0)
    t.ok(same, 'the Buffer holds the value')
    t.ok(p.secret.every((b) => b === 0), 'and the caller can zero it')
    t.equal(p.credentialId, cred.id)
    t.equal(p.grantId, grant.id)
    t.same(p.allowlist, ['example.com', 'localhost:3000'], 'an empty grant list narrows nothing')
  })

  t.test('[RULE-03] [FLD-15] [INV-07] effective origins are the credential allowlist narrowed by the grant', async (t) => {
    const { ident } = await persona('narrowing-value', ['example.com', 'other.org'], { allowedOrigins: ['login.example.com', 'unrelated.net'] })
    const p = await prepareFill(s.services, req(ident.id))
    p.secret.fill(0)
    t.same(p.allowlist, ['login.example.com'])
    const { ident: wide } = await persona('narrowing-value', ['login.example.com:8443'], { allowedOrigins: ['example.com'] })
    const q = await prepareFill(s.services, req(wide.id))
    q.secret.fill(0)
    t.same(q.allowlist, ['login.example.com:8443'], 'the narrower entry wins')
  })

  t.test('[ERR-10] disjoint origins: 403 grant-origin denied, before any decrypt', async (t) => {
    const { ident, cred } = await persona('disjoint-value', ['example.com'], { allowedOrigins: ['evil-example.com'] })
    const before = opens
    t.same(await fails(prepareFill(s.services, req(ident.id))), { status: 403, code: 'forbidden', message: 'grant-origin denied', reason: 'grant_intersection' })
    t.equal(opens, before, 'the secret was never opened')
    const a = await s.testDb.db.query(`select * from audit_events where credential_id = $1 and action = 'credential.grant_origin_denied'`, [cred.id])
    t.equal(a.rows.length, 1)
    t.equal(a.rows[0].reason, 'grant_intersection')
  })

  t.test('[ERR-08] a name absent on the identity: 404 no credential named <name>', async (t) => {
    const { ident } = await persona('absent-value', ['example.com'])
    t.same(await fails(prepareFill(s.services, req(ident.id, { credentialName: 'otp' }))),
      { status: 404, code: 'not_found', message: 'no credential named otp', reason: undefined })
    t.equal((await fails(prepareFill(s.services, req(ident.id, { credentialName: 'not a name {x}' })))).message, 'no credential named (invalid name)',
      'arbitrary text is not echoed')
  })

  t.test('[INV-04] another org can never resolve or decrypt our credential', async (t) => {
    const { ident } = await persona('tenant-value', ['example.com'])
    const before = opens
    const foreign = await fails(prepareFill(s.services, { orgId: other.orgId, agentId: other.agentId, identityId: ident.id, credentialName: 'password' }))
    t.equal(foreign.status, 404)
    const mixed = await fails(prepareFill(s.services, { orgId: other.orgId, agentId: acme.agentId, identityId: ident.id, credentialName: 'password' }))
    t.equal(mixed.status, 404)
    t.equal(opens, before)
  })

  t.test('a grant revoked or expired after bind stops further fills', async (t) => {
    const { ident, grant } = await persona('revoked-fill-value', ['example.com'])
    await s.request('POST', `/v1/identities/${ident.id}/grants/${grant.id}/revoke`, { token: key })
    t.equal((await fails(prepareFill(s.services, req(ident.id)))).reason, 'grant_revoked')
    const { ident: i2 } = await persona('expired-fill-value', ['example.com'], {})
    c.advance(25 * HOUR)
    t.equal((await fails(prepareFill(s.services, req(i2.id)))).reason, 'grant_expired')
    const someone = await insertAgent(s, acme.orgId)
    const { ident: i3 } = await persona('no-grant-value', ['example.com'], {}, someone)
    t.equal((await fails(prepareFill(s.services, req(i3.id)))).reason, 'no_grant', 'no grant of this agent')
  })

  t.test("a spawned child fills under its parent's grant", async (t) => {
    const parent = await insertAgent(s, acme.orgId)
    const child = await insertAgent(s, acme.orgId, { parentAgentId: parent })
    const { ident } = await persona('child-value', ['example.com'], { allowedOrigins: ['example.com'] }, parent)
    const p = await prepareFill(s.services, { ...req(ident.id), agentId: child })
    p.secret.fill(0)
    t.same(p.allowlist, ['example.com'])
  })

  t.test('findFreetextMarker finds {{credential:<name>}} markers', async (t) => {
    t.same(findFreetextMarker('user {{credential:pw}} here'), { placeholder: '{{credential:pw}}', name: 'pw' })
    t.same(findFreetextMarker('{{credential:bad name}}'), { placeholder: '{{credential:bad name}}', name: 'bad name' }, 'malformed markers are caught too')
    t.equal(findFreetextMarker('plain text'), null)
    t.equal(findFreetextMarker('{{credential pw}}'), null)
    t.equal(findFreetextMarker(undefined), null)
  })

  t.test('[ERR-13] [RULE-16] [EV-02] [RULE-34] free-text fill is refused by default, audited value-free, before any decrypt', async (t) => {
    const value = 'freetext-' + newId('ncred_')
    const { ident } = await persona(value, ['example.com'])
    const sessionId = newId('nsess_')
    const text = 'log in with {{credential:password}} please'
    const before = opens
    t.same(await fails(prepareFreetextFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, text, sessionId })),
      { status: 403, code: 'forbidden', message: 'free-text fill denied', reason: 'freetext_disabled' })
    t.equal(opens, before, 'no decrypt')
    const rows = await s.testDb.db.query(`select * from audit_events where action = 'CREDENTIAL_FREETEXT_DENIED' and session_id = $1`, [sessionId])
    t.equal(rows.rows.length, 1)
    t.equal(rows.rows[0].credential_name, 'password')
    t.equal(rows.rows[0].reason, 'freetext_disabled')
    t.notOk(JSON.stringify(rows.rows).includes('please'), 'the act text is not audited')
    t.equal(await prepareFreetextFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, text: 'no marker' }), null)
    t.equal((await fails(checkFreetextAllowed(s.services, acme.orgId, { actor: acme.agentId }))).reason, 'freetext_disabled')
  })

  t.test('[ERR-09] [EP-19] with the org flag on, a marker fills; an absent placeholder is 400', async (t) => {
    const value = 'flag-on-' + newId('ncred_')
    const { ident } = await persona(value, ['example.com'])
    const put = await s.request('PUT', '/v1/governance', { token: key, body: { credential_freetext_fill: true } })
    t.equal(put.status, 200)
    t.equal(put.body.credential_freetext_fill, true)
    const p = await prepareFreetextFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, text: 'x {{credential:password}}' })
    const same = p!.secret.equals(Buffer.from(value))
    p!.secret.fill(0)
    t.ok(same)
    t.same(await fails(prepareFreetextFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, text: '{{credential:nope}}' })),
      { status: 400, code: 'bad_request', message: 'no credential {{credential:nope}}', reason: undefined })
    t.equal((await fails(prepareFreetextFill(s.services, { orgId: other.orgId, agentId: other.agentId, identityId: ident.id, text: '{{credential:password}}' }))).status, 403,
      "the flag is per org: the other org's default still refuses")
    await s.request('PUT', '/v1/governance', { token: key, body: { credential_freetext_fill: false } })
  })

  t.test('[EV-01] [EV-03] [EV-04] [INV-03] fill audit rows carry ids, the name, a host or a field kind only', async (t) => {
    const value = 'audited-' + newId('ncred_')
    const { ident, cred } = await persona(value, ['example.com'])
    const sessionId = newId('nsess_')
    const ref = { orgId: acme.orgId, actor: acme.agentId, sessionId, identityId: ident.id, credentialId: cred.id, credentialName: 'password' }
    await auditFill(s.services.db, { ...ref, host: 'login.example.com' })
    await auditOriginDenied(s.services.db, { ...ref, host: 'evil-example.com' })
    await auditFieldDenied(s.services.db, { ...ref, fieldKind: 'checkbox' })
    const admin = await s.request('GET', '/v1/audit?limit=500', { token: key })
    const mine = admin.body.items.filter((e: any) => e.sessionId === sessionId)
    t.same(mine.map((e: any) => e.action), ['credential.fill', 'credential.origin_denied', 'credential.field_denied'])
    t.equal(mine[0].host, 'login.example.com')
    t.equal(mine[1].host, 'evil-example.com')
    t.equal(mine[2].fieldKind, 'checkbox')
    for (const e of mine) {
      t.equal(e.credentialName, 'password')
      t.equal(e.credentialId, cred.id)
      t.equal(e.identityId, ident.id)
    }
    t.notOk(admin.text.includes(value))
  })

  t.test('[EP-19] [AUTH-10] governance: org:admin reads and updates; partial updates; per org; REST only', async (t) => {
    const org = await s.bootstrap()
    const get = await s.request('GET', '/v1/governance', { token: org.apiKey })
    t.equal(get.status, 200)
    t.same(get.body, { credential_freetext_fill: false, cloakEnabled: false, declaredAdvisorOrigins: [], recordSessions: false, videoSessions: false, videoMaxSeconds: null, videoMaxMiB: null, proxyHosts: [] }, 'defaults: free-text off, no proxy allowed')
    const put = await s.request('PUT', '/v1/governance', {
      token: org.apiKey, body: { cloakEnabled: true, declaredAdvisorOrigins: ['https://Login.Example.com/', 'http://localhost:8080', 'https://login.example.com'] },
    })
    t.equal(put.status, 200)
    t.same(put.body, { credential_freetext_fill: false, cloakEnabled: true, declaredAdvisorOrigins: ['https://login.example.com', 'http://localhost:8080'], recordSessions: false, videoSessions: false, videoMaxSeconds: null, videoMaxMiB: null, proxyHosts: [] })
    const flag = await s.request('PUT', '/v1/governance', { token: org.apiKey, body: { credential_freetext_fill: true } })
    t.same(flag.body, { credential_freetext_fill: true, cloakEnabled: true, declaredAdvisorOrigins: ['https://login.example.com', 'http://localhost:8080'], recordSessions: false, videoSessions: false, videoMaxSeconds: null, videoMaxMiB: null, proxyHosts: [] }, 'other fields kept')
    t.same((await s.request('GET', '/v1/governance', { token: org.apiKey })).body, flag.body)
    t.same((await s.request('GET', '/v1/governance', { token: other.apiKey })).body.credential_freetext_fill, false, 'another org is unaffected')
    for (const bad of ['example.com', 'https://example.com/login', 'https://user@example.com', 'ftp://example.com', 'https://*.example.com', 'https://example.com?x=1']) {
      const r = await s.request('PUT', '/v1/governance', { token: org.apiKey, body: { declaredAdvisorOrigins: [bad] } })
      t.equal(r.status, 400, bad)
      t.match(r.body.error.message, /^invalid request: declaredAdvisorOrigins\.0: must be an origin/)
    }
    t.equal((await s.request('PUT', '/v1/governance', { token: org.apiKey, body: { credential_freetext_fill: 'yes' } })).status, 400)
    t.equal((await s.request('PUT', '/v1/governance', { token: org.apiKey, body: { governance: {} } })).body.error.message, 'invalid request: body: unknown field: governance')
    const writer = await mintKey(s, org.apiKey, ['identities:write', 'identities:read', 'sessions:write', 'sessions:drive'])
    const denied = await s.request('PUT', '/v1/governance', { token: writer, body: { credential_freetext_fill: false } })
    t.equal(denied.status, 403)
    t.equal(denied.body.error.message, 'missing required scope: org:admin')
    const audit = await s.request('GET', '/v1/audit?action=governance.update', { token: org.apiKey })
    t.same(audit.body.items.map((e: any) => e.reason), ['cloakEnabled,declaredAdvisorOrigins', 'credential_freetext_fill'])
  })
})

t.test('[ERR-20] without a KMS provider credential writes and fills fail closed with the spec 500', async (t) => {
  const s = await startTestServer(t, { env: { NIGHTJAR_KMS_PROVIDER: 'none' } })
  const acme = await s.bootstrap()
  const ident = await createIdentity(s, acme.apiKey)
  const value = 'no-kms-' + newId('ncred_')
  const r = await s.request('POST', `/v1/identities/${ident.id}/credentials`, { token: acme.apiKey, body: { name: 'password', value, originAllowlist: ['example.com'] } })
  t.equal(r.status, 500)
  t.equal(r.body.error.message, NO_KMS_MESSAGE)
  t.equal(r.body.error.message, 'credential decryption unavailable: no KMS object store configured')
  t.notOk(r.text.includes(value))
  t.equal((await s.testDb.db.query('select count(*)::int as n from credentials')).rows[0].n, 0, 'nothing stored, sealed or not')
  t.equal((await s.testDb.db.query('select count(*)::int as n from org_data_keys')).rows[0].n, 0)
  // a row left from a deployment that had a KMS: rotate and fill both fail closed
  const credId = newId('ncred_')
  await s.testDb.db.query(
    `insert into credentials (id, org_id, identity_id, name, placeholder, sealed_value, masked_value, origin_allowlist)
     values ($1,$2,$3,'old','{{credential:old}}','AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==','••••••••','{example.com}')`,
    [credId, acme.orgId, ident.id],
  )
  await createGrant(s, acme.apiKey, ident.id, grantBody(acme.agentId, new Date(Date.now() + HOUR).toISOString()))
  const rot = await s.request('POST', `/v1/identities/${ident.id}/credentials/${credId}/rotate`, { token: acme.apiKey, body: { value } })
  t.equal(rot.status, 500)
  t.equal(rot.body.error.message, NO_KMS_MESSAGE)
  const row = await s.testDb.db.query('select sealed_value from credentials where id = $1', [credId])
  t.equal(row.rows[0].sealed_value, 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==', 'unchanged')
  const fill = errShape(await rejection(prepareFill(s.services, { orgId: acme.orgId, agentId: acme.agentId, identityId: ident.id, credentialName: 'old' })))
  t.same(fill, { status: 500, code: 'internal', message: NO_KMS_MESSAGE, reason: undefined })
  t.notOk(s.logs().includes(value))
})
