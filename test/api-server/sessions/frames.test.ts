// The agent's eyes and hands through the real MCP SDK client: refs from perceive drive the
// element tools, a stale ref is a typed 409, page-changing tools answer with what changed,
// and the sealed fill by ref inside iframes judges the frame's own origin. The canary: a
// cross-origin sign-in frame echoes the secret everywhere, and no form of it is in any
// reply, journal, audit row, log line or recording. Real Chromium, the real API server, the
// "public web" namespace; canary values are only checked with includes().
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { fnv1a } from '../../helpers/fnv.ts'

const MASK = '••••••••'
const CORE = randomBytes(6).toString('hex')
const CANARY = `Fr4me-${CORE}-S3cret`
const FORMS = [CANARY, CORE, encodeURIComponent(CANARY), Buffer.from(CANARY).toString('base64').replace(/=+$/, '')]
/** how many forms of the canary `text` holds (a count is safe to print) */
const hits = (text: string) => FORMS.filter((f) => text.includes(f)).length

const ROWS = ['Alpha', 'Bravo', 'Charlie'].map((n) => `<li>${n} <button onclick="this.parentNode.remove()">Delete</button></li>`).join('')
const ROWS_PAGE = 'data:text/html,' + encodeURIComponent(`<title>Rows</title><h1>Rows</h1><ul>${ROWS}</ul><a href="#top">Top</a>`)
// built by its own script: the markup itself would pass the url limit
const LONG_PAGE = 'data:text/html,' + encodeURIComponent(`<title>Long</title><script>
  let h = ''
  for (let s = 0; s < 40; s++) {
    h += '<section aria-label="Part ' + s + '"><h2>Part ' + s + '</h2><p>Words of part ' + s + ', enough of them to fill a budget quickly.</p>'
    for (let i = 0; i < 6; i++) h += '<a href="#p' + s + '-' + i + '">Link ' + s + '.' + i + '</a> <button>Act ' + s + '.' + i + '</button>'
    h += '</section>'
  }
  document.write(h)
</script>`)

