// The console's Local reach page: a signed-in owner grants an OAuth agent reach and revokes
// it with the page's own forms (CSRF token included); the agent's local_reach_ensure over
// the real MCP SDK client follows. A forged form and a member are refused.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { deviceLogin } from '../../helpers/device-login.ts'
import { consoleLogin, getPage, hiddenFields, postForm } from '../oauth/helpers.ts'
import { createUser } from '../../../api-server/auth/orgs.ts'

t.test('the Local reach page', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const reachPath = `${s.config.consolePath}/reach`
  const ensure = async (token: string, args: Record<string, unknown>) => {
    const mcp = await mcpClient(t, s.url, token)
    return (await mcp.callTool({ name: 'local_reach_ensure', arguments: args })) as { isError?: boolean; structuredContent: any }
  }
  /** the row of a grant on the page: its state cell */
  const stateOn = (html: string, grantId: string) => html.match(new RegExp(`<tr id="grant-${grantId}">[\\s\\S]*?<td class="state">([a-z]+)</td>`))?.[1]

  t.test('an owner grants an OAuth agent reach and revokes it with the page’s forms', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'console-laptop' })
    const cookie = await consoleLogin(s, acme)
    const anonymous = await getPage(s, reachPath)
    t.equal(anonymous.status, 303, 'signed-out visitors are sent to sign in')
    t.match(anonymous.headers.get('location'), /\/console\/login\?next=/)

    const page = await getPage(s, reachPath, cookie)
    t.equal(page.status, 200)
    t.match(page.text, `<option value="${agent.agentId}"`, 'the OAuth agent is offered')
    t.match(page.text, '(let the agent create its own network)')

    const forged = await postForm(s, reachPath, { agentId: agent.agentId, networkId: '' }, { cookie })
    t.equal(forged.status, 403, 'a post without the form token is refused')
    t.same((await s.request('GET', '/v1/local-reach/grants', { token: acme.apiKey })).body, [], 'and granted nothing')

    const granted = await postForm(s, reachPath, { ...hiddenFields(page.text), agentId: agent.agentId, networkId: '' }, { cookie })
    t.equal(granted.status, 303)
    const grants = (await s.request('GET', '/v1/local-reach/grants', { token: acme.apiKey })).body
    t.equal(grants.length, 1)
    t.match(grants[0], { agentId: agent.agentId, kind: 'seed', state: 'live', createdBy: acme.userId })
    const shown = await getPage(s, granted.headers.get('location')!, cookie)
    t.match(shown.text, 'Reach granted.')
    t.equal(stateOn(shown.text, grants[0].id), 'live')

    const reached = await ensure(agent.accessToken, { target: 'localhost:8000' })
    t.notOk(reached.isError, 'the agent reaches with the console’s grant')
    t.equal(reached.structuredContent.declared, 'localhost:8000')

    const revokeAction = `${reachPath}/${grants[0].id}/revoke`
    t.match(shown.text, `action="${revokeAction}"`, 'a live grant has a revoke button')
    t.equal((await postForm(s, revokeAction, {}, { cookie })).status, 403, 'a revoke without the form token is refused')
    const revoked = await postForm(s, revokeAction, { csrf: hiddenFields(shown.text).csrf }, { cookie })
    t.equal(revoked.status, 303)
    const after = await getPage(s, revoked.headers.get('location')!, cookie)
    t.match(after.text, 'Reach grant revoked.')
    t.equal(stateOn(after.text, grants[0].id), 'revoked')
    t.notMatch(after.text, `action="${revokeAction}"`, 'no revoke button on a revoked grant')
    const refused = await ensure(agent.accessToken, { target: 'localhost:8000' })
    t.equal(refused.structuredContent.error.reason, 'reach_grant_required')

    const audit = (await s.request('GET', '/v1/audit?limit=500', { token: acme.apiKey })).body.items.filter((r: any) => r.targetId === grants[0].id)
    t.same(audit.map((r: any) => [r.action, r.actor]), [['reach_grant.create', acme.userId], ['reach_grant.revoke', acme.userId]], 'audited with the human as actor')
  })

  t.test('a member sees the grants but cannot grant reach', async (t) => {
    const agent = await deviceLogin(s, acme, { workspace: 'member-watch' })
    await createUser(s.testDb.db, acme.orgId, 'member@reach.test', 'member password 1', 'member')
    const cookie = await consoleLogin(s, { email: 'member@reach.test', password: 'member password 1' })
    const page = await getPage(s, reachPath, cookie)
    t.equal(page.status, 200)
    t.match(page.text, 'cannot grant reach: it needs <code>networks:write</code>')
    const before = (await s.request('GET', '/v1/local-reach/grants', { token: acme.apiKey })).body.length
    const r = await postForm(s, reachPath, { ...hiddenFields(page.text), agentId: agent.agentId, networkId: '' }, { cookie })
    t.equal(r.status, 403)
    t.match(r.text, 'missing required scope: networks:write')
    t.equal((await s.request('GET', '/v1/local-reach/grants', { token: acme.apiKey })).body.length, before, 'nothing granted')
  })
})
