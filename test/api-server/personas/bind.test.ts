// Session bind checks, leases and the assumable listing. bindIdentity is called
// directly (the session layer that calls it is a later task), against a real server
// and database, with a controllable clock instead of sleeps.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { newId } from '../../../contracts/ids.ts'
import { BIND_CHECKS, bindIdentity, type BindInput } from '../../../api-server/personas/bind.ts'
import { acquire, isLeased, leaseOf, reapDeadLeases, release } from '../../../api-server/personas/leases.ts'
import { leaseTtlSecs } from '../../../api-server/personas/lease-ttl.ts'
import { clock, createCredential, createGrant, createIdentity, errShape, grantBody, HOUR, insertAgent, mintKey, rejection } from './helpers.ts'

t.test('bind checks and leases', async (t) => {
  const c = clock()
  const s = await startTestServer(t, { now: c.now })
  const acme = await s.bootstrap()
  const other = await s.bootstrap()
  const key = acme.apiKey
  const deps = { db: s.services.db, now: c.now }
  const future = () => c.iso(24 * HOUR)
  const input = (identityRef: string, over: Partial<BindInput> = {}): BindInput => ({
    orgId: acme.orgId, agentId: acme.agentId, scopes: ['sessions:write', 'sessions:drive'], identityRef, sessionId: newId('nsess_'), admission: 'direct', ...over,
  })
  const bind = (identityRef: string, over: Partial<BindInput> = {}) => bindIdentity(deps, input(identityRef, over))
  const fails = async (p: Promise<unknown>) => errShape(await rejection(p))

  t.test('[RULE-15] the checks run in the spec order', async (t) => {
    t.same(BIND_CHECKS.map(([name]) => name), ['scope', 'org_ownership', 'live_grant', 'propagation', 'lease'])
  })

  t.test('[ST-01] [RULE-27] [RULE-13] a live assume grant binds and takes the lease', async (t) => {
    const ident = await createIdentity(s, key)
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    t.notOk(await isLeased(s.services.db, ident.id))
    const sessionId = newId('nsess_')
    const r = await bind(ident.id, { sessionId })
    t.equal(r.identityId, ident.id)
    t.equal(r.grantId, g.id)
    t.equal(r.leaseExpiresAt, c.iso(3600_000))
    t.ok(await isLeased(s.services.db, ident.id))
    const lease = await leaseOf(s.services.db, ident.id)
    t.equal(lease!.sessionId, sessionId)
    const a = await s.testDb.db.query(`select * from audit_events where action = 'identity.bind' and session_id = $1`, [sessionId])
    t.equal(a.rows[0].grant_id, g.id)
    t.equal(a.rows[0].identity_id, ident.id)
  })

  t.test('bind by name resolves inside the org only', async (t) => {
    const ident = await createIdentity(s, key, 'by-name-persona')
    await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const r = await bind('by-name-persona')
    t.equal(r.identityId, ident.id)
    const theirs = await createIdentity(s, other.apiKey, 'their-persona')
    const foreign = await rejection(bind('their-persona'))
    const unknown = await rejection(bind('no-such-persona'))
    t.equal(foreign.status, 404)
    t.equal(JSON.stringify(foreign.toBody()), JSON.stringify(unknown.toBody()), 'same 404 body')
    const foreignId = await rejection(bind(theirs.id))
    const unknownId = await rejection(bind(newId('nident_')))
    t.equal(JSON.stringify(foreignId.toBody()), JSON.stringify(unknownId.toBody()))
    t.equal(JSON.stringify(foreignId.toBody()), JSON.stringify(foreign.toBody()))
  })

  t.test('[FLD-13] manage subsumes assume', async (t) => {
    const ident = await createIdentity(s, key)
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future(), { role: 'manage' }))
    t.equal((await bind(ident.id)).grantId, g.id)
  })

  t.test('[ST-02] [ERR-16] [LIM-06] a second session gets 409; the holder may retry', async (t) => {
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const sessionId = newId('nsess_')
    const first = await bind(ident.id, { sessionId })
    t.same(await fails(bind(ident.id)), { status: 409, code: 'conflict', message: 'identity in use by another session', reason: 'identity_in_use' })
    const retry = await bind(ident.id, { sessionId })
    t.equal(retry.leaseExpiresAt, first.leaseExpiresAt, 'same lease, not a second writer')
    // two racing binds: exactly one wins
    const other2 = await createIdentity(s, key)
    await createGrant(s, key, other2.id, grantBody(acme.agentId, future()))
    const results = await Promise.all([1, 2, 3, 4].map(() => rejection(bind(other2.id))))
    t.equal(results.filter((x) => x === 'resolved').length, 1, 'one winner')
    t.equal(results.filter((x) => x?.status === 409).length, 3, 'the rest get 409')
  })

  t.test('[ST-03] [ST-10] release frees the lease (idempotently) and another session can bind', async (t) => {
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const sessionId = newId('nsess_')
    await bind(ident.id, { sessionId })
    t.equal(await release(s.services.db, sessionId), true)
    t.equal(await release(s.services.db, sessionId), false, 'a second release is a no-op')
    t.notOk(await isLeased(s.services.db, ident.id))
    t.ok(await bind(ident.id))
  })

  t.test('[ST-05] [ERR-14] [FLD-14] an expired grant refuses with grant_expired', async (t) => {
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(acme.agentId, c.iso(60_000)))
    c.advance(60_000)
    t.same(await fails(bind(ident.id)), { status: 403, code: 'forbidden', message: 'identity grant not live', reason: 'grant_expired' })
    t.notOk(await isLeased(s.services.db, ident.id))
  })

  t.test('[ST-06] [ERR-14] a revoked grant refuses with grant_revoked; a held lease is kept', async (t) => {
    const ident = await createIdentity(s, key)
    const g = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const sessionId = newId('nsess_')
    await bind(ident.id, { sessionId })
    t.equal((await s.request('POST', `/v1/identities/${ident.id}/grants/${g.id}/revoke`, { token: key })).status, 204)
    t.ok(await isLeased(s.services.db, ident.id), 'the live session keeps its lease')
    t.equal((await leaseOf(s.services.db, ident.id))!.sessionId, sessionId)
    t.same(await fails(bind(ident.id)), { status: 403, code: 'forbidden', message: 'identity grant not live', reason: 'grant_revoked' },
      'the grant check runs before the lease, so a revoked grant is reported, not the lease')
    await release(s.services.db, sessionId)
    t.same(await fails(bind(ident.id)), { status: 403, code: 'forbidden', message: 'identity grant not live', reason: 'grant_revoked' })
  })

  t.test('revoked rows are excluded: a live grant next to a revoked one wins', async (t) => {
    const ident = await createIdentity(s, key)
    const revoked = await createGrant(s, key, ident.id, grantBody(acme.agentId, future(), { propagation: 'none', maxSessionDurationSecs: 60 }))
    await s.request('POST', `/v1/identities/${ident.id}/grants/${revoked.id}/revoke`, { token: key })
    const live = await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    t.equal((await bind(ident.id)).grantId, live.id)
  })

  t.test('[FLD-11] [FLD-12] only agent-principal grants count; principalUserId is not checked at bind', async (t) => {
    const ident = await createIdentity(s, key)
    const someoneElse = await insertAgent(s, acme.orgId)
    await createGrant(s, key, ident.id, grantBody(someoneElse, future(), { principalUserId: acme.userId, principalOrgRole: 'owner' }))
    t.same(await fails(bind(ident.id)), { status: 403, code: 'forbidden', message: 'no grant to assume this identity', reason: 'no_grant' })
    t.ok(await bind(ident.id, { agentId: someoneElse }), 'the named agent binds')
  })

  t.test('[RULE-15] order: scope before ownership, ownership before grant, grant and propagation before lease', async (t) => {
    const theirs = await createIdentity(s, other.apiKey)
    t.same(await fails(bind(theirs.id, { scopes: ['sessions:drive'] })),
      { status: 403, code: 'forbidden', message: 'missing required scope: sessions:write', reason: 'missing_scope' }, 'scope first')
    t.equal((await fails(bind(theirs.id))).status, 404, 'then org ownership (even with no grant at all)')

    const ident = await createIdentity(s, key)
    t.equal((await fails(bind(ident.id))).reason, 'no_grant', 'then the grant')

    const parent = await insertAgent(s, acme.orgId)
    const child = await insertAgent(s, acme.orgId, { parentAgentId: parent })
    await createGrant(s, key, ident.id, grantBody(parent, future(), { propagation: 'none' }))
    await bind(ident.id, { agentId: parent }) // the parent holds the lease now
    t.equal((await fails(bind(ident.id, { agentId: child, admission: 'spawned_child' }))).message,
      "grant propagation='none' blocks a spawned-child bind", 'propagation before the lease')
    t.equal((await fails(bind(ident.id, { agentId: parent }))).status, 409, 'and only then the lease')
  })

  t.test('[ERR-15] [FLD-16] propagation none blocks only a spawned child; the direct path never', async (t) => {
    const parent = await insertAgent(s, acme.orgId)
    const child = await insertAgent(s, acme.orgId, { parentAgentId: parent })
    const none = await createIdentity(s, key)
    await createGrant(s, key, none.id, grantBody(parent, future(), { propagation: 'none' }))
    t.same(await fails(bind(none.id, { agentId: child, admission: 'spawned_child' })),
      { status: 403, code: 'forbidden', message: "grant propagation='none' blocks a spawned-child bind", reason: 'propagation_none' })
    t.ok(await bind(none.id, { agentId: parent, admission: 'direct' }), 'the direct create path is not blocked')
    for (const propagation of ['same_conversation', 'descendants']) {
      const ident = await createIdentity(s, key)
      const g = await createGrant(s, key, ident.id, grantBody(parent, future(), { propagation }))
      const r = await bind(ident.id, { agentId: child, admission: 'spawned_child' })
      t.equal(r.grantId, g.id, `${propagation} lets a spawned child bind under the parent's grant`)
    }
  })

  t.test("a spawned child is checked against its parent's grant, not its own", async (t) => {
    const parent = await insertAgent(s, acme.orgId)
    const child = await insertAgent(s, acme.orgId, { parentAgentId: parent })
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(child, future(), { propagation: 'descendants' }))
    t.equal((await fails(bind(ident.id, { agentId: child, admission: 'spawned_child' }))).reason, 'no_grant',
      'a grant to the child principal is not its parent provenance')
    const g = await createGrant(s, key, ident.id, grantBody(parent, future(), { propagation: 'descendants' }))
    const sessionId = newId('nsess_')
    t.equal((await bind(ident.id, { agentId: child, admission: 'spawned_child', sessionId })).grantId, g.id)
    t.equal((await leaseOf(s.services.db, ident.id))!.agentId, child, 'the lease names the child, a distinct principal')
  })

  t.test('[RULE-15] several live grants: the most restrictive wins', async (t) => {
    const parent = await insertAgent(s, acme.orgId)
    const child = await insertAgent(s, acme.orgId, { parentAgentId: parent })
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(parent, future(), { role: 'manage', propagation: 'descendants' }))
    const strict = await createGrant(s, key, ident.id, grantBody(parent, future(), { role: 'assume', propagation: 'none', maxSessionDurationSecs: 600 }))
    t.equal((await fails(bind(ident.id, { agentId: child, admission: 'spawned_child' }))).reason, 'propagation_none',
      'the restrictive grant wins, so its propagation applies')
    const r = await bind(ident.id, { agentId: parent })
    t.equal(r.grantId, strict.id)
    t.equal(r.leaseExpiresAt, c.iso(600_000), 'and its session cap sets the TTL')
  })

  t.test('[LIM-07] [RULE-13] [FLD-17] lease TTL is min(1 hour, maxSessionDurationSecs); null is 1 hour', async (t) => {
    t.equal(leaseTtlSecs(null), 3600)
    t.equal(leaseTtlSecs(undefined), 3600)
    t.equal(leaseTtlSecs(600), 600)
    t.equal(leaseTtlSecs(3600), 3600)
    t.equal(leaseTtlSecs(7200), 3600)
    for (const [cap, secs] of [[null, 3600], [600, 600], [7200, 3600], [1, 1]] as const) {
      const ident = await createIdentity(s, key)
      await createGrant(s, key, ident.id, grantBody(acme.agentId, future(), { maxSessionDurationSecs: cap }))
      const r = await bind(ident.id)
      t.equal(r.leaseExpiresAt, c.iso(secs * 1000), `cap ${cap} gives ${secs}s`)
      t.equal((await leaseOf(s.services.db, ident.id))!.expiresAt, r.leaseExpiresAt)
    }
  })

  t.test('[ST-04] [LIM-07] the reaper frees only leases whose holder is dead, never a live one past its TTL', async (t) => {
    const ids = await Promise.all([1, 2, 3].map(() => createIdentity(s, key)))
    for (const i of ids) await createGrant(s, key, i.id, grantBody(acme.agentId, c.iso(48 * HOUR), { maxSessionDurationSecs: 60 }))
    const [alive, dead, unsure] = [newId('nsess_'), newId('nsess_'), newId('nsess_')]
    await bind(ids[0].id, { sessionId: alive })
    await bind(ids[1].id, { sessionId: dead })
    await bind(ids[2].id, { sessionId: unsure })
    c.advance(2 * HOUR) // every TTL has passed
    const asked: string[] = []
    const freed = await reapDeadLeases(s.services.db, async (sessionId) => {
      asked.push(sessionId)
      if (sessionId === unsure) throw new Error('liveness unknown')
      return sessionId !== dead
    })
    t.ok(asked.includes(alive) && asked.includes(dead) && asked.includes(unsure))
    t.same(freed.filter((f) => [alive, dead, unsure].includes(f.sessionId)), [{ identityId: ids[1].id, sessionId: dead }])
    t.ok(await isLeased(s.services.db, ids[0].id), 'a live holder keeps its lease past the TTL')
    t.ok(await isLeased(s.services.db, ids[2].id), 'an unknown liveness is treated as alive')
    t.notOk(await isLeased(s.services.db, ids[1].id))
    t.equal((await fails(bind(ids[0].id))).status, 409, 'an expired TTL alone does not let another session in')
    t.ok(await bind(ids[1].id), 'the freed identity binds again')
  })

  t.test('the reaper never frees a lease re-taken by a new session meanwhile', async (t) => {
    const ident = await createIdentity(s, key)
    await createGrant(s, key, ident.id, grantBody(acme.agentId, future()))
    const old = newId('nsess_')
    await bind(ident.id, { sessionId: old })
    const fresh = newId('nsess_')
    const freed = await reapDeadLeases(s.services.db, async (sessionId) => {
      if (sessionId === old) {
        // between the reaper's read and its delete, the holder ends and a new session binds
        await release(s.services.db, old)
        await bind(ident.id, { sessionId: fresh })
        return false
      }
      return true
    })
    t.notOk(freed.some((f) => f.identityId === ident.id))
    t.equal((await leaseOf(s.services.db, ident.id))!.sessionId, fresh)
  })

  t.test('a session binds at most one identity', async (t) => {
    const a = await createIdentity(s, key)
    const b = await createIdentity(s, key)
    for (const i of [a, b]) await createGrant(s, key, i.id, grantBody(acme.agentId, future()))
    const sessionId = newId('nsess_')
    await bind(a.id, { sessionId })
    t.equal((await fails(bind(b.id, { sessionId }))).status, 409)
    t.notOk(await isLeased(s.services.db, b.id))
    t.equal((await fails(acquire(s.services.db, { orgId: acme.orgId, identityId: newId('nident_'), sessionId: newId('nsess_'), agentId: acme.agentId, nowMs: c.now(), ttlSecs: 60 }))).status, 404)
  })

  t.test('[EP-17] [EP-34] [FLD-21] [FLD-22] [FLD-23] [FLD-24] [FLD-25] [FLD-26] the assumable listing', async (t) => {
    const agent = await insertAgent(s, acme.orgId)
    const agentKey = await mintKey(s, key, ['identities:read', 'sessions:write'], agent)
    const a = await createIdentity(s, key, 'assumable-a')
    const b = await createIdentity(s, key, 'assumable-b')
    const expired = await createIdentity(s, key, 'assumable-expired')
    const revoked = await createIdentity(s, key, 'assumable-revoked')
    const notMine = await createIdentity(s, key, 'assumable-not-mine')
    const ro = await s.request('POST', '/v1/identities', { token: key, body: { name: 'assumable-ro', defaultOpenMode: 'readonly' } })
    const value = 'slot-' + newId('ncred_')
    await createCredential(s, key, a.id, { name: 'password', value, originAllowlist: ['example.com', 'other.example.org'] })
    await createCredential(s, key, a.id, { name: 'username', value: 'user@example.com', originAllowlist: ['example.com'] })
    await createGrant(s, key, a.id, grantBody(agent, future(), { role: 'manage', allowedOrigins: ['login.example.com'] }))
    await createGrant(s, key, b.id, grantBody(agent, future()))
    await createGrant(s, key, expired.id, grantBody(agent, c.iso(1000)))
    const rv = await createGrant(s, key, revoked.id, grantBody(agent, future()))
    await s.request('POST', `/v1/identities/${revoked.id}/grants/${rv.id}/revoke`, { token: key })
    await createGrant(s, key, notMine.id, grantBody(acme.agentId, future()))
    await createGrant(s, key, ro.body.id, grantBody(agent, future()))
    c.advance(2000)
    const sessionId = newId('nsess_')
    await bind(b.id, { agentId: agent, sessionId })

    const r = await s.request('GET', '/v1/identities/assumable', { token: agentKey })
    t.equal(r.status, 200)
    t.same(r.body.map((e: any) => e.name), ['assumable-a', 'assumable-b', 'assumable-ro'], 'only live grants of this agent')
    for (const e of r.body) t.same(Object.keys(e).sort(), ['credentialSlots', 'grantRole', 'id', 'leaseState', 'name', 'openModes'])
    const [ea, eb, ero] = r.body
    t.equal(ea.id, a.id)
    t.equal(ea.grantRole, 'manage')
    t.equal(eb.grantRole, 'assume')
    t.equal(ea.leaseState, 'available')
    t.equal(eb.leaseState, 'in_use')
    t.same(ea.openModes, ['exclusive'])
    t.same(ero.openModes, ['readonly'])
    t.same(ea.credentialSlots, [
      { name: 'password', placeholder: '{{credential:password}}', allowedOrigins: ['login.example.com'] },
      { name: 'username', placeholder: '{{credential:username}}', allowedOrigins: ['login.example.com'] },
    ], 'slots carry names, placeholders and the effective origins; never a value or a mask')
    t.notOk(r.text.includes(value))
    t.notOk(r.text.includes('•'), 'no mask')
    t.notOk(r.text.includes(sessionId), 'the holder is never disclosed')
    t.notOk(r.text.includes(agent), 'not even the holding agent')

    const child = await insertAgent(s, acme.orgId, { parentAgentId: agent })
    const childKey = await mintKey(s, key, ['identities:read'], child)
    const none = await createIdentity(s, key, 'assumable-none')
    await createGrant(s, key, none.id, grantBody(agent, future(), { propagation: 'none' }))
    const forChild = await s.request('GET', '/v1/identities/assumable', { token: childKey })
    t.same(forChild.body.map((e: any) => e.name), ['assumable-a', 'assumable-b', 'assumable-ro'],
      "a child sees its parent's grants, minus those with propagation none")
    const forParent = await s.request('GET', '/v1/identities/assumable', { token: agentKey })
    t.ok(forParent.body.some((e: any) => e.name === 'assumable-none'))
    const otherOrg = await s.request('GET', '/v1/identities/assumable', { token: other.apiKey })
    t.same(otherOrg.body, [])
  })
})
