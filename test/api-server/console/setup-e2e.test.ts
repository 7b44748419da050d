// Setting up without curl, end to end in real Chromium: a person creates an identity, a
// credential (a canary), a grant and a network in the console, with no REST call; a real
// daemon joins with the token copied from the page. Then the agent starts a session bound
// to that identity and fills the credential into a real login page, which receives exactly
// the secret; it appears in no page the person saw after typing it, no response, no log.
import t from 'tap'
import type { Page, Response } from 'playwright-core'
import { startTestServer, type Reply } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { fnv1a } from '../../helpers/fnv.ts'
import { waitFor } from '../../helpers/wait.ts'
import { runDaemon } from '../../../cli/daemon.ts'
import { shown } from '../../helpers/perceived.ts'

const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-e2e'

t.test('setting up without curl', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'login.example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const page = await ctx.newPage()

  // every body the console sent the person once the secret was typed
  const seen: Promise<string>[] = []
  let recording = false
  page.on('response', (r: Response) => { if (recording) seen.push(r.text().catch(() => '')) })
  const replies: string[] = []
  const agent = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    replies.push(r.text)
    return r
  }

  let identityId = ''
  let token = ''
  let networkId = ''

  t.test('a person sets up an identity, a credential, a grant and a network in the console', async (t) => {
    await page.goto(`${s.url}/console/identities`)
    await page.fill('#email', acme.email)
    await page.fill('#password', acme.password)
    await page.click('button[type=submit]')
    await page.waitForURL((u) => u.pathname === '/console/identities')

    await page.fill('#identity-name', 'shopper')
    await page.click('#identity-create button[type=submit]')
    await page.waitForURL(/\/console\/identities\/nident_[0-9A-Za-z]+\?done=created$/)
    identityId = new URL(page.url()).pathname.split('/').pop()!

    t.equal(await page.getAttribute('#credential-value', 'type'), 'password')
    t.equal(await page.getAttribute('#credential-value', 'autocomplete'), 'off')
    await page.fill('#credential-name', 'login')
    await page.fill('#credential-value', CANARY)
    await page.fill('#credential-hosts', 'login.example.com')
    recording = true
    await page.click('#credential-create button[type=submit]')
    await page.waitForURL(/\?done=credential-created#credentials$/)
    t.match(await page.textContent('#credentials .name'), 'login')
    t.match(await page.textContent('#credentials .allowlist'), 'login.example.com')

    await page.selectOption('#grant-agent', acme.agentId)
    await page.fill('#grant-reason', 'checkout bot')
    await page.click('#grant-create button[type=submit]')
    await page.waitForURL(/\?done=grant-created#grants$/)
    t.match(await page.textContent('#grants .state'), 'live')

    await page.click('#setup-nav a[href="/console/networks"]')
    await page.fill('#network-name', 'dev')
    await page.click('#network-create button[type=submit]')
    await page.waitForSelector('#network-token')
    token = (await page.textContent('#network-token'))!.trim()
    t.match(token, /^njt_[0-9A-Za-z]+$/, 'the join token is on the page answering the create')
    const tunnelUrl = s.url.replace(/^http/, 'ws')
    t.equal((await page.textContent('#daemon-command'))!.trim(),
      `npx nightjar daemon --network dev --control-url ${tunnelUrl} --network-token-file ~/.nightjar-token`, 'beside the exact daemon command')
    networkId = (await page.getAttribute('td a[href^="/console/networks/nnet_"]', 'href'))!.split('/').pop()!

    // a daemon joins with the token from the page; the network's page shows it reachable
    const ac = new AbortController()
    const joined = runDaemon({ network: 'dev', token, tunnelUrl, host: 'dev-laptop', log: () => {}, backoff: { initialMs: 50, maxMs: 200 } }, { signal: ac.signal })
    joined.catch(() => {})
    t.teardown(() => ac.abort())
    await page.goto(`${s.url}/console/networks/${networkId}`)
    await waitFor(async () => {
      await page.reload()
      return (await page.textContent('#daemons'))!.includes('reachable') && !(await page.textContent('#daemons'))!.includes('not reachable')
    }, { what: 'the daemon shown reachable' })
    t.match(await page.textContent('#daemons'), 'dev-laptop')
    ac.abort()
    await joined.catch(() => {})
  })

  t.test('the agent starts a session bound to the persona and fills the credential', async (t) => {
    const assumable = await agent('GET', '/v1/identities/assumable')
    t.same(assumable.body.map((i: any) => [i.id, i.credentialSlots.map((c: any) => c.name)]), [[identityId, ['login']]])
    const started = await agent('POST', '/v1/sessions', { identity: identityId })
    t.equal(started.status, 201, 'session_start bound to the identity')
    const id = started.body.id as string
    t.teardown(() => s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey }))
    t.equal(started.body.identity, identityId, 'the session names the identity it holds')
    await agent('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
    const fill = await agent('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })
    t.equal(fill.status, 200)
    // a fill answers with what it changed: the field, masked
    const { changes: _fillChanges, ...fillResult } = fill.body
    t.same(fillResult, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' })
    t.match(fill.body.changes, /textbox "Password" \[ref=\w+\]: ••••/, 'the change shows the field masked')
    await agent('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#submit' })
    const perceived = await agent('POST', `/v1/sessions/${id}/perceive`, {})
    t.ok(shown(perceived.body).includes(`len=${CANARY.length} fnv=${fnv1a(CANARY)}`), 'the page received exactly the secret')
    t.equal((await agent('DELETE', `/v1/sessions/${id}`)).status < 300, true)
  })

  t.test('the secret and the join token appear nowhere after they were shown', async (t) => {
    await page.goto(`${s.url}/console/networks`)
    await page.goto(`${s.url}/console/networks/${networkId}`)
    await page.goto(`${s.url}/console/identities/${identityId}`)
    recording = false
    const bodies = await Promise.all(seen)
    t.ok(bodies.length >= 8, 'the pages were recorded')
    t.notOk(bodies.some((b) => b.includes(CANARY)), 'no page the person saw after typing it holds the secret')
    const withToken = bodies.filter((b) => b.includes(token))
    t.equal(withToken.length, 1, 'the join token was on exactly one page: the answer to the create')
    t.notOk(replies.some((r) => r.includes(CANARY)), 'no agent response holds the secret')
    t.notOk(s.logs().includes(CANARY), 'the server log does not hold the secret')
    t.notOk(s.logs().includes(token), 'nor the join token')
  })
})
