// Cloak warm resume end to end: an admin logs in through a cloak session on a "public"
// site (app.example.com in a network namespace, behind a bot challenge), captures the
// auth-state as a sealed version, and an agent holding only a grant plus
// sessions:write/drive resumes it — logged in on its first navigation. A canary in the
// cookie and both storages is then searched for everywhere it must not be.
import t, { type Test } from 'tap'
import { mcpClient } from '../../helpers/mcp.ts'
import { createPersona } from '../../helpers/personas.ts'
import { authStateSealContext } from '../../../api-server/authstate/index.ts'
import { APP, cloakWorld, proof } from '../../browser-pod/cloak/helpers.ts'
import { shown } from '../../helpers/perceived.ts'
import { dumpAllTables } from '../../helpers/db.ts'

const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-as'

t.test('cloak capture and warm resume', async (t) => {
  const w = await cloakWorld(t)
  const { s, acme, req } = w
  await w.enableCloak()
  // the admin's persona: the password is the canary, and the login page derives its
  // session cookie, localStorage and sessionStorage tokens from it
  const persona = await createPersona(s, acme.apiKey, { name: 'shopper', value: CANARY, originAllowlist: ['app.example.com'], agentId: acme.agentId })
  // the runtime agent: a grant and sessions:write + sessions:drive, nothing else
  const runtime = await w.agentKey(['sessions:write', 'sessions:drive'])
  await w.grant(persona.identityId, runtime.agentId)
  const cloakStart = { identity: persona.identityId, browserKind: 'cloak', url: `${APP}/` }
  const versions: string[] = []

  const home = async (id: string, token = acme.apiKey) => {
    const nav = await req('POST', `/v1/sessions/${id}/navigate`, { url: `${APP}/app-home.html` }, token)
    if (nav.status !== 200) throw new Error(`navigate ${nav.status} ${nav.text}`)
    return shown((await req('POST', `/v1/sessions/${id}/perceive`, {}, token)).body)
  }
  const signedIn = (t: Test, text: string) => {
    t.match(text, /signed in as shopper/)
    t.ok(text.includes(`cookie ${proof(CANARY)}`), 'the exact session cookie is there')
    t.ok(text.includes(`local ${proof(CANARY)}`), 'the exact localStorage token is there')
    t.ok(text.includes(`session ${proof(CANARY)}`), 'the exact sessionStorage token is there')
  }

  t.test('[RULE-17] [EP-32] an admin clears the challenge, logs in and captures a sealed version', async (t) => {
    const id = await w.open(cloakStart)
    await req('POST', `/v1/sessions/${id}/navigate`, { url: `${APP}/app-login.html` })
    t.match(shown((await req('POST', `/v1/sessions/${id}/perceive`, {})).body), /challenge passed/, 'the cloak browser clears the bot challenge')
    t.equal((await req('POST', `/v1/sessions/${id}/act`, { verb: 'type', selector: '#user', text: 'shopper' })).status, 200)
    t.equal((await req('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })).status, 200)
    t.equal((await req('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#submit' })).status, 200)
    t.equal((await req('POST', `/v1/sessions/${id}/wait-for`, { text: 'signed in as' })).status, 200)
    signedIn(t, shown((await req('POST', `/v1/sessions/${id}/perceive`, {})).body))

    const cap = await req('POST', `/v1/sessions/${id}/authstate`, {})
    t.equal(cap.status, 201)
    t.same(Object.keys(cap.body).sort(), ['createdAt', 'createdBy', 'id', 'identityId', 'origins'], 'ids, who, when and hosts only')
    t.match(cap.body.id, /^niver_[0-9A-Za-z]{22}$/)
    t.equal(cap.body.identityId, persona.identityId)
    t.equal(cap.body.createdBy, acme.agentId)
    t.same(cap.body.origins, ['app.example.com'])
    versions.push(cap.body.id)

    const audit = (await req('GET', '/v1/audit?action=authstate.capture&limit=50')).body.items
    t.equal(audit.length, 1, 'one value-free audit row')
    t.same([audit[0].targetType, audit[0].targetId, audit[0].identityId, audit[0].sessionId], ['authstate', cap.body.id, persona.identityId, id])

    // the sealed row really holds the login (opened here with the server's own sealer)
    const row = (await s.testDb.db.query('select org_id, sealed_state from auth_state_versions where id = $1', [cap.body.id])).rows[0]
    const plain = await s.services.sealer.open(authStateSealContext({ orgId: row.org_id, identityId: persona.identityId, versionId: cap.body.id }), row.sealed_state)
    t.ok(plain.includes(`S.${CANARY}`) && plain.includes(`L.${CANARY}`) && plain.includes(`T.${CANARY}`), 'cookie, localStorage and sessionStorage were captured')
    plain.fill(0)
    await w.end(id)
  })

  t.test('[RULE-18] warm resume: an agent with only a grant lands logged in on its first navigation', async (t) => {
    const id = await w.open({ ...cloakStart, warmResume: true }, runtime.key)
    signedIn(t, await home(id, runtime.key))
    const journal = (await req('GET', `/v1/sessions/${id}/journal`, undefined, acme.apiKey)).body.items.map((e: any) => e.op)
    t.same(journal.slice(0, 2), ['session_start', 'navigate'], 'the state was in place before the first navigation')
    await w.end(id, runtime.key)
  })

  t.test('[RULE-18] fromVersion picks a version; omitted means the latest', async (t) => {
    // a second, logged-out version: a fresh cloak session captured as is
    const fresh = await w.open(cloakStart)
    const cap = await req('POST', `/v1/sessions/${fresh}/authstate`, {})
    t.equal(cap.status, 201)
    t.same(cap.body.origins, [], 'an empty profile covers no host')
    versions.push(cap.body.id)
    await w.end(fresh)

    const latest = await w.open({ ...cloakStart, warmResume: true }, runtime.key)
    t.match(await home(latest, runtime.key), /signed out/, 'the latest version (logged out) was restored')
    await w.end(latest, runtime.key)
    const pinned = await w.open({ ...cloakStart, warmResume: true, fromVersion: versions[0] }, runtime.key)
    signedIn(t, await home(pinned, runtime.key))
    await w.end(pinned, runtime.key)
  })

  t.test('[RULE-14] authstate_list shows ids, who, when and hosts — over REST (capture and list are not agent tools)', async (t) => {
    const list = await req('GET', `/v1/identities/${persona.identityId}/authstates`)
    t.equal(list.status, 200)
    t.same(list.body.map((v: any) => v.id), [...versions].reverse(), 'newest first, and nothing captured on its own')
    for (const v of list.body) t.same(Object.keys(v).sort(), ['createdAt', 'createdBy', 'id', 'identityId', 'origins'])
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const names = (await mcp.listTools()).tools.map((x) => x.name)
    t.notOk(names.includes('authstate_capture') || names.includes('authstate_list'), 'auth-state authoring never passes through an agent’s tools')
  })

  t.test('[RULE-14] canary: the auth-state is nowhere in clear — responses, journals, audit, logs, database', async (t) => {
    const journals: string[] = []
    for (const row of (await s.testDb.db.query('select id from sessions')).rows) {
      journals.push((await s.request('GET', `/v1/sessions/${row.id}/journal`, { token: acme.apiKey })).text)
    }
    const auditAll = (await s.request('GET', '/v1/audit?limit=500', { token: acme.apiKey })).text
    const dump = await dumpAllTables(s.testDb.db)
    const resources = JSON.stringify((await s.plane!.sessions.list()).items)
    for (const needle of [CANARY, `S.${CANARY}`, Buffer.from(CANARY).toString('base64'), Buffer.from(`S.${CANARY}`).toString('base64')]) {
      t.notOk(w.replies.some((r) => r.includes(needle)), 'no response carries it')
      t.notOk(journals.some((j) => j.includes(needle)), 'no journal carries it')
      t.notOk(auditAll.includes(needle), 'no audit row carries it')
      t.notOk(s.logs().includes(needle), 'no log line carries it')
      t.notOk(dump.includes(needle), 'no table holds it in clear or base64')
      t.notOk(resources.includes(needle), 'no BrowserSession resource holds it')
    }
    t.notOk(dump.includes('app_session'), 'not even a cookie name is stored in clear')
    t.ok(dump.length > 1000 && journals.length >= 5, 'the search covered real data')
  })
})
