import t from 'tap'
import * as oauth from 'oauth4webapi'
import { startTestServer } from '../../helpers/server.ts'
import { BUILTIN, consoleLogin, DEFAULT_SCOPE, getPage, hiddenFields, launchBrowser, me, postForm, testClock } from './helpers.ts'

const USER_CODE = /^[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/

t.test('device flow (RFC 8628)', async (t) => {
  const clock = testClock()
  // this file starts many device authorizations in a burst; the limit has its own test (abuse-limits.test.ts)
  const s = await startTestServer(t, { now: clock.now, env: { NIGHTJAR_DEVICE_RATE_LIMIT: '1000' } })
  const org = await s.bootstrap()
  const insecure = { [oauth.allowInsecureRequests]: true }
  const issuer = new URL(s.url)
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }))
  const client: oauth.Client = { client_id: BUILTIN }
  const start = async (params: Record<string, string> = {}) =>
    oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), params, insecure))
  /** one poll: the token response, or the OAuth error code */
  const poll = async (deviceCode: string): Promise<oauth.TokenEndpointResponse | string> => {
    const res = await oauth.deviceCodeGrantRequest(as, client, oauth.None(), deviceCode, insecure)
    try {
      return await oauth.processDeviceCodeResponse(as, client, res)
    } catch (e) {
      if (e instanceof oauth.ResponseBodyError) {
        t.equal(e.status, 400)
        return e.error
      }
      throw e
    }
  }
  const browser = await launchBrowser(t)
  const context = await browser.newContext()
  const page = await context.newPage()

  t.test('[EP-05] [FLD-35] [LIM-03] [LIM-04] [LIM-05] the device response', async (t) => {
    const res = await postForm(s, '/oauth/device', { client_id: BUILTIN })
    t.equal(res.status, 200)
    t.equal(res.headers.get('cache-control'), 'no-store')
    t.same(Object.keys(res.body).sort(), ['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete'])
    t.match(res.body.user_code, USER_CODE, 'XXXX-XXXX from the alphabet without 0, O, 1, I')
    t.equal(res.body.verification_uri, `${s.url}/oauth/authorize`)
    t.equal(res.body.verification_uri_complete, `${s.url}/oauth/authorize?user_code=${res.body.user_code}`)
    t.equal(res.body.expires_in, 900)
    t.equal(res.body.interval, 5)
    t.ok(res.body.device_code.length >= 43)
    const seen = new Set<string>()
    for (let i = 0; i < 40; i++) {
      const d = await start()
      t.match(d.user_code, USER_CODE)
      for (const ch of d.user_code.replace('-', '')) seen.add(ch)
    }
    for (const banned of ['0', 'O', '1', 'I']) t.notOk(seen.has(banned), `never ${banned}`)
    const rows = JSON.stringify((await s.testDb.db.query('select * from oauth_device_codes')).rows)
    t.notOk(rows.includes(res.body.device_code), 'device codes are stored only as SHA-256')
  })

  t.test('[ST-07] [ST-08] [ERR-27] [RULE-22] pending → slow_down → approve in the browser → token pair', async (t) => {
    const d = await start({ scope: 'identities:write keys:write', workspace: 'laptop' })
    t.equal(await poll(d.device_code), 'authorization_pending', 'first poll: pending')
    t.equal(await poll(d.device_code), 'slow_down', 'polled again at once')
    clock.advance(6_000)
    t.equal(await poll(d.device_code), 'slow_down', 'the interval grew to 10 s, so 6 s is still too fast')
    clock.advance(16_000)
    t.equal(await poll(d.device_code), 'authorization_pending', 'after the grown interval (15 s): pending again')

    // the human: opens verification_uri, signs in, types the code (lower case, no dash), approves
    await page.goto(d.verification_uri)
    t.match(page.url(), /\/console\/login\?next=/)
    await page.fill('#email', org.email)
    await page.fill('#password', 'correct horse battery')
    await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[type=submit]')])
    await page.fill('#user_code', d.user_code.replace('-', '').toLowerCase())
    await Promise.all([page.waitForURL(/user_code=/), page.click('#continue')])
    t.equal(await page.textContent('#user-code'), d.user_code, 'the page shows the code to compare')
    t.equal(await page.textContent('#client-name'), 'Nightjar CLI')
    t.equal(await page.textContent('#workspace'), 'laptop')
    t.notOk((await page.textContent('#scopes'))!.includes('identities:write'), 'clamped on the page too')
    await page.click('#approve')
    t.match(await page.textContent('#oauth-outcome'), /connected/)

    clock.advance(16_000)
    const tokens = await poll(d.device_code)
    if (typeof tokens === 'string') throw new Error(`expected tokens, got ${tokens}`)
    t.match(tokens.access_token, /^njo_/)
    t.match(tokens.refresh_token!, /^njr_/)
    t.equal(tokens.expires_in, 900)
    t.equal(tokens.scope, DEFAULT_SCOPE, 'device grants are clamped to the default set')
    const who = await me(s, tokens.access_token)
    t.equal(who.status, 200)
    t.equal(who.body.orgId, org.orgId)
    t.equal(who.body.principal.kind, 'oauth')
    const grant = await s.testDb.db.query(`select workspace, client_id, user_id from oauth_grants where id = $1`, [who.body.principal.credentialId])
    t.same(grant.rows[0], { workspace: 'laptop', client_id: BUILTIN, user_id: org.userId })
    clock.advance(16_000)
    t.equal(await poll(d.device_code), 'invalid_grant', 'a device code is redeemed once')
  })

  t.test('deny → access_denied', async (t) => {
    const d = await start()
    t.equal(await poll(d.device_code), 'authorization_pending')
    await page.goto(d.verification_uri_complete!)
    t.equal(await page.textContent('#user-code'), d.user_code, 'verification_uri_complete skips typing')
    await page.click('#deny')
    t.match(await page.textContent('#oauth-outcome'), /not connected/)
    clock.advance(6_000)
    t.equal(await poll(d.device_code), 'access_denied')
    await page.goto(d.verification_uri_complete!)
    t.match(await page.textContent('#oauth-error'), /not valid/, 'a decided code cannot be approved later')
  })

  t.test('after 900 s → expired_token (no real waiting)', async (t) => {
    const d = await start()
    t.equal(await poll(d.device_code), 'authorization_pending')
    clock.pause() // the one-second margin below is the clock's, not the machine's
    t.teardown(() => clock.resume())
    clock.advance(899_000)
    t.equal(await poll(d.device_code), 'authorization_pending', 'still pending at 899 s')
    clock.advance(2_000)
    t.equal(await poll(d.device_code), 'expired_token')
    await page.goto(d.verification_uri_complete!)
    t.match(await page.textContent('#oauth-error'), /expired/, 'the verification page refuses it too')
  })

  t.test('the user code is accepted in any case, with or without the dash', async (t) => {
    const cookie = await consoleLogin(s, org)
    const d = await start()
    const plain = d.user_code.replace('-', '')
    for (const form of [d.user_code, plain, plain.toLowerCase(), d.user_code.toLowerCase(), ` ${plain.slice(0, 4)} ${plain.slice(4)} `]) {
      const r = await getPage(s, `/oauth/authorize?user_code=${encodeURIComponent(form)}`, cookie)
      t.equal(r.status, 200, form)
      t.match(r.text, `id="user-code" style="font-size:18px">${d.user_code}<`)
    }
    for (const bad of ['ABCD-EFG', 'ABCD-EFGHI', '0000-0000', 'IIII-OOOO', '']) {
      const r = await getPage(s, `/oauth/authorize?user_code=${encodeURIComponent(bad)}`, cookie)
      t.ok(r.status === 400 || r.status === 200, bad)
      t.notMatch(r.text, /id="approve"/, `${bad}: no consent`)
    }
  })

  t.test('the verification page needs a signed-in human and a valid form token', async (t) => {
    const d = await start()
    const anon = await getPage(s, `/oauth/authorize?user_code=${d.user_code}`)
    t.equal(anon.status, 302)
    t.equal(anon.headers.get('location'), `/console/login?next=${encodeURIComponent(`/oauth/authorize?user_code=${d.user_code}`)}`)
    const bare = await getPage(s, '/oauth/authorize')
    t.equal(bare.status, 302, 'the bare verification_uri asks for sign-in too')
    const anonPost = await postForm(s, '/oauth/authorize', { user_code: d.user_code, decision: 'approve' })
    t.equal(anonPost.status, 302)
    const cookie = await consoleLogin(s, org)
    const pageRes = await getPage(s, `/oauth/authorize?user_code=${d.user_code}`, cookie)
    const fields = hiddenFields(pageRes.text)
    const forged = await postForm(s, '/oauth/authorize', { user_code: d.user_code, decision: 'approve' }, { cookie })
    t.equal(forged.status, 403)
    t.equal(await poll(d.device_code), 'authorization_pending', 'still pending after a forged approval')
    const ok = await postForm(s, '/oauth/authorize', { ...fields, decision: 'approve' }, { cookie })
    t.equal(ok.status, 200)
    clock.advance(6_000)
    const tokens = await poll(d.device_code)
    t.type(tokens, 'object')
  })

  t.test('device endpoint errors', async (t) => {
    const unknown = await postForm(s, '/oauth/device', { client_id: 'ncli_unknown000000000000000' })
    t.equal(unknown.status, 401)
    t.equal(unknown.body.error, 'invalid_client')
    const missing = await postForm(s, '/oauth/device', {})
    t.equal(missing.status, 400)
    t.equal(missing.body.error, 'invalid_request')
    const target = await postForm(s, '/oauth/device', { client_id: BUILTIN, resource: 'https://elsewhere.example/mcp' })
    t.equal(target.body.error, 'invalid_target')
    const reg = await s.request('POST', '/oauth/register', { body: { redirect_uris: ['http://127.0.0.1/cb'] } })
    const notDevice = await postForm(s, '/oauth/device', { client_id: reg.body.client_id })
    t.equal(notDevice.body.error, 'unauthorized_client', 'a client registered without the device grant')
    const other = await postForm(s, '/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: reg.body.client_id, device_code: (await start()).device_code })
    t.equal(other.body.error, 'invalid_grant', 'a device code belongs to the client that asked for it')
  })
})
