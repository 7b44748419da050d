// Leases, spawned children, pod death and restarts.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { createPersona } from '../../helpers/personas.ts'
import { waitFor } from '../../helpers/wait.ts'
import { alive, descendants } from '../../helpers/process.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { scrape } from '../../helpers/prometheus.ts'
import { failedStatus, REASONS } from '../../../operator/controllers/browser-session/status.ts'

t.test('session lifecycle', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const persona = await createPersona(s, acme.apiKey, { name: 'solo', value: 'pw-value-1', originAllowlist: ['example.com'], agentId: acme.agentId })
  const open = (body: Record<string, unknown>) => s.request('POST', '/v1/sessions', { token: acme.apiKey, body })

  t.test('[ST-01] [ST-02] [ERR-16] [LIM-06] [FLD-32] one live session per identity', async (t) => {
    const first = await open({ identity: persona.identityId })
    t.equal(first.status, 201)
    t.equal(first.body.identity, persona.identityId)
    const second = await open({ identity: 'solo' })
    t.equal(second.status, 409)
    t.equal(second.body.error.message, 'identity in use by another session')
    const assumable = await s.request('GET', '/v1/identities/assumable', { token: acme.apiKey })
    const entry = assumable.body.find((e: any) => e.id === persona.identityId)
    t.equal(entry.leaseState, 'in_use')
    t.notOk(JSON.stringify(entry).includes(first.body.id), '[FLD-24] the holder is never disclosed')

    // awaited: an unawaited t.test runs beside the rest of this body, so the session end
    // below could free the lease before this delete reached the database (204, then the
    // third start's 404 — seen once in CI under load)
    await t.test('[ERR-17] deleting a leased identity is refused', async (t) => {
      const del = await s.request('DELETE', `/v1/identities/${persona.identityId}`, { token: acme.apiKey })
      t.equal(del.status, 409)
      t.equal(del.body.error.message, 'identity in use')
    })

    const ended = await s.request('DELETE', `/v1/sessions/${first.body.id}`, { token: acme.apiKey })
    t.equal(ended.body.status, 'ended')
    const third = await open({ identity: persona.identityId })
    t.equal(third.status, 201, '[ST-03] ending the holder frees the lease')
    await s.request('DELETE', `/v1/sessions/${third.body.id}`, { token: acme.apiKey })
  })

  t.test('a start whose bind fails after the lease was taken leaves the identity free', async (t) => {
    const p = await createPersona(s, acme.apiKey, { name: 'audit-fails', value: 'pw-value-4', originAllowlist: ['example.com'], agentId: acme.agentId })
    // the bind's audit row is written after the lease: make exactly that write fail
    const db = s.services.db as unknown as { query: (...args: unknown[]) => Promise<unknown> }
    const query = db.query
    db.query = function (this: unknown, ...args: unknown[]) {
      if (typeof args[0] === 'string' && /insert into audit/i.test(args[0]) && JSON.stringify(args[1] ?? []).includes('identity.bind')) {
        return Promise.reject(new Error('injected: the audit write failed'))
      }
      return query.apply(this, args)
    }
    let failed
    try {
      failed = await open({ identity: p.identityId })
    } finally {
      db.query = query
    }
    t.equal(failed.status, 500)
    const lease = await s.testDb.db.query('select 1 from identity_leases where identity_id = $1', [p.identityId])
    t.equal(lease.rowCount, 0, 'no lease is left behind')
    const rows = await s.testDb.db.query(`select 1 from sessions where identity_id = $1 or (org_id = $2 and status = 'pending')`, [p.identityId, acme.orgId])
    t.equal(rows.rowCount, 0, 'and no session row')
    const next = await open({ identity: p.identityId })
    t.equal(next.status, 201, 'the next start binds at once, without waiting for the reaper')
    await s.request('DELETE', `/v1/sessions/${next.body.id}`, { token: acme.apiKey })
  })

  t.test('[ERR-15] [EP-33] [RULE-15] propagation none blocks a spawned child, never the direct path', async (t) => {
    const p = await createPersona(s, acme.apiKey, { name: 'noprop', value: 'pw-value-2', originAllowlist: ['example.com'], agentId: acme.agentId, grant: { propagation: 'none' } })
    const child = await s.request('POST', '/v1/sessions/spawn', { token: acme.apiKey, body: { childName: 'researcher', identity: p.identityId } })
    t.equal(child.status, 403)
    t.equal(child.body.error.message, "grant propagation='none' blocks a spawned-child bind")
    const direct = await open({ identity: p.identityId })
    t.equal(direct.status, 201)
    await s.request('DELETE', `/v1/sessions/${direct.body.id}`, { token: acme.apiKey })

    const q = await createPersona(s, acme.apiKey, { name: 'prop', value: 'pw-value-3', originAllowlist: ['example.com'], agentId: acme.agentId, grant: { propagation: 'descendants' } })
    const spawned = await s.request('POST', '/v1/sessions/spawn', { token: acme.apiKey, body: { childName: 'researcher', identity: q.identityId } })
    t.equal(spawned.status, 201)
    t.not(spawned.body.openedBy.principalId, acme.agentId, 'a distinct child principal')
    const edge = await s.testDb.db.query('select parent_agent_id, kind from agents where id = $1', [spawned.body.openedBy.principalId])
    t.same(edge.rows[0], { parent_agent_id: acme.agentId, kind: 'child' }, 'with a provenance edge to its parent')
    await s.request('DELETE', `/v1/sessions/${spawned.body.id}`, { token: acme.apiKey })
  })

  t.test('[ST-04] a killed browser pod marks its session failed and frees the lease', async (t) => {
    const r = await open({ identity: persona.identityId })
    t.equal(r.status, 201)
    const pod = s.plane!.pods.processes().find((p) => p.sessionId === r.body.id)!
    t.ok(pod?.pid, 'the session has a pod process')
    process.kill(pod.pid!, 'SIGKILL')
    await waitFor(async () => (await s.request('GET', `/v1/sessions/${r.body.id}`, { token: acme.apiKey })).body.status === 'failed', { what: 'session failed' })
    const lease = await s.testDb.db.query('select 1 from identity_leases where identity_id = $1', [persona.identityId])
    t.equal(lease.rowCount, 0, 'the lease is free')
    const next = await open({ identity: persona.identityId })
    t.equal(next.status, 201)
    const nav = await s.request('POST', `/v1/sessions/${r.body.id}/navigate`, { token: acme.apiKey, body: { url: 'about:blank' } })
    t.equal(nav.status, 409)
    const { failureReason } = (await s.request('GET', `/v1/sessions/${r.body.id}`, { token: acme.apiKey })).body
    t.ok(failureReason, 'the session view names why it failed')
    t.same(nav.body.error, { code: 'conflict', message: `session is failed (${failureReason})`, reason: 'session_not_live' }, 'and so does the next driving call')
    await s.request('DELETE', `/v1/sessions/${next.body.id}`, { token: acme.apiKey })
  })

  t.test('[ISSUE-37] a session lost with its node: counted by reason, and the agent\'s next call, over REST and MCP, is a 409 naming it (session is failed (NodeLost))', async (t) => {
    const r = await open({ identity: persona.identityId })
    t.equal(r.status, 201)
    const id = r.body.id
    const before = await scrape(s.url)
    // what the operator writes when the pod runtime finds the pod lost with its node
    const resource = await s.plane!.sessions.get(id)
    await s.plane!.sessions.patchStatus(id, failedStatus(resource!, REASONS.NodeLost, 'browser pod was lost with its node: node node-a is Ready=Unknown', new Date()))
    await waitFor(async () => (await s.request('GET', `/v1/sessions/${id}`, { token: acme.apiKey })).body.status === 'failed', { what: 'session failed' })
    const view = await s.request('GET', `/v1/sessions/${id}`, { token: acme.apiKey })
    t.equal(view.body.failureReason, 'NodeLost')
    const after = await waitFor(async () => {
      const m = await scrape(s.url)
      return m.value('nightjar_session_failures_total', { reason: 'NodeLost' }) > before.value('nightjar_session_failures_total', { reason: 'NodeLost' }) ? m : undefined
    }, { what: 'the failure counted' })
    t.equal(after.value('nightjar_session_failures_total', { reason: 'NodeLost' }) - before.value('nightjar_session_failures_total', { reason: 'NodeLost' }), 1, 'one failure as NodeLost in nightjar_session_failures_total')

    const nav = await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: 'about:blank' } })
    t.equal(nav.status, 409)
    t.same(nav.body.error, { code: 'conflict', message: 'session is failed (NodeLost)', reason: 'session_not_live' }, 'REST: the reason is in the message, the wire reason unchanged')
    const help = await s.request('POST', `/v1/sessions/${id}/request-human`, { token: acme.apiKey, body: { reason: 'stuck' } })
    t.equal(help.status, 409)
    t.equal(help.body.error.message, 'session is failed (NodeLost)', 'request_human names it too')

    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const drive = await mcp.callTool({ name: 'perceive', arguments: { sessionId: id } })
    t.equal(drive.isError, true)
    t.match((drive.content as any)[0].text, /session is failed \(NodeLost\)/, 'MCP: the tool error names it')

    // a session still pending or ended says only its status
    const ended = await open({})
    await s.request('DELETE', `/v1/sessions/${ended.body.id}`, { token: acme.apiKey })
    const late = await s.request('POST', `/v1/sessions/${ended.body.id}/navigate`, { token: acme.apiKey, body: { url: 'about:blank' } })
    t.same(late.body.error, { code: 'conflict', message: 'session is ended', reason: 'session_not_live' })
  })

  t.test('a live session is never reaped, even past its lease TTL', async (t) => {
    const p = await createPersona(s, acme.apiKey, { name: 'short', value: 'pw-value-4', originAllowlist: ['example.com'], agentId: acme.agentId, grant: { maxSessionDurationSecs: 1 } })
    const r = await open({ identity: p.identityId })
    const lease = (await s.testDb.db.query('select acquired_at, expires_at from identity_leases where identity_id = $1', [p.identityId])).rows[0]
    t.equal(new Date(lease.expires_at).getTime() - new Date(lease.acquired_at).getTime(), 1000, '[LIM-07] TTL = min(1 h, maxSessionDurationSecs)')
    await s.testDb.db.query(`update identity_leases set expires_at = now() - interval '1 hour' where identity_id = $1`, [p.identityId])
    const { reapDeadLeases } = await import('../../../api-server/personas/index.ts')
    await reapDeadLeases(s.testDb.db, async (id) => (await s.testDb.db.query(`select 1 from sessions where id = $1 and status = 'live'`, [id])).rowCount! > 0)
    t.equal((await s.testDb.db.query('select 1 from identity_leases where identity_id = $1', [p.identityId])).rowCount, 1)
    const nav = await s.request('POST', `/v1/sessions/${r.body.id}/navigate`, { token: acme.apiKey, body: { url: 'about:blank' } })
    t.equal(nav.status, 200, 'the session keeps working')
    await s.request('DELETE', `/v1/sessions/${r.body.id}`, { token: acme.apiKey })
  })

  t.test('stopping the server leaves no Chromium behind', async (t) => {
    const r = await open({})
    t.equal(r.status, 201)
    const pods = s.plane!.pods.processes().map((p) => p.pid!).filter(Boolean)
    const before = descendants(pods)
    t.ok(before.length > pods.length, 'pods run Chromium processes')
    await s.close()
    await waitFor(() => before.every((pid) => !alive(pid)), { what: 'every chromium gone', timeoutMs: 20_000 })
    t.pass('no orphan chromium')
  })
})
