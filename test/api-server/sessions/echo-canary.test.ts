// The echo canary: after credential_fill, pages move the secret where Nightjar reads back
// (URL, title, console, errors, path, fragment, dialogs, text in many encodings). Through
// REST and the real MCP SDK client, real Chromium and the "public web" namespace, every read
// path — results, perceive, console, journal, audit, server log, every table — is searched
// for the canary and its encodings. Screenshots are pixels and are not searched. Canary
// values are only checked with includes(), never printed.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer, type TestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { shown } from '../../helpers/perceived.ts'
import { dumpAllTables } from '../../helpers/db.ts'

const MASK = '••••••••'
// A random core that survives every encoding unchanged, wrapped in the characters the
// encoders disagree on: & < > " ' a double space, non-ASCII, + and /.
const CORE = randomBytes(6).toString('hex')
const CANARY = `Cn&ry  "<${CORE}>" é+'x/`

/** The canary and the forms the issue names, computed here, not by the guard. */
const FORMS: Array<[string, string]> = [
  ['raw', CANARY],
  ['its random core', CORE],
  ['whitespace-collapsed', CANARY.replace(/\s+/g, ' ')],
  ['URL-encoded', encodeURIComponent(CANARY)],
  ['form-encoded', new URLSearchParams({ p: CANARY }).toString().slice(2)],
  ['HTML-escaped', CANARY.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')],
  ['JSON-escaped', JSON.stringify(CANARY).slice(1, -1)],
  ['base64', Buffer.from(CANARY).toString('base64').replace(/=+$/, '')],
]

/** Number of canary forms in `text` (a count is safe to print; the forms are not). */
const hits = (text: string) => FORMS.filter(([, f]) => text.includes(f)).length
const masks = (text: string) => text.split(MASK).length - 1

type Driver = {
  name: string
  /** one tool call; returns the structured result, throws on an error */
  call(tool: string, args: Record<string, unknown>): Promise<any>
}

function restDriver(s: TestServer, token: string, seen: string[]): Driver {
  const routes: Record<string, (a: any) => [string, string, unknown?]> = {
    session_start: (a) => ['POST', '/v1/sessions', a],
    session_end: (a) => ['DELETE', `/v1/sessions/${a.sessionId}`],
    navigate: (a) => ['POST', `/v1/sessions/${a.sessionId}/navigate`, { url: a.url }],
    credential_fill: (a) => ['POST', `/v1/sessions/${a.sessionId}/fill-credential`, { credentialName: a.credentialName, selector: a.selector }],
    act: ({ sessionId, ...a }) => ['POST', `/v1/sessions/${sessionId}/act`, a],
    perceive: (a) => ['POST', `/v1/sessions/${a.sessionId}/perceive`, {}],
    console_messages: (a) => ['GET', `/v1/sessions/${a.sessionId}/console`],
    go_back: (a) => ['POST', `/v1/sessions/${a.sessionId}/go-back`, {}],
    reload: (a) => ['POST', `/v1/sessions/${a.sessionId}/reload`, {}],
    wait_for: ({ sessionId, ...a }) => ['POST', `/v1/sessions/${sessionId}/wait-for`, a],
  }
  return {
    name: 'REST',
    async call(tool, args) {
      const [method, path, body] = routes[tool](args)
      const r = await s.request(method, path, { token, body })
      seen.push(r.text)
      if (r.status >= 300) throw new Error(`${tool}: ${r.status} ${hits(r.text) ? '(reply withheld)' : r.text}`)
      return r.body
    },
  }
}

async function mcpDriver(t: Test, s: TestServer, token: string, seen: string[]): Promise<Driver> {
  const mcp = await mcpClient(t, s.url, token)
  return {
    name: 'MCP',
    async call(tool, args) {
      const r = await mcp.callTool({ name: tool, arguments: args })
      const text = JSON.stringify(r)
      seen.push(text)
      if (r.isError) throw new Error(`${tool}: ${hits(text) ? '(reply withheld)' : text}`)
      return r.structuredContent
    },
  }
}

t.test('echo canary: a filled secret the page echoes is never returned', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'login.example.com': web.ip, 'example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases), NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  const persona = await createPersona(s, acme.apiKey, { name: 'echo', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })
  const seen: string[] = [] // every reply, REST and MCP
  const sessions: string[] = []
  const page = (p: string) => `http://login.example.com/${p}`

  /** Runs every echo against one session through one door; returns its session id. */
  const runAll = async (t: Test, d: Driver) => {
    const started = await d.call('session_start', { identity: persona.identityId })
    const id = started.id as string
    sessions.push(id)
    const call = (tool: string, a: Record<string, unknown> = {}) => d.call(tool, { sessionId: id, ...a })
    const fillOn = async (t: Test, p: string) => {
      await call('navigate', { url: page(p) })
      const f = await call('credential_fill', { credentialName: 'login', selector: '#pw' })
      t.has(f, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' }, `${d.name}: filled on ${p}`)
    }
    const readAll = async () => {
      const p = await call('perceive', { full: true })
      const c = await call('console_messages')
      return { p, c, all: JSON.stringify([p, c]) }
    }

    await t.test(`[INV-03] ${d.name}: a GET form puts the secret in the URL (act, wait_for, perceive, go_back, reload)`, async (t) => {
      await fillOn(t, 'echo-get.html')
      const clicked = await call('act', { verb: 'click', selector: '#go' })
      const waited = await call('wait_for', { text: 'submitted' })
      const { p, all } = await readAll()
      t.ok(p.url.includes(`?pw=${MASK}`), 'perceive url: the query value is masked')
      await call('navigate', { url: page('echo-title.html') })
      const back = await call('go_back')
      t.ok(back.url.includes(`?pw=${MASK}`), 'go_back url: masked')
      const again = await call('reload')
      t.ok(again.url.includes(`?pw=${MASK}`), 'reload url: masked')
      t.equal(hits(JSON.stringify([clicked, waited, back, again]) + all), 0, 'no canary form in any result')
    })

    await t.test(`[INV-03] ${d.name}: a script copies the secret into document.title`, async (t) => {
      await fillOn(t, 'echo-title.html')
      const clicked = await call('act', { verb: 'click', selector: '#go' })
      const { p, all } = await readAll()
      t.ok(p.title === `T:${MASK}`, 'the title shows the mask, not the secret')
      const nav = await call('reload') // the title resets with the page; its result too is scanned
      t.equal(hits(JSON.stringify([clicked, nav]) + all), 0, 'no canary form in any result')
    })

    await t.test(`[INV-03] ${d.name}: console.log, console.warn(JSON), console.error(encoded) and an uncaught error`, async (t) => {
      await fillOn(t, 'echo-console.html')
      await call('act', { verb: 'click', selector: '#go' })
      await call('wait_for', { text: 'logged' })
      let c: any
      for (let i = 0; i < 40; i++) {
        c = await call('console_messages')
        if (c.messages.some((m: any) => m.type === 'pageerror' && m.text.startsWith('bad password'))) break
        await new Promise((r) => setTimeout(r, 100))
      }
      const mine = c.messages.filter((m: any) => m.text.includes(MASK))
      t.ok(mine.length >= 5, `the five echoes are there, masked (${mine.length})`)
      t.ok(c.messages.some((m: any) => m.type === 'pageerror' && m.text === `bad password ${MASK}`), 'the page error is masked')
      t.ok(c.messages.some((m: any) => m.text === `{"user":"u","password":"${MASK}"}`), 'JSON-escaped form masked')
      t.equal(hits(JSON.stringify(c) + (await readAll()).all), 0, 'no canary form in any console message or result')
    })

    await t.test(`[INV-03] ${d.name}: history.pushState into the path, location.hash into the fragment, replaceState into the query`, async (t) => {
      await fillOn(t, 'echo-history.html')
      const pushed = await call('act', { verb: 'click', selector: '#go' })
      const p1 = (await readAll()).p
      t.ok(p1.url === `http://login.example.com/echo-history/${MASK}`, 'the pushed path is masked')
      await call('navigate', { url: page('echo-history.html') })
      await call('credential_fill', { credentialName: 'login', selector: '#pw' })
      const hashed = await call('act', { verb: 'click', selector: '#hash' })
      const p2 = (await readAll()).p
      t.ok(p2.url === `http://login.example.com/echo-history.html#${MASK}`, 'the fragment is masked')
      const queried = await call('act', { verb: 'click', selector: '#query' })
      const { p: p3, all } = await readAll()
      t.ok(p3.url === `http://login.example.com/echo-history.html?p=${MASK}`, 'the query is masked')
      t.equal(hits(JSON.stringify([pushed, hashed, queried, p1, p2]) + all), 0, 'no canary form in any result')
    })

    await t.test(`[INV-03] ${d.name}: the page shows it URL-encoded, form-encoded, HTML-escaped, JSON-escaped, base64, raw, in a link and an alt text`, async (t) => {
      await fillOn(t, 'echo-encoded.html')
      await call('act', { verb: 'click', selector: '#go' })
      await call('wait_for', { text: 'raw:' })
      const { p, all } = await readAll()
      t.ok(masks(shown(p)) >= 6, `what perceive shows of the page: every echo masked (${masks(shown(p))})`)
      t.ok(masks(p.snapshot) >= 7, `snapshot: every echo, the link url and the alt text masked (${masks(p.snapshot)})`)
      t.ok(shown(p).includes(`uri: ${MASK}`) && shown(p).includes(`form: pw=${MASK}`) && shown(p).includes(`html: ${MASK}`), 'each encoding in place')
      t.ok(p.snapshot.includes(`/profile?pw=${MASK}`), 'the link url in the snapshot')
      t.equal(hits(all), 0, 'no canary form in the text or the snapshot')
    })

    await t.test(`[INV-03] ${d.name}: alert, confirm and prompt carrying the secret`, async (t) => {
      await fillOn(t, 'echo-dialog.html')
      const clicked = await call('act', { verb: 'click', selector: '#go' })
      await call('wait_for', { text: 'dialogs=3' })
      const { all } = await readAll()
      t.equal(hits(JSON.stringify(clicked) + all), 0, 'no read path carries the dialog texts')
    })

    await d.call('session_end', { sessionId: id })
  }

  await t.test('over REST', async (t) => runAll(t, restDriver(s, acme.apiKey, seen)))
  await t.test('over MCP (the real SDK client)', async (t) => runAll(t, await mcpDriver(t, s, acme.apiKey, seen)))

  t.test('[INV-03] [INV-02] the canary and its encodings are nowhere: replies, journal, audit, server log, database', async (t) => {
    t.equal(sessions.length, 2)
    t.ok(seen.length > 60, `every reply was kept (${seen.length})`)
    const journals: string[] = []
    for (const id of sessions) {
      const j = await s.request('GET', `/v1/sessions/${id}/journal?limit=500`, { token: acme.apiKey })
      t.equal(j.status, 200)
      t.ok(j.body.items.some((e: any) => e.op === 'credential_fill'), 'the journal holds the fills')
      journals.push(j.text)
    }
    const audit = await s.request('GET', '/v1/audit?limit=500', { token: acme.apiKey })
    t.ok(audit.body.items.filter((r: any) => r.action === 'credential.fill').length >= 14, 'the fills are audited')
    const dump = await dumpAllTables(s.testDb.db)
    t.ok(s.logs().length > 1000, 'the server logged (trace level, pods included)')
    t.equal(seen.filter((r) => hits(r) > 0).length, 0, 'no reply carries any form of the canary')
    t.equal(hits(journals.join('\n')), 0, 'no journal entry carries it')
    t.equal(hits(audit.text), 0, 'no audit row carries it')
    t.equal(hits(s.logs()), 0, 'no log line carries it')
    t.equal(hits(dump), 0, 'no table holds it in clear')
  })
})
