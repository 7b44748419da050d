// The console's setup pages in real Chromium: identities, credentials,
// grants, networks and governance, each honouring the REST door's scopes and role rules,
// every form carrying the CSRF token, every refusal shown in the API's own words, and
// another org's ids answered with the unknown id's page byte for byte.
import t from 'tap'
import type { BrowserContext, Page } from 'playwright-core'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { signIn } from '../../helpers/console.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { createUser } from '../../../api-server/auth/orgs.ts'
import { createPersona } from '../../helpers/personas.ts'

const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-setup'
const CANARY_2 = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-rotated'


const cookieHeader = async (ctx: BrowserContext) => (await ctx.cookies()).map((c) => `${c.name}=${c.value}`).join('; ')

t.test('console setup pages', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  await createUser(s.testDb.db, acme.orgId, 'member@setup.test', 'member password 1', 'member')
  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const page = await signIn(s, ctx, acme.email, acme.password, '/console/identities')
  const rest = (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  const alert = async (p: Page = page) => (await p.textContent('[role=alert]'))!.trim()
  let identityId = ''

  t.test('an identity is created from the list page and opens its own page', async (t) => {
    t.equal(await page.isVisible('#no-identities'), true)
    await page.fill('#identity-name', 'shopper')
    await page.click('#identity-create button[type=submit]')
    await page.waitForURL(/\/console\/identities\/nident_[0-9A-Za-z]+\?done=created$/)
    identityId = new URL(page.url()).pathname.split('/').pop()!
    t.equal(await page.textContent('#identity-name-shown'), 'shopper')
    t.match(await page.textContent('[role=status]'), /Identity created/)
    await page.goto(`${s.url}/console/identities`)
    await page.fill('#identity-name', 'shopper')
    await page.click('#identity-create button[type=submit]')
    const dup = await rest('POST', '/v1/identities', { name: 'shopper' })
    t.equal(dup.status, 409)
    t.equal(await alert(), dup.body.error.message, 'a duplicate name: the API’s words')
    t.equal(await page.inputValue('#identity-name'), 'shopper', 'the name stays typed')
    await page.fill('#identity-name', 'nident_x')
    await page.click('#identity-create button[type=submit]')
    t.equal(await alert(), 'invalid request: name: must not start with nident_')
  })

  t.test('a credential: the secret goes into a password field, is refused back empty, and never shows again', async (t) => {
    await page.goto(`${s.url}/console/identities/${identityId}`)
    t.equal(await page.getAttribute('#credential-value', 'type'), 'password')
    t.equal(await page.getAttribute('#credential-value', 'autocomplete'), 'off')
    // an error: the allowlist is a URL, not a host
    await page.fill('#credential-name', 'login')
    await page.fill('#credential-value', CANARY)
    await page.fill('#credential-hosts', 'https://login.example.com/path')
    await page.click('#credential-create button[type=submit]')
    const same = await rest('POST', `/v1/identities/${identityId}/credentials`, { name: 'login', value: 'x', originAllowlist: ['https://login.example.com/path'] })
    t.equal(same.status, 400)
    t.equal(await alert(), same.body.error.message, 'the API’s words')
    t.equal(await page.inputValue('#credential-value'), '', 'the secret is not put back into the form')
    t.equal(await page.inputValue('#credential-name'), 'login')
    t.notOk((await page.content()).includes(CANARY), 'the error page does not hold the secret')
    // an empty allowlist is the API's own refusal too
    await page.fill('#credential-value', CANARY)
    await page.fill('#credential-hosts', '')
    await page.click('#credential-create button[type=submit]')
    const empty = await rest('POST', `/v1/identities/${identityId}/credentials`, { name: 'login', value: 'x', originAllowlist: [] })
    t.equal(await alert(), empty.body.error.message)
    // saved
    await page.fill('#credential-value', CANARY)
    await page.fill('#credential-hosts', 'login.example.com\nLOGIN.example.com:8443')
    await page.click('#credential-create button[type=submit]')
    await page.waitForURL(/\?done=credential-created#credentials$/)
    const listed = await rest('GET', `/v1/identities/${identityId}/credentials`)
    const cred = listed.body[0]
    t.equal(await page.textContent(`#credential-${cred.id} .mask`), cred.maskedValue, 'only the API’s mask')
    t.same(cred.originAllowlist, ['login.example.com', 'login.example.com:8443'], 'hosts normalised by the API')
    t.notOk((await page.content()).includes(CANARY), 'the page after saving does not hold the secret')
    // rotate
    await page.fill(`#rotate-${cred.id}`, CANARY_2)
    await page.click(`#credential-${cred.id} form.rotate button`)
    await page.waitForURL(/\?done=credential-rotated#credentials$/)
    t.notOk((await page.content()).includes(CANARY_2))
    const after = (await rest('GET', `/v1/identities/${identityId}/credentials`)).body[0]
    t.ok(after.rotatedAt, 'rotated')
    t.equal(await page.textContent(`#credential-${cred.id} .mask`), after.maskedValue)
    // a rotation with an empty secret, forged past the required attribute: the API's words, on that credential's row
    await page.evaluate((id) => document.querySelector<HTMLInputElement>(`#rotate-${id}`)!.removeAttribute('required'), cred.id)
    await page.click(`#credential-${cred.id} form.rotate button`)
    t.equal(await alert(), 'invalid request: value: must not be empty')
  })

  t.test('grants: create for an agent, revoke, and hard delete behind its warning', async (t) => {
    await page.goto(`${s.url}/console/identities/${identityId}#grants`)
    await page.selectOption('#grant-agent', acme.agentId)
    await page.fill('#grant-expires', '2001-01-01T00:00:00Z')
    await page.fill('#grant-reason', 'nightly run')
    await page.click('#grant-create button[type=submit]')
    t.equal(await alert(), 'invalid request: expiresAt: must be in the future')
    t.equal(await page.inputValue('#grant-reason'), 'nightly run', 'what was typed stays')
    await page.fill('#grant-expires', new Date(Date.now() + 86_400_000).toISOString())
    await page.fill('#grant-max', 'ten')
    await page.click('#grant-create button[type=submit]')
    t.match(await alert(), /^invalid request: maxSessionDurationSecs: /, 'the schema’s words')
    await page.fill('#grant-max', '600')
    await page.click('#grant-create button[type=submit]')
    await page.waitForURL(/\?done=grant-created#grants$/)
    const grants = (await rest('GET', `/v1/identities/${identityId}/grants`)).body
    t.equal(grants.length, 1)
    t.same([grants[0].principalAgentId, grants[0].role, grants[0].maxSessionDurationSecs, grants[0].reason, grants[0].propagation],
      [acme.agentId, 'assume', 600, 'nightly run', 'same_conversation'])
    const gid = grants[0].id
    t.equal((await page.textContent(`#grant-${gid} .state`))!.trim(), 'live')
    const assumable = await rest('GET', '/v1/identities/assumable')
    t.same(assumable.body.map((i: any) => i.id), [identityId], 'the agent may now assume it')
    await page.click(`#grant-${gid} form.revoke button`)
    await page.waitForURL(/\?done=grant-revoked#grants$/)
    t.equal((await page.textContent(`#grant-${gid} .state`))!.trim(), 'revoked')
    t.match(await page.textContent(`#grant-${gid} form.delete`), /audit trail/, 'the hard delete says what it erases')
    await page.check(`#grant-${gid} form.delete input[name=confirm]`)
    await page.click(`#grant-${gid} form.delete button`)
    await page.waitForURL(/\?done=grant-deleted#grants$/)
    t.equal(await page.isVisible('#no-grants'), true)
    t.same((await rest('GET', `/v1/identities/${identityId}/grants`)).body, [])
  })

  t.test('another org’s identity or network answers the unknown id’s page, byte for byte', async (t) => {
    const theirs = await createPersona(s, globex.apiKey, { name: 'theirs', value: 'their secret value', originAllowlist: ['x.example.com'], agentId: globex.agentId })
    const theirNet = (await rest('POST', '/v1/networks', { name: 'their-net' }, globex.apiKey)).body.network.id
    const cookie = await cookieHeader(ctx)
    const get = async (path: string) => {
      const r = await fetch(`${s.url}${path}`, { headers: { cookie } })
      return { status: r.status, body: await r.text() }
    }
    for (const [foreign, unknown, kind] of [[theirs.identityId, 'nident_0000000000000000000000', 'identities'], [theirNet, 'nnet_0000000000000000000000', 'networks']]) {
      const a = await get(`/console/${kind}/${foreign}`)
      const b = await get(`/console/${kind}/${unknown}`)
      t.equal(a.status, 404, kind)
      t.equal(a.body, b.body, `${kind}: the same bytes for another org’s id and an unknown one`)
      t.notOk(a.body.includes(foreign))
      const viaRest = await rest('GET', kind === 'identities' ? `/v1/identities/${foreign}/credentials` : `/v1/networks/${foreign}/daemons`)
      t.equal(viaRest.status, 404)
      t.ok(a.body.includes(viaRest.body.error.message), 'the REST door’s words')
    }
    // a write to another org's identity: the same 404, nothing changed
    const csrf = await page.getAttribute('#identity-delete input[name=csrf]', 'value')
    const del = await fetch(`${s.url}/console/identities/${theirs.identityId}/delete`, {
      method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: csrf! }).toString(), redirect: 'manual',
    })
    t.equal(del.status, 404)
    t.equal((await rest('GET', '/v1/identities', undefined, globex.apiKey)).body.length, 1, 'their identity is still there')
  })

  t.test('every setup form needs its form token', async (t) => {
    const cookie = await cookieHeader(ctx)
    const before = (await rest('GET', '/v1/identities')).body.length
    for (const path of ['/console/identities', `/console/identities/${identityId}/credentials`, `/console/identities/${identityId}/grants`, '/console/networks', '/console/governance', `/console/identities/${identityId}/delete`]) {
      const r = await fetch(`${s.url}${path}`, {
        method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=forged&csrf=wrong', redirect: 'manual',
      })
      t.equal(r.status, 403, path)
      t.ok((await r.text()).includes('Invalid form token; reload the page.'))
    }
    t.equal((await rest('GET', '/v1/identities')).body.length, before, 'nothing was created or deleted')
    t.same((await rest('GET', '/v1/networks')).body, [])
  })

  t.test('networks: the join token once, beside the daemon command; hosts; rotate; delete', async (t) => {
    await page.goto(`${s.url}/console/networks`)
    await page.fill('#network-name', 'dev box')
    await page.click('#network-create button[type=submit]')
    const token = (await page.textContent('#network-token'))!.trim()
    t.match(token, /^njt_/)
    t.equal((await page.textContent('#daemon-command'))!.trim(),
      `npx nightjar daemon --network 'dev box' --control-url ${s.url.replace('http:', 'ws:')} --network-token-file ~/.nightjar-token`)
    const net = (await rest('GET', '/v1/networks')).body[0]
    await page.goto(`${s.url}/console/networks`)
    t.notOk((await page.content()).includes(token), 'not on the list again')
    await page.goto(`${s.url}/console/networks/${net.id}`)
    t.notOk((await page.content()).includes(token), 'not on the network’s page')
    t.equal(await page.isVisible('#no-daemons'), true)
    await page.fill('#declared-hosts', 'localhost:3000\nhttp://bad/path')
    await page.click('#network-hosts button[type=submit]')
    const same = await rest('PATCH', `/v1/networks/${net.id}`, { declaredHosts: ['localhost:3000', 'http://bad/path'] })
    t.equal(await alert(), same.body.error.message, 'the API’s words')
    t.equal(await page.inputValue('#declared-hosts'), 'localhost:3000\nhttp://bad/path', 'what was typed stays')
    await page.fill('#declared-hosts', 'localhost:3000, 127.0.0.1')
    await page.click('#network-hosts button[type=submit]')
    await page.waitForURL(/\?done=hosts$/)
    t.same((await rest('GET', '/v1/networks')).body[0].declaredHosts, ['localhost:3000', '127.0.0.1'])
    await page.click('#network-rotate button')
    const rotated = (await page.textContent('#network-token'))!.trim()
    t.match(rotated, /^njt_/)
    t.not(rotated, token)
    await page.goto(`${s.url}/console/networks/${net.id}`)
    t.notOk((await page.content()).includes(rotated), 'the rotated token is shown once too')
    await page.click('#network-delete button')
    await page.waitForURL(/\/console\/networks\?done=deleted$/)
    t.same((await rest('GET', '/v1/networks')).body, [])
  })

  t.test('governance: an owner reads and saves the flags; bad origins read as the API’s words', async (t) => {
    await page.goto(`${s.url}/console/governance`)
    await page.fill('#advisor-origins', 'advisor.example.com')
    await page.click('#governance-form button[type=submit]')
    const same = await rest('PUT', '/v1/governance', { declaredAdvisorOrigins: ['advisor.example.com'] })
    t.equal(same.status, 400)
    t.equal(await alert(), same.body.error.message)
    await page.check('input[name=cloakEnabled]')
    await page.check('input[name=recordSessions]')
    await page.fill('#advisor-origins', 'https://advisor.example.com')
    await page.fill('#proxy-hosts', 'Proxy.Example:3128\nsocks.example')
    await page.click('#governance-form button[type=submit]')
    await page.waitForURL(/\?done=saved$/)
    const g = (await rest('GET', '/v1/governance')).body
    t.same(g.proxyHosts, ['proxy.example:3128', 'socks.example'], '[#39-proxy] the admin allowlists proxy hosts on the page')
    t.equal(await page.inputValue('#proxy-hosts'), 'proxy.example:3128\nsocks.example', 'the page shows the saved list')
    t.equal(g.cloakEnabled, true)
    t.equal(g.recordSessions, true, 'the org records every session by default')
    t.same(g.declaredAdvisorOrigins, ['https://advisor.example.com'])
    t.equal(await page.isChecked('input[name=recordSessions]'), true, 'the page shows the saved default')
  })

  t.test('a member reads what members may read and gets the API’s 403 words for the rest', async (t) => {
    const mctx = await browser.newContext()
    t.teardown(() => mctx.close())
    const m = await signIn(s, mctx, 'member@setup.test', 'member password 1', '/console/identities')
    t.ok(await m.isVisible(`#identity-${identityId}`), 'identities:read lists identities')
    t.equal(await m.isDisabled('#identity-create button[type=submit]'), true)
    t.match(await m.textContent('#identity-create-card .role-note'), /missing required scope: identities:write/)
    // forged past the disabled button: the server refuses in the same words
    await m.evaluate(() => { document.querySelector<HTMLButtonElement>('#identity-create button')!.disabled = false })
    await m.fill('#identity-name', 'member-made')
    const [resp] = await Promise.all([m.waitForResponse((r) => r.request().method() === 'POST'), m.click('#identity-create button[type=submit]')])
    t.equal(resp.status(), 403)
    t.equal(await alert(m), 'missing required scope: identities:write')
    await m.goto(`${s.url}/console/identities/${identityId}`)
    t.equal(await m.isVisible('#credentials'), true, 'credential metadata is readable (identities:read)')
    t.equal((await m.textContent('#grants-refused'))!.trim(), 'missing required scope: identities:write', 'grant_list needs identities:write')
    await m.goto(`${s.url}/console/networks`)
    t.equal(await m.isDisabled('#network-create button[type=submit]'), true)
    const gov = await m.goto(`${s.url}/console/governance`)
    t.equal(gov!.status(), 403)
    t.equal(await alert(m), 'missing required scope: org:admin')
  })

  t.test('no setup secret reached the server log', async (t) => {
    const logs = s.logs()
    for (const secret of [CANARY, CANARY_2, 'their secret value']) t.notOk(logs.includes(secret), 'a credential value is not logged')
    t.notOk(/njt_[0-9A-Za-z]{20,}/.test(logs), 'no join token is logged')
  })
})
