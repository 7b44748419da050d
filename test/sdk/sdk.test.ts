import t from 'tap'
import { readFileSync } from 'node:fs'
import { startTestServer } from '../helpers/server.ts'
import { Nightjar, NightjarError } from '../../sdk/index.ts'
import { renderRoutes } from '../../scripts/gen-sdk-routes.ts'

t.test('the generated route table matches the registry', async (t) => {
  t.equal(readFileSync(new URL('../../sdk/routes.ts', import.meta.url), 'utf8'), renderRoutes(), 'run node --import tsx scripts/gen-sdk-routes.ts')
})

t.test('the SDK against a real server', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const nj = new Nightjar({ baseUrl: s.url, token: acme.apiKey })

  t.test('[RULE-32] sessions.create takes identity and an optional agent defaulting to the credential agent', async (t) => {
    const ident = await nj.identities.create({ name: 'sdk-persona' })
    await s.request('POST', `/v1/identities/${ident.id}/grants`, {
      token: acme.apiKey,
      body: { principalAgentId: acme.agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(), allowedOrigins: [], propagation: 'none', maxSessionDurationSecs: null, reason: 'sdk test' },
    })
    const a = await nj.sessions.create({ identity: ident.id })
    t.equal(a.openedBy.principalId, acme.agentId)
    t.equal(a.identity, ident.id)
    await nj.sessions.end(a.id)
    const b = await nj.sessions.create({ identity: ident.id, agent: '' })
    t.equal(b.openedBy.principalId, acme.agentId, 'an empty agent string gives the same default')
    const nav = await nj.sessions.navigate(b.id, 'data:text/html,<title>sdk</title>')
    t.equal(nav.title, 'sdk')
    await nj.sessions.end(b.id)
  })

  t.test('errors come back typed', async (t) => {
    const err = await nj.sessions.get('nsess_0000000000000000000000').catch((e) => e)
    t.ok(err instanceof NightjarError)
    t.equal(err.status, 404)
    t.equal(err.message, 'unknown session')
  })
})
