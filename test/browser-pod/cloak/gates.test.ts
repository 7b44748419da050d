// Every refusal of the cloak warm-resume section, through the real server: the cloak
// gate (typed 403s, never a silent downgrade), the 400s and the 404, the identity bind
// (409 lease, 403 without a grant), who may capture, and the one 404 for unknown and
// foreign ids. A refused session_start leaves no session row, resource or pod behind.
import t, { type Test } from 'tap'
import { createPersona } from '../../helpers/personas.ts'
import type { Reply } from '../../helpers/server.ts'
import { APP, cloakWorld, nothingCreated, sessionFootprint } from './helpers.ts'

t.test('cloak gates and warm-resume refusals', async (t) => {
  const w = await cloakWorld(t)
  const { s, acme, req } = w
  await w.enableCloak()
  const persona = await createPersona(s, acme.apiKey, { name: 'gated', value: 'not-a-real-secret-1', originAllowlist: ['app.example.com'], agentId: acme.agentId })
  const runtime = await w.agentKey(['sessions:write', 'sessions:drive'])
  await w.grant(persona.identityId, runtime.agentId)
  const cloak = { identity: persona.identityId, browserKind: 'cloak', url: `${APP}/` }

  // one real captured version to resume (cookie + both storages from storage.html)
  const capturer = await w.open(cloak)
  await req('POST', `/v1/sessions/${capturer}/navigate`, { url: `${APP}/storage.html?write=1` })
  const version = await req('POST', `/v1/sessions/${capturer}/authstate`, {})
  if (version.status !== 201) throw new Error(`capture ${version.status} ${version.text}`)
  await w.end(capturer)
  const versionCount = async () => Number((await s.testDb.db.query('select count(*) from auth_state_versions')).rows[0].count)

  /** a refused start: status, typed error, and nothing created */
  const refused = async (t: Test, body: Record<string, unknown>, token: string, status: number, reason?: string): Promise<Reply> => {
    const before = await sessionFootprint(s)
    const r = await req('POST', '/v1/sessions', body, token)
    t.equal(r.status, status, `${status} ${r.body?.error?.reason ?? ''}`)
    if (reason !== undefined) t.equal(r.body?.error?.reason, reason)
    t.ok(nothingCreated(before, await sessionFootprint(s)), 'no session row, resource or pod was created')
    return r
  }

  t.test('[ERR-21] [RULE-19] cloak not enabled for the org: typed 403 cloak_disabled, no downgrade', async (t) => {
    const other = await s.bootstrap()
    const r = await refused(t, { browserKind: 'cloak', url: `${APP}/` }, other.apiKey, 403, 'cloak_disabled')
    t.equal(r.body.error.code, 'forbidden')
    await refused(t, { browserKind: 'cloak', url: `${APP}/`, warmResume: true, identity: 'nident_0000000000000000000000' }, other.apiKey, 403, 'cloak_disabled')
    // enabling the flag alone is not enough: the url must be declared too
    await w.req('PUT', '/v1/governance', { cloakEnabled: true }, other.apiKey)
    await refused(t, { browserKind: 'cloak', url: `${APP}/` }, other.apiKey, 403, 'origin_not_declared')
  })

  t.test('[ERR-21] [RULE-19] a url that is not a declared advisor origin: typed 403 origin_not_declared', async (t) => {
    await refused(t, { ...cloak, url: 'http://other.example.com/' }, acme.apiKey, 403, 'origin_not_declared')
    await refused(t, { ...cloak, url: 'https://app.example.com/' }, acme.apiKey, 403, 'origin_not_declared') // another scheme is another origin
    await refused(t, { identity: persona.identityId, browserKind: 'cloak' }, acme.apiKey, 403, 'origin_not_declared') // no url at all
    await refused(t, { ...cloak, url: 'http://other.example.com/', warmResume: true }, runtime.key, 403, 'origin_not_declared')
    t.equal((await req('GET', '/v1/identities')).body.find((i: any) => i.id === persona.identityId).leaseState, 'available', 'the gate refused before any lease')
  })

  t.test('[ERR-22] [RULE-20] warmResume or fromVersion without identity: 400', async (t) => {
    await refused(t, { browserKind: 'cloak', url: `${APP}/`, warmResume: true }, runtime.key, 400)
    await refused(t, { browserKind: 'cloak', url: `${APP}/`, fromVersion: version.body.id }, runtime.key, 400)
    await refused(t, { browserKind: 'cloak', url: `${APP}/`, warmResume: true, fromVersion: version.body.id }, runtime.key, 400)
  })

  t.test('[ERR-23] [RULE-20] warm resume of an identity with no captured version: 404', async (t) => {
    const bare = await createPersona(s, acme.apiKey, { name: 'never-captured', value: 'not-a-real-secret-2', originAllowlist: ['app.example.com'], agentId: runtime.agentId })
    const r = await req('POST', '/v1/sessions', { ...cloak, identity: bare.identityId, warmResume: true }, runtime.key)
    t.equal(r.status, 404)
    t.equal(r.body.error.code, 'not_found')
    // a version of another identity is no version of this one
    const foreign = await req('POST', '/v1/sessions', { ...cloak, identity: bare.identityId, warmResume: true, fromVersion: version.body.id }, runtime.key)
    t.equal(foreign.status, 404)
    t.equal(foreign.text, r.text, 'the same 404')
    const unknown = await req('POST', '/v1/sessions', { ...cloak, warmResume: true, fromVersion: 'niver_0000000000000000000000' }, runtime.key)
    t.equal(unknown.text, r.text, 'an unknown version: the same 404')
    const ids = (await req('GET', '/v1/identities')).body
    t.ok(ids.every((i: any) => i.leaseState === 'available'), 'every lease went back')
  })

  t.test('[ERR-16] [RULE-19] a second concurrent warm resume on the identity: 409', async (t) => {
    const first = await w.open({ ...cloak, warmResume: true }, runtime.key)
    const r = await refused(t, { ...cloak, warmResume: true }, runtime.key, 409, 'identity_in_use')
    t.equal(r.body.error.message, 'identity in use by another session')
    // another agent with its own grant is refused the same way
    const second = await w.agentKey(['sessions:write', 'sessions:drive'])
    await w.grant(persona.identityId, second.agentId)
    await refused(t, { ...cloak, warmResume: true }, second.key, 409, 'identity_in_use')
    await w.end(first, runtime.key)
    const again = await w.open({ ...cloak, warmResume: true }, second.key)
    t.pass('once the first ended, the lease is free again')
    await w.end(again, second.key)
  })

  t.test('[RULE-19] [RULE-18] warm resume without a grant: 403; sessions:drive alone is not a grant', async (t) => {
    const stranger = await w.agentKey(['sessions:write', 'sessions:drive'])
    const r = await refused(t, { ...cloak, warmResume: true }, stranger.key, 403, 'no_grant')
    t.equal(r.body.error.code, 'forbidden')
  })

  t.test('[RULE-17] capture needs org:admin AND identities:write AND sessions:drive', async (t) => {
    const sid = await w.open(cloak)
    await req('POST', `/v1/sessions/${sid}/navigate`, { url: `${APP}/storage.html?write=1` })
    const before = await versionCount()
    const cases: Array<[string[], string]> = [
      [['identities:write', 'sessions:drive', 'sessions:write'], 'org:admin'],
      [['org:admin', 'sessions:drive', 'sessions:write'], 'identities:write'],
      [['org:admin', 'identities:write'], 'sessions:drive'],
      [['sessions:write', 'sessions:drive', 'identities:read'], 'org:admin identities:write'], // what an OAuth agent holds
    ]
    for (const [scopes, missing] of cases) {
      const k = await w.agentKey(scopes)
      const r = await req('POST', `/v1/sessions/${sid}/authstate`, {}, k.key)
      t.equal(r.status, 403, scopes.join(' '))
      t.equal(r.body.error.message, `missing required scope: ${missing}`)
    }
    const lister = await w.agentKey(['identities:read', 'sessions:drive'])
    const list = await req('GET', `/v1/identities/${persona.identityId}/authstates`, undefined, lister.key)
    t.equal(list.status, 403, 'listing versions needs identities:write')
    t.equal(await versionCount(), before, 'nothing was captured')
    await w.end(sid)
    t.equal(await versionCount(), before, 'ending a session captures nothing: capture is never automatic')
  })

  t.test('capture refusals: anonymous session 400, ended session 409, unknown and foreign ids one 404', async (t) => {
    const anon = await w.open({ browserKind: 'cloak', url: `${APP}/` })
    const r = await req('POST', `/v1/sessions/${anon}/authstate`, {})
    t.equal(r.status, 400)
    t.equal(r.body.error.reason, 'no_identity')
    await w.end(anon)
    t.equal((await req('POST', `/v1/sessions/${anon}/authstate`, {})).status, 409, 'a session that is not live')

    const other = await s.bootstrap()
    const theirs = await w.open({}, other.apiKey)
    const unknownSession = await req('POST', '/v1/sessions/nsess_0000000000000000000000/authstate', {})
    const foreignSession = await req('POST', `/v1/sessions/${theirs}/authstate`, {})
    t.equal(unknownSession.status, 404)
    t.equal(foreignSession.text, unknownSession.text, 'byte-identical 404 for a foreign session')
    await w.end(theirs, other.apiKey)

    const theirIdentity = (await req('POST', '/v1/identities', { name: 'theirs' }, other.apiKey)).body.id
    const unknownIdentity = await req('GET', '/v1/identities/nident_0000000000000000000000/authstates')
    const foreignIdentity = await req('GET', `/v1/identities/${theirIdentity}/authstates`)
    t.equal(unknownIdentity.status, 404)
    t.equal(foreignIdentity.text, unknownIdentity.text, 'byte-identical 404 for a foreign identity')
  })
})