t.test('refs, frames and the sealed fill by ref over MCP', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip, 'evil-example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases), NIGHTJAR_LOG_LEVEL: 'trace' } })
  const acme = await s.bootstrap()
  // the credential may go to example.com and its subdomains (not evil-example.com)
  const open = await createPersona(s, acme.apiKey, { name: 'frames', value: CANARY, originAllowlist: ['example.com'], agentId: acme.agentId })
  // the same, with a grant narrowed to login.example.com
  const narrowed = await createPersona(s, acme.apiKey, {
    name: 'frames-narrowed', value: CANARY, originAllowlist: ['example.com'], agentId: acme.agentId, grant: { allowedOrigins: ['login.example.com'] },
  })
  const mcp = await mcpClient(t, s.url, acme.apiKey)
  const replies: string[] = []
  const sessions: string[] = []
  /** a tool call that must succeed: its structured result */
  const call = async (name: string, args: Record<string, unknown>): Promise<any> => {
    const r = await mcp.callTool({ name, arguments: args })
    const text = JSON.stringify(r)
    replies.push(text)
    if (r.isError) throw new Error(`${name}: ${hits(text) ? '(reply withheld)' : text}`)
    return r.structuredContent
  }
  /** a tool call that must fail: its {status, error} */
  const refused = async (name: string, args: Record<string, unknown>): Promise<{ status: number; error: { code: string; reason?: string; message: string; host?: string } }> => {
    const r = await mcp.callTool({ name, arguments: args })
    replies.push(JSON.stringify(r))
    if (!r.isError) throw new Error(`${name}: expected a refusal`)
    return r.structuredContent as never
  }
  const start = async (identity?: string): Promise<string> => {
    const r = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: identity ? { identity, record: true } : {} })
    if (r.status !== 201) throw new Error(`session start: ${r.status} ${r.text}`)
    sessions.push(r.body.id)
    return r.body.id
  }
  const end = (id: string) => s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey })
  const refOf = (snapshot: string, line: RegExp): string => {
    const ref = /\[ref=((?:f\d+)?e\d+)\]/.exec(snapshot.split('\n').find((l) => line.test(l)) ?? '')?.[1]
    if (!ref) throw new Error(`no line matching ${line}`)
    return ref
  }
  /** the ref of the password field and the Show button inside the frame served by `host` */
  const frameRefs = (snapshot: string, host: string) => {
    const lines = snapshot.split('\n')
    const at = lines.findIndex((l) => l.includes(`heading "Sign in at ${host}"`))
    if (at < 0) throw new Error(`no frame of ${host}`)
    const rest = lines.slice(at, at + 8).join('\n')
    return { pw: refOf(rest, /textbox "Password"/), show: refOf(rest, /button "Show"/), prefix: refOf(rest, /textbox "Password"/).replace(/e\d+$/, '') }
  }

  await t.test('the tools teach refs', async (t) => {
    const { tools } = await mcp.listTools()
    const byName = new Map(tools.map((x) => [x.name, x]))
    t.match(byName.get('perceive')!.description, /\[ref=e12\]/)
    for (const name of ['act', 'credential_fill', 'hover', 'select_option', 'file_upload', 'wait_for', 'fill_form', 'drag']) {
      t.match(byName.get(name)!.description, /ref/, `${name} says it takes a ref`)
      t.ok(JSON.stringify(byName.get(name)!.inputSchema).includes('ref'), `${name} has a ref input`)
    }
    t.equal(tools.length, 38, 'still the 38 tools')
  })

  await t.test('a click by ref on the second of three same-named buttons removes exactly that row; its ref is then stale', async (t) => {
    const id = await start()
    const nav = await call('navigate', { sessionId: id, url: ROWS_PAGE })
    t.match(nav.changes, /^new page: "Rows"/, 'navigate answers with the page and its refs')
    const p = await call('perceive', { sessionId: id })
    const deletes = [...p.snapshot.matchAll(/button "Delete" \[ref=(\w+)\]/g)].map((m) => m[1])
    t.equal(deletes.length, 3, 'each Delete its own ref')
    const clicked = await call('act', { sessionId: id, verb: 'click', ref: deletes[1] })
    t.match(clicked.changes, /^removed: listitem/m, 'the answer says which row went')
    const after = await call('perceive', { sessionId: id })
    t.ok(after.snapshot.includes('Alpha') && after.snapshot.includes('Charlie') && !after.snapshot.includes('Bravo'), 'exactly Bravo’s row is gone')
    const stale = await refused('act', { sessionId: id, verb: 'click', ref: deletes[1] })
    t.equal(stale.status, 409)
    t.equal(stale.error.reason, 'stale_ref')
    t.match(stale.error.message, /perceive again/)
    const both = await refused('act', { sessionId: id, verb: 'click', ref: deletes[0], selector: 'button' })
    t.equal(both.status, 400, 'ref and selector together: 400')
    const neither = await refused('hover', { sessionId: id })
    t.equal(neither.status, 400, 'neither: 400')
    await end(id)
  })

  await t.test('a cursor walk reads the page once; query and ref read parts', async (t) => {
    const id = await start()
    await call('navigate', { sessionId: id, url: LONG_PAGE, changes: false })
    const whole = await call('perceive', { sessionId: id, maxChars: 500_000 })
    const wanted = whole.snapshot.split('\n').map((l: string) => l.trim()).sort()
    const parts: string[] = []
    let r = await call('perceive', { sessionId: id, maxChars: 3000 })
    t.equal(r.truncated, true)
    parts.push(r.snapshot)
    for (let i = 0; r.truncated && i < 100; i++) {
      r = await call('perceive', { sessionId: id, maxChars: 3000, cursor: r.cursor })
      t.ok(r.snapshot.length <= 3000)
      parts.push(r.snapshot)
    }
    t.equal(r.truncated, false, 'the walk ends')
    const got = parts.join('\n').split('\n').filter((l) => !l.startsWith('# ')).map((l) => l.trim()).sort()
    t.same(got, wanted, 'every line of the full snapshot, exactly once')
    const q = await call('perceive', { sessionId: id, query: 'act 17.4' })
    t.match(q.snapshot, /button "Act 17\.4" \[ref=\w+\]/)
    t.match(q.snapshot, /heading "Part 17"/)
    t.notMatch(q.snapshot, /Act 16|Act 18/)
    const sub = await call('perceive', { sessionId: id, ref: refOf(q.snapshot, /region "Part 17"/) })
    t.equal((sub.snapshot.match(/button "Act 17\.\d"/g) ?? []).length, 6)
    t.notMatch(sub.snapshot, /Part 18/)
    const acted = await call('act', { sessionId: id, verb: 'click', ref: refOf(q.snapshot, /button "Act 17\.4"/) })
    t.type(acted.changes, 'string', 'a click answers with its changes')
    await end(id)
  })

  let openSession = ''
  let evilBefore = 0
  await t.test('[RULE-05] credential_fill by ref: a same-origin frame and an allowlisted cross-origin frame receive it; a foreign frame under an allowlisted page gets a 403 and nothing at all', async (t) => {
    const id = (openSession = await start(open.identityId))
    const nav = await call('navigate', { sessionId: id, url: 'http://example.com/frames-top.html' })
    t.match(nav.changes, /heading "Sign in at evil-example\.com"/, 'the frames are in the page, with their content')
    const p = await call('perceive', { sessionId: id })
    const same = frameRefs(p.snapshot, 'example.com')
    const login = frameRefs(p.snapshot, 'login.example.com')
    const evil = frameRefs(p.snapshot, 'evil-example.com')
    t.ok(same.prefix && login.prefix && evil.prefix && new Set([same.prefix, login.prefix, evil.prefix]).size === 3, 'each frame has its own refs')

    const inSame = await call('credential_fill', { sessionId: id, credentialName: 'login', ref: same.pw })
    t.has(inSame, { ok: true, credentialName: 'login', fieldKind: 'password', host: 'example.com' })
    t.match(inSame.changes, /typed=\d+ fnv=/, 'the fill answers with what it changed in the frame')
    const inLogin = await call('credential_fill', { sessionId: id, credentialName: 'login', ref: login.pw })
    t.equal(inLogin.host, 'login.example.com', 'the frame’s own host is reported')
    const digest = `typed=${CANARY.length} fnv=${fnv1a(CANARY)}`
    const read = await call('perceive', { sessionId: id, query: 'typed' })
    t.equal(read.snapshot.split(digest).length - 1, 2, 'both frames received exactly the secret')

    evilBefore = (await web.requests()).filter((r) => r.host.startsWith('evil-example.com')).length
    const denied = await refused('credential_fill', { sessionId: id, credentialName: 'login', ref: evil.pw })
    t.equal(denied.status, 403)
    t.equal(denied.error.reason, 'credential.origin_denied')
    t.equal(denied.error.host, 'evil-example.com', 'judged by the frame’s origin, not the top page’s (example.com)')
    const full = (await call('perceive', { sessionId: id })).snapshot as string
    const evilFrame = full.slice(full.indexOf('heading "Sign in at evil-example.com"'))
    t.match(evilFrame, /typed=0/, 'nothing was typed in the foreign frame')
    const evilAfter = (await web.requests()).filter((r) => r.host.startsWith('evil-example.com'))
    t.equal(evilAfter.length, evilBefore, 'the foreign frame’s server received nothing')
    t.notOk(evilAfter.some((r) => r.url.startsWith('/collect')), 'no keystroke ever reached it')
    const audit = await s.request('GET', '/v1/audit?action=credential.origin_denied&limit=50', { token: acme.apiKey })
    t.ok(audit.body.items.some((r: any) => r.host === 'evil-example.com' && r.sessionId === id), 'the refusal is audited with the frame’s host')
  })

  await t.test('[INV-03] canary: the cross-origin frame echoes the secret into its text, title and URL; every perceive mode and action result stays clean', async (t) => {
    const id = openSession
    const p = await call('perceive', { sessionId: id })
    const login = frameRefs(p.snapshot, 'login.example.com')
    const shown = await call('act', { sessionId: id, verb: 'click', ref: login.show })
    t.ok(shown.changes.includes(`echo: ${MASK}`), 'the echo is in the click’s changes, masked')
    const reads = [await call('perceive', { sessionId: id }), await call('perceive', { sessionId: id, maxChars: 1000 })]
    t.equal(reads[1].truncated, true, 'a small budget: read on by cursor')
    let cursor = reads[1].cursor
    for (let i = 0; cursor && i < 50; i++) {
      const next = await call('perceive', { sessionId: id, maxChars: 1000, cursor })
      reads.push(next)
      cursor = next.truncated ? next.cursor : undefined
    }
    reads.push(await call('perceive', { sessionId: id, query: 'echo' }))
    reads.push(await call('perceive', { sessionId: id, ref: refOf(p.snapshot, /iframe \[ref=\w+\]/) }))
    t.ok(reads.some((r) => r.snapshot.includes(`echo: ${MASK}`)), 'the echo is read, masked')
    const again = frameRefs((await call('perceive', { sessionId: id })).snapshot, 'login.example.com')
    const results = [
      shown,
      await call('hover', { sessionId: id, ref: again.show }),
      await call('act', { sessionId: id, verb: 'click', ref: again.show }),
      await call('credential_fill', { sessionId: id, credentialName: 'login', ref: again.pw }),
      await call('reload', { sessionId: id }),
    ]
    t.equal(hits(JSON.stringify([reads, results])), 0, 'no form of the secret in any perceive mode or action result')
    await end(id)
  })

  await t.test('[RULE-02] a grant’s allowedOrigins narrow by the frame’s origin the same way', async (t) => {
    const id = await start(narrowed.identityId)
    await call('navigate', { sessionId: id, url: 'http://example.com/frames-top.html', changes: false })
    const p = await call('perceive', { sessionId: id })
    const same = frameRefs(p.snapshot, 'example.com')
    const login = frameRefs(p.snapshot, 'login.example.com')
    const denied = await refused('credential_fill', { sessionId: id, credentialName: 'login', ref: same.pw })
    t.equal(denied.status, 403, 'the credential allows example.com, the grant only login.example.com: refused')
    t.equal(denied.error.host, 'example.com')
    t.equal((await call('credential_fill', { sessionId: id, credentialName: 'login', ref: login.pw })).host, 'login.example.com', 'the grant’s origin, in its frame: filled')
    const read = await call('perceive', { sessionId: id, query: 'typed' })
    t.equal(read.snapshot.split(`typed=${CANARY.length} fnv=${fnv1a(CANARY)}`).length - 1, 1, 'only the login frame received it')
    await end(id)
  })

  await t.test('[INV-03] [INV-02] no form of the secret in any reply, journal, audit row, log line or recording', async (t) => {
    t.ok(replies.length > 30, `every reply was kept (${replies.length})`)
    t.equal(replies.filter((r) => hits(r) > 0).length, 0, 'no reply')
    let journals = ''
    let recordings = ''
    for (const id of sessions) {
      journals += (await s.request('GET', `/v1/sessions/${id}/journal?limit=500`, { token: acme.apiKey })).text
      const rec = await s.request('GET', `/v1/sessions/${id}/recording/events`, { token: acme.apiKey })
      if (rec.status === 200) recordings += rec.text
    }
    t.ok(journals.includes('"ref"'), 'the journal keeps the refs acted on')
    t.ok(recordings.length > 1000, 'the recorded sessions were recorded')
    t.equal(hits(journals), 0, 'no journal entry')
    t.equal(hits((await s.request('GET', '/v1/audit?limit=500', { token: acme.apiKey })).text), 0, 'no audit row')
    t.equal(hits(s.logs()), 0, 'no log line')
    t.equal(hits(recordings), 0, 'no recording')
  })
})
