// Reach grants: an agent logged in with the real OAuth device flow (never networks:write)
// calls local_reach_ensure over the real MCP SDK client: refused with the typed 403 until a
// networks:write holder grants it reach, refused again once the grant is revoked. Grants
// are per org, a network grant covers that network only, and grant and revoke are audited.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { deviceLogin } from '../../helpers/device-login.ts'
import { mintKey } from '../../../api-server/auth/keys.ts'
import { ensureByGrant } from '../../../api-server/networks/reach.ts'

t.test('reach grants', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const req = (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  /** one local_reach_ensure call over MCP: the tool result */
  const ensure = async (token: string, args: Record<string, unknown>) => {
    const mcp = await mcpClient(t, s.url, token)
    return (await mcp.callTool({ name: 'local_reach_ensure', arguments: args })) as { isError?: boolean; structuredContent: any }
  }
  const networkNamed = async (name: string) => (await req('GET', '/v1/networks')).body.find((n: any) => n.name === name)

  t.test('[RULE-31] an OAuth agent: refused before a grant, reaches after one, refused again after revoke', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'laptop' })
    t.notOk(agent.scopes.includes('networks:write'), 'an OAuth login never holds networks:write')

    const before = await ensure(agent.accessToken, { target: 'http://localhost:5173/app' })
    t.equal(before.isError, true, 'a tool error, not a protocol error: the agent reads why')
    t.equal(before.structuredContent.status, 403)
    t.equal(before.structuredContent.error.code, 'forbidden')
    t.equal(before.structuredContent.error.reason, 'reach_grant_required')
    t.match(before.structuredContent.error.message, /networks:write or a reach grant for this agent/)
    t.match(before.structuredContent.error.message, 'POST /v1/local-reach/grants', 'says which endpoint grants one')
    t.match(before.structuredContent.error.message, /owner or admin role/, 'and who can')
    t.match(before.structuredContent.error.message, agent.agentId, 'and which agent to name')
    const rest = await req('POST', '/v1/local-reach/ensure', { target: 'localhost:5173' }, agent.accessToken)
    t.equal(rest.status, 403, 'the REST door answers the same')
    t.same(rest.body, { error: before.structuredContent.error })
    t.notOk(await networkNamed('local'), 'nothing was created')

    const granted = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })
    t.equal(granted.status, 201)
    t.match(granted.body, { agentId: agent.agentId, kind: 'seed', networkId: null, state: 'live', createdBy: acme.agentId, revokedAt: null })
    t.match(granted.body.id, /^nrch_/)

    const first = await ensure(agent.accessToken, { target: 'http://localhost:5173/app' })
    t.notOk(first.isError)
    t.equal(first.structuredContent.created, true, 'the grant’s backing network is seeded by the first call')
    t.equal(first.structuredContent.network.name, 'local')
    t.equal(first.structuredContent.declared, 'localhost:5173')
    t.match(first.structuredContent.token.secret, /^njt_/, 'the agent gets the join token for its daemon, once')
    const second = await ensure(agent.accessToken, { target: '127.0.0.1:8080' })
    t.equal(second.structuredContent.created, false)
    t.notOk('token' in second.structuredContent)
    t.same(second.structuredContent.network.declaredHosts, ['localhost:5173', '127.0.0.1:8080'])
    const listed = await req('GET', `/v1/local-reach/grants?agentId=${agent.agentId}`)
    t.equal(listed.status, 200)
    t.same(listed.body.map((g: any) => [g.id, g.networkId, g.state]), [[granted.body.id, first.structuredContent.network.id, 'live']], 'the seed grant is bound to the network it created')
    t.notOk(listed.text.includes(first.structuredContent.token.secret), 'the join secret is never listed')
    const another = await ensure(agent.accessToken, { target: 'localhost:9000', network: 'second' })
    t.equal(another.structuredContent.error.reason, 'reach_not_granted', 'one seed grant seeds one network')

    const revoked = await req('POST', `/v1/local-reach/grants/${granted.body.id}/revoke`)
    t.equal(revoked.status, 204)
    t.equal((await req('POST', `/v1/local-reach/grants/${granted.body.id}/revoke`)).status, 204, 'revoking is idempotent')
    const after = await ensure(agent.accessToken, { target: 'localhost:4000' })
    t.equal(after.isError, true)
    t.equal(after.structuredContent.status, 403)
    t.equal(after.structuredContent.error.reason, 'reach_grant_required')
    t.same((await networkNamed('local')).declaredHosts, ['localhost:5173', '127.0.0.1:8080'], 'nothing declared after the revoke; the network itself stays')
    const state = (await req('GET', `/v1/local-reach/grants?agentId=${agent.agentId}`)).body[0]
    t.equal(state.state, 'revoked')
    t.ok(state.revokedAt)
  })

  t.test('a grant to a specific network lets the agent ensure reach on that network only', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'desktop' })
    const lab = (await req('POST', '/v1/networks', { name: 'lab' })).body.network
    const other = (await req('POST', '/v1/networks', { name: 'other' })).body.network
    const g = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId, networkId: lab.id })
    t.equal(g.status, 201)
    t.match(g.body, { kind: 'network', networkId: lab.id, state: 'live' })

    const implicit = await ensure(agent.accessToken, { target: 'localhost:3000' })
    t.notOk(implicit.isError)
    t.equal(implicit.structuredContent.network.id, lab.id, 'without network: the network granted')
    t.equal(implicit.structuredContent.created, false)
    t.notOk('token' in implicit.structuredContent, 'a granted network’s join token is not handed out')
    const named = await ensure(agent.accessToken, { target: '[::1]:3001', network: 'lab' })
    t.same(named.structuredContent.network.declaredHosts, ['localhost:3000', '[::1]:3001'])

    const denied = await ensure(agent.accessToken, { target: 'localhost:3000', network: 'other' })
    t.equal(denied.structuredContent.status, 403)
    t.equal(denied.structuredContent.error.reason, 'reach_not_granted')
    const byId = await ensure(agent.accessToken, { target: 'localhost:3000', network: other.id })
    const unknown = await ensure(agent.accessToken, { target: 'localhost:3000', network: 'no-such-network' })
    t.same(byId.structuredContent, denied.structuredContent)
    t.same(unknown.structuredContent, denied.structuredContent, 'an ungranted network and an unknown name get the same answer')
    t.same((await networkNamed('other')).declaredHosts, [], 'the ungranted network declares nothing')
    t.notOk(await networkNamed('no-such-network'), 'a network grant creates no network')

    const rest = await req('POST', '/v1/local-reach/ensure', { target: 'localhost:3000', network: 'other' }, agent.accessToken)
    t.equal(rest.status, 403)
    t.equal(rest.body.error.reason, 'reach_not_granted')
  })

  t.test('[INV-04] grants are per org: a foreign org’s grant, agent or network id is a byte-identical 404', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'ci' })
    const net = (await req('POST', '/v1/networks', { name: 'acme-only' })).body.network
    const mine = (await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId, networkId: net.id })).body

    const unknownGrant = await req('POST', '/v1/local-reach/grants/nrch_0000000000000000000000/revoke', undefined, globex.apiKey)
    t.equal(unknownGrant.status, 404)
    const foreignGrant = await req('POST', `/v1/local-reach/grants/${mine.id}/revoke`, undefined, globex.apiKey)
    t.equal(foreignGrant.status, 404)
    t.equal(foreignGrant.text, unknownGrant.text, 'revoking another org’s grant')
    t.equal((await req('GET', `/v1/local-reach/grants?agentId=${agent.agentId}`)).body[0].state, 'live', 'and it stays live')

    const unknownAgent = await req('POST', '/v1/local-reach/grants', { agentId: 'nagt_0000000000000000000000' }, globex.apiKey)
    const foreignAgent = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId }, globex.apiKey)
    t.equal(foreignAgent.status, 404)
    t.equal(foreignAgent.text, unknownAgent.text, 'granting another org’s agent')
    const unknownNet = await req('POST', '/v1/local-reach/grants', { agentId: globex.agentId, networkId: 'nnet_0000000000000000000000' }, globex.apiKey)
    const foreignNet = await req('POST', '/v1/local-reach/grants', { agentId: globex.agentId, networkId: net.id }, globex.apiKey)
    t.equal(foreignNet.status, 404)
    t.equal(foreignNet.text, unknownNet.text, 'granting reach to another org’s network')

    const theirs = await req('GET', '/v1/local-reach/grants', undefined, globex.apiKey)
    t.equal(theirs.status, 200)
    t.same(theirs.body, [], 'another org lists none of them')
    const filtered = await req('GET', `/v1/local-reach/grants?agentId=${agent.agentId}`, undefined, globex.apiKey)
    t.same(filtered.body, [])
  })

  t.test('granting needs networks:write, listing networks:read; a duplicate live grant is a 409', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'tablet' })
    const readOnly = await mintKey(s.testDb.db, { orgId: acme.orgId, name: 'reader', scopes: ['networks:read'], minterScopes: new Set(['networks:read']) })
    const byReader = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId }, readOnly.secret)
    t.equal(byReader.status, 403)
    t.equal(byReader.body.error.message, 'missing required scope: networks:write')
    t.equal((await req('GET', '/v1/local-reach/grants', undefined, readOnly.secret)).status, 200)
    const bySelf = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId }, agent.accessToken)
    t.equal(bySelf.status, 403, 'an OAuth agent cannot grant itself reach')
    t.equal(bySelf.body.error.reason, 'missing_scope')
    t.equal((await req('GET', '/v1/local-reach/grants', undefined, agent.accessToken)).status, 403, 'nor list the grants')

    const first = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })
    t.equal(first.status, 201)
    const dup = await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })
    t.equal(dup.status, 409)
    t.equal(dup.body.error.reason, 'reach_grant_exists')
    t.equal((await req('POST', `/v1/local-reach/grants/${first.body.id}/revoke`)).status, 204)
    t.equal((await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })).status, 201, 'after a revoke it can be granted again')

    const bad = await req('POST', '/v1/local-reach/grants', { agentId: 'someone' })
    t.equal(bad.status, 400)
    t.match(bad.body.error.message, /agentId/)
  })

  t.test('grant and revoke leave audit rows naming who did it', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'audit' })
    const g = (await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })).body
    await req('POST', `/v1/local-reach/grants/${g.id}/revoke`)
    await req('POST', `/v1/local-reach/grants/${g.id}/revoke`)
    const rows = async (action: string) => (await req('GET', `/v1/audit?action=${action}&limit=500`)).body.items.filter((r: any) => r.targetId === g.id)
    const created = await rows('reach_grant.create')
    t.equal(created.length, 1)
    t.match(created[0], { actor: acme.agentId, targetType: 'reach_grant', targetId: g.id })
    const revoked = await rows('reach_grant.revoke')
    t.equal(revoked.length, 1, 'one row: the second revoke changed nothing')
    t.match(revoked[0], { actor: acme.agentId, targetType: 'reach_grant', targetId: g.id })
  })

  t.test('two first calls at once seed one network: one creates it, the other reuses it', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'twins' })
    t.equal((await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })).status, 201)
    const [a, b] = await Promise.all([
      ensure(agent.accessToken, { target: 'localhost:7001', network: 'twins-net' }),
      ensure(agent.accessToken, { target: 'localhost:7002', network: 'twins-net' }),
    ])
    t.notOk(a.isError || b.isError, 'neither call is refused')
    t.same([a.structuredContent.created, b.structuredContent.created].sort(), [false, true])
    t.equal(a.structuredContent.network.id, b.structuredContent.network.id)
    t.same([...(await networkNamed('twins-net')).declaredHosts].sort(), ['localhost:7001', 'localhost:7002'])
  })

  t.test('a call that read the grants before the other call seeded the network still reuses it', async (t) => {
    // the interleaving, forced: call A has read its grants (the seed unused) when call B
    // creates the network and binds the seed; A then finds the name taken
    const agent = await deviceLogin(s, acme, { workspace: 'late-reader' })
    t.equal((await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId })).status, 201)
    const request = { orgId: acme.orgId, agentId: agent.agentId, actor: agent.agentId, network: 'late-net' }
    let other: Promise<unknown> | undefined
    const db = new Proxy(s.services.db, {
      get(target, key) {
        if (key !== 'query') return Reflect.get(target, key)
        return async (text: string, values?: unknown[]) => {
          if (!other && /from networks where org_id/.test(text)) {
            other = ensureByGrant(s.services, { ...request, target: 'localhost:7101' })
            await other
          }
          return target.query(text, values)
        }
      },
    })
    const late = await ensureByGrant({ ...s.services, db }, { ...request, target: 'localhost:7102' })
    t.ok(other, 'the other call ran between the grant read and the network read')
    t.match(await other, { created: true })
    t.equal(late.created, false, 'the late call reuses the network the other seeded')
    t.same([...(await networkNamed('late-net')).declaredHosts].sort(), ['localhost:7101', 'localhost:7102'])
  })

  t.test('deleting a granted network ends its network grants', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'ending' })
    const net = (await req('POST', '/v1/networks', { name: 'short-lived' })).body.network
    const g = (await req('POST', '/v1/local-reach/grants', { agentId: agent.agentId, networkId: net.id })).body
    t.equal((await req('DELETE', `/v1/networks/${net.id}`)).status, 204)
    const after = (await req('GET', `/v1/local-reach/grants?agentId=${agent.agentId}`)).body.find((x: any) => x.id === g.id)
    t.match(after, { kind: 'network', networkId: null, state: 'ended' })
    const refused = await ensure(agent.accessToken, { target: 'localhost:3000' })
    t.equal(refused.structuredContent.error.reason, 'reach_grant_required', 'no live grant is left')
  })
})
