// No read path around the sealed fill: a secret filled into a password field, then a page
// that moves it everywhere the toolbox reads (a fetch, a saved file, a popup, an alert,
// console.log), and every tool tried on it through the real MCP SDK client and REST, and
// the console's session inspector live and after the end (recorded by the org default, so
// its trail is kept): evaluate and CDP are refused on the persona session, the file that
// carries the secret is not returned, and the canary and its encodings appear in no reply,
// page, journal row, audit row, log line, table or stored trail (checked with includes()).
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { waitFor } from '../../helpers/wait.ts'
import { dumpAllTables } from '../../helpers/db.ts'
import { launchTestBrowser } from '../../helpers/chromium.ts'
import { signIn } from '../../helpers/console.ts'

const CORE = randomBytes(6).toString('hex')
const CANARY = `Tb&x "<${CORE}>" é+/`
const FORMS = [CANARY, CORE, encodeURIComponent(CANARY), JSON.stringify(CANARY).slice(1, -1), Buffer.from(CANARY).toString('base64').replace(/=+$/, '')]
const hits = (text: string) => FORMS.filter((f) => text.includes(f)).length

t.test('[INV-03] the toolbox gives no read path around the sealed fill', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'login.example.com': web.ip }), NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap() // the owner's key holds every scope, sessions:evaluate included
  const persona = await createPersona(s, acme.apiKey, { name: 'toolbox', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })
  const seen: string[] = []
  const mcp = await mcpClient(t, s.url, acme.apiKey)
  /** a tool call; returns [isError, structured result] and keeps the whole reply */
  const tool = async (name: string, args: Record<string, unknown>): Promise<[boolean, any]> => {
    const r = await mcp.callTool({ name, arguments: args })
    seen.push(JSON.stringify(r))
    return [Boolean(r.isError), r.structuredContent]
  }
  const ok = async (name: string, args: Record<string, unknown>) => {
    const [failed, out] = await tool(name, args)
    if (failed) throw new Error(`${name}: ${hits(JSON.stringify(out)) ? '(reply withheld)' : JSON.stringify(out)}`)
    return out
  }
  const rest = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    seen.push(r.text)
    return r
  }

  // recorded by default, so its inspector keeps the network log and console when it ends
  t.equal((await rest('PUT', '/v1/governance', { recordSessions: true })).status, 200)
  const started = await ok('session_start', { identity: persona.identityId })
  const sessionId = started.id as string
  const on = (a: Record<string, unknown> = {}) => ({ sessionId, ...a })
  await ok('navigate', on({ url: 'http://login.example.com/toolbox-echo.html' }))
  t.has(await ok('credential_fill', on({ credentialName: 'login', selector: '#pw' })), { ok: true, credentialName: 'login', fieldKind: 'password', host: 'login.example.com' })
  const filled = await ok('perceive', on())
  t.match(filled.snapshot, /- textbox "Password" \[ref=\w+\]: ••••••••/, 'perceive shows the filled field masked')
  const click = async (id: string, state: string) => {
    await ok('act', on({ verb: 'click', selector: `#${id}` }))
    await ok('wait_for', on({ text: state }))
  }

  await t.test('the network log: the fetch is listed without its query, header or body', async (t) => {
    await click('fetch', 'fetched')
    const log = await ok('network_requests', on())
    const echo = log.requests.find((r: any) => r.method === 'POST' && r.url.endsWith('/echo'))
    t.ok(echo, 'the POST is listed')
    t.equal(echo.url, 'http://login.example.com/echo', 'its URL without the query')
    t.equal(hits(JSON.stringify(log)), 0, 'no form of the secret')
  })

  await t.test('a file the page saved with the secret is listed and never returned', async (t) => {
    await click('download', 'saved')
    const saved = await waitFor(async () => (await ok('file_list', on())).files.find((f: any) => f.name === 'saved.txt' && f.state === 'complete'), { what: 'the saved file' })
    const [failed, refusal] = await tool('file_read', on({ fileId: saved.id }))
    t.ok(failed, 'file_read is refused')
    t.equal(refusal.status, 403)
    t.equal(refusal.error.reason, 'file_carries_secret')
    const viaRest = await rest('GET', `/v1/sessions/${sessionId}/files/${saved.id}`)
    t.equal(viaRest.status, 403, 'REST refuses it too')
  })

  await t.test('a popup carrying it: tab_list and perceive of the popup show it masked', async (t) => {
    await ok('act', on({ verb: 'click', selector: '#popup' }))
    // the popup becomes the active tab (tab_open's rule)
    const tabs = await waitFor(async () => { const l = await ok('tab_list', on()); return l.tabs.length === 2 ? l : undefined }, { what: 'the popup' })
    t.ok(tabs.tabs.some((x: any) => x.url.includes('/page2.html#')), 'its URL is listed')
    await ok('perceive', on())
    await ok('tab_select', on({ tabId: tabs.tabs.find((x: any) => x.url.endsWith('/toolbox-echo.html')).tabId }))
    t.equal(hits(JSON.stringify(tabs)), 0)
  })

  await t.test('an alert and console.log carrying it: dialog_handle and console_messages show it masked', async (t) => {
    await click('alert', 'alerted')
    const dialogs = await ok('dialog_handle', on({ action: 'accept' }))
    t.ok(JSON.stringify(dialogs).includes('pw: '), 'the alert is reported')
    await click('log', 'logged')
    const logged = await ok('console_messages', on())
    t.ok(logged.messages.some((m: any) => m.text.startsWith('pw:')), 'the log line is kept')
    t.equal(hits(JSON.stringify([dialogs, logged])), 0)
  })

  await t.test('evaluate and CDP are refused on the persona session', async (t) => {
    const [failed, refusal] = await tool('evaluate', on({ expression: 'document.getElementById("pw").value' }))
    t.ok(failed)
    t.equal(refusal.status, 403)
    t.equal(refusal.error.reason, 'evaluate_identity_bound')
    const cdp = await rest('GET', `/v1/sessions/${sessionId}/cdp`)
    t.equal(cdp.status, 403, 'no CDP URL for it')
    const [cdpFailed] = await tool('session_cdp', on())
    t.ok(cdpFailed, 'session_cdp refused over MCP')
  })

  const browser = await launchTestBrowser(t)
  const ctx = await browser.newContext()
  t.teardown(() => ctx.close())
  const inspector = await signIn(s, ctx, acme.email, acme.password, `/console/sessions/${sessionId}/inspect`)
  /** the inspector's page and its timeline, as a person's browser gets them */
  const inspect = async () => {
    await inspector.reload()
    await inspector.waitForSelector('#inspector[data-state=ready]')
    const timeline = await ctx.request.get(`${s.url}/console/sessions/${sessionId}/inspect/timeline.json`)
    const text = await timeline.text()
    seen.push(await inspector.content(), await inspector.innerText('body'), text)
    return JSON.parse(text) as { trail: string; events: Array<{ kind: string; title: string; detail: string }> }
  }

  await t.test('the inspector, live: the log line, the dialog and the fetch are on its timeline, masked', async (t) => {
    const live = await inspect()
    t.equal(live.trail, 'live')
    t.ok(live.events.some((e) => e.kind === 'console' && e.detail.startsWith('pw:')), 'the log line is on it')
    t.ok(live.events.some((e) => e.kind === 'dialog'), 'the dialog is on it')
    t.ok(live.events.some((e) => e.kind === 'request' && e.title === 'POST http://login.example.com/echo'), 'the fetch is on it, without its query')
    t.equal(hits(JSON.stringify(live)), 0)
  })

  await t.test('zero hits: replies, journal, audit, server log, every table', async (t) => {
    const journal = await rest('GET', `/v1/sessions/${sessionId}/journal`)
    t.ok(journal.body.items.length > 10, 'the journal holds the calls')
    const audit = await rest('GET', '/v1/audit?limit=500')
    const dump = await dumpAllTables(s.testDb.db)
    t.ok(seen.length > 20, `every reply was kept (${seen.length})`)
    t.equal(hits(seen.join('\n')), 0, 'no reply carries it')
    t.equal(hits(journal.text + audit.text), 0, 'no journal or audit row carries it')
    t.equal(hits(s.logs()), 0, 'no log line carries it')
    t.equal(hits(dump), 0, 'no table carries it')
    t.ok(hits(`x${CANARY}x`) > 0, 'the search finds a planted canary (negative control)')
  })

  await ok('session_end', on())

  await t.test('the inspector after the end: the kept trail, and the object it is kept in, carry no form of it', async (t) => {
    const ended = await inspect()
    t.equal(ended.trail, 'kept', 'the trail was kept when the session ended')
    t.ok(ended.events.some((e) => e.kind === 'console' && e.detail.startsWith('pw:')), 'the log line is on it')
    const kept = await s.services.recordings.store.get(`${acme.orgId}/${sessionId}/trail.json`)
    t.ok(kept, 'the trail object is stored')
    t.equal(hits(kept!.toString('utf8')), 0, 'the stored trail carries no form of the secret')
    t.equal(hits(seen.join('\n')), 0, 'no page or timeline of the inspector does')
  })
})
