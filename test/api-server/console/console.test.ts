import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { createUser } from '../../../api-server/auth/orgs.ts'

t.test('console in real Chromium', async (t) => {
  const s = await startTestServer(t)
  const acme = await s.bootstrap('acme')
  const browser = await launchTestBrowser(t)

  t.test('[AUTH-05] the console requires a signed-in human; a wrong password is refused', async (t) => {
    const page = await browser.newPage()
    t.teardown(() => page.close())
    await page.goto(`${s.url}/console/keys`)
    t.match(page.url(), /\/console\/login\?next=%2Fconsole%2Fkeys$/)
    await page.fill('#email', acme.email)
    await page.fill('#password', 'not the password')
    await page.click('button[type=submit]')
    t.equal(await page.textContent('[role=alert]'), 'Email or password is wrong.')
  })

  t.test('[AUTH-08] prefill fills the create-key form, submits nothing, and disables scopes the role cannot grant', async (t) => {
    // a member: the role cannot grant identities:write, org:admin, keys:write …
    const memberId = await createUser(s.testDb.db, acme.orgId, 'member@acme.test', 'member password 1', 'member')
    t.ok(memberId)
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    const before = (await s.testDb.db.query('select count(*)::int as n from api_keys')).rows[0].n
    await page.goto(`${s.url}/console/keys?new&name=ci-bot&scopes=sessions:drive,identities:write&agent=${acme.agentId}`)
    await page.fill('#email', 'member@acme.test')
    await page.fill('#password', 'member password 1')
    await page.click('button[type=submit]')
    await page.waitForURL(/\/console\/keys\?new/)
    t.equal(await page.inputValue('#name'), 'ci-bot')
    t.equal(await page.isChecked('input[value="sessions:drive"]'), true)
    t.equal(await page.isDisabled('input[value="identities:write"]'), true, 'a scope the member cannot grant is disabled')
    t.equal(await page.isChecked('input[value="identities:write"]'), false, 'and not ticked by prefill')
    t.equal(await page.isDisabled('input[value="sessions:drive"]'), false)
    t.equal(await page.inputValue('#agent'), acme.agentId)
    const after = (await s.testDb.db.query('select count(*)::int as n from api_keys')).rows[0].n
    t.equal(after, before, 'prefill created no key')

    await page.click('form[action="/console/keys"] button[type=submit]')
    const secret = (await page.textContent('#new-key-secret'))!.trim()
    t.match(secret, /^njk_[0-9A-Za-z]{43}$/)
    const me = await s.request('GET', '/v1/me', { token: secret })
    t.same(me.body.scopes, ['sessions:drive'])
    await page.reload()
    t.notOk((await page.content()).includes(secret), 'the secret is shown once')
  })

  t.test('[AUTH-07] the console refuses to mint a scope the signed-in role lacks, even if the form is forged', async (t) => {
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await page.goto(`${s.url}/console/login`)
    await page.fill('#email', 'member@acme.test')
    await page.fill('#password', 'member password 1')
    await page.click('button[type=submit]')
    await page.waitForURL(/\/console\/keys$/)
    await page.evaluate(() => {
      const box = document.querySelector<HTMLInputElement>('input[value="org:admin"]')!
      box.disabled = false
      box.checked = true
    })
    await page.fill('#name', 'forged')
    await page.click('form[action="/console/keys"] button[type=submit]')
    t.match(await page.textContent('[role=alert]'), /cannot mint a key with a scope you do not hold: org:admin/)
  })

  t.test('an owner console session mints a key reflecting the role; sign-out ends the session', async (t) => {
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await page.goto(`${s.url}/console/keys?new&name=owner-role&scopes=org:admin,identities:write`)
    await page.fill('#email', acme.email)
    await page.fill('#password', acme.password)
    await page.click('button[type=submit]')
    await page.waitForURL(/\/console\/keys\?new/)
    t.equal(await page.isDisabled('input[value="org:admin"]'), false)
    await page.click('form[action="/console/keys"] button[type=submit]')
    const secret = (await page.textContent('#new-key-secret'))!.trim()
    const me = await s.request('GET', '/v1/me', { token: secret })
    t.same(me.body.scopes, ['identities:write', 'org:admin'])
    const cookies = await ctx.cookies()
    await page.click('header button')
    await page.waitForURL(/\/console\/login$/)
    // the old cookie no longer works even if replayed
    const replay = await fetch(`${s.url}/console/keys`, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') }, redirect: 'manual' })
    t.equal(replay.status, 303)
    const shot = await page.screenshot()
    t.ok(shot.length > 1000, 'the page renders')
  })

  t.test('console pages never leak a password or key into logs', async (t) => {
    t.notOk(s.logs().includes('member password 1'))
    t.notOk(s.logs().includes(acme.password))
    t.notOk(s.logs().includes(acme.apiKey))
  })
})
