// JavaScript dialogs, through the real API server, the real MCP SDK client
// and REST, against real Chromium and the "public web" namespace. The policy under
// test: a dialog never blocks the page or a tool call — each one is answered the moment
// it opens, with the answer dialog_handle armed (used once) or by default (alert closed,
// confirm and prompt dismissed, beforeunload accepted) — and every dialog is reported
// (dialog_handle's result, console_messages), through the pod's echo guard.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { createPersona } from '../../helpers/personas.ts'
import { shown } from '../../helpers/perceived.ts'

const MASK = '••••••••'

t.test('dialogs', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const page = (p: string) => `http://example.com/${p}`
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })

  t.test('[INV-01] alert, confirm and prompt over MCP: no call waits on a dialog, arm-before answers the next one', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await mcp.callTool({ name, arguments: args })
      if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
      return r.structuredContent as any
    }
    const { id: sessionId } = await call('session_start', {})
    const click = (selector: string) => call('act', { sessionId, verb: 'click', selector })
    const out = async () => shown(await call('perceive', { sessionId }))
    const arm = (args: Record<string, unknown>) => call('dialog_handle', { sessionId, ...args })
    await call('navigate', { sessionId, url: page('dialog-kinds.html') })

    // alert: the click that opens it returns, and the page runs on
    const clicked = await click('#alert')
    t.has(clicked, { ok: true, verb: 'click', url: page('dialog-kinds.html') }, 'the click returns')
    t.match(await out(), /alert returned/, 'the page went on past the alert')

    // confirm, unanswered: dismissed by default
    await click('#confirm')
    t.match(await out(), /confirm=false/)

    // arm-before: accept the next dialog
    const armed = await arm({ action: 'accept' })
    t.same(armed.armed, { action: 'accept' })
    t.same(armed.dialogs.map((d: any) => [d.tabId, d.type, d.message, d.answer, d.answeredBy]), [
      ['tab_1', 'alert', 'Heads up', 'dismissed', 'default'],
      ['tab_1', 'confirm', 'Delete the draft?', 'dismissed', 'default'],
    ], 'the dialogs so far, with how each was answered')
    await click('#confirm')
    t.match(await out(), /confirm=true/, 'the armed answer')
    await click('#confirm')
    t.match(await out(), /confirm=false/, 'an armed answer is used once')

    // prompt: the armed text, the default (null), and accept without text
    await arm({ action: 'accept', promptText: 'Ada Lovelace' })
    await click('#prompt')
    t.match(await out(), /prompt=Ada Lovelace/, 'the armed prompt text')
    await click('#prompt')
    t.match(await out(), /prompt=null/, 'unanswered: dismissed')
    await arm({ action: 'dismiss' })
    await click('#prompt')
    t.match(await out(), /prompt=null/, 'armed dismiss')
    const last = await arm({ action: 'accept' })
    const prompts = last.dialogs.filter((d: any) => d.type === 'prompt')
    t.same(prompts.map((d: any) => [d.message, d.defaultValue, d.answer, d.answeredBy]), [
      ['Your name?', 'anonymous', 'accepted', 'armed'],
      ['Your name?', 'anonymous', 'dismissed', 'default'],
      ['Your name?', 'anonymous', 'dismissed', 'armed'],
    ], 'each prompt reported with its default value')
    t.notOk(JSON.stringify(last).includes('Ada Lovelace'), 'the prompt text is never echoed')
    await click('#prompt')
    t.match(await out(), /prompt=anonymous/, 'accept without a text answers with the prompt’s default, as OK does')

    // an alert while the page loads: navigate returns with the page loaded past it
    const nav = await call('navigate', { sessionId, url: page('dialog-load.html') })
    t.equal(nav.title, 'Load alert', 'navigate returns')
    t.match(await out(), /loaded after the alert/)

    // every dialog is in the console log too, with its answer
    const cons = (await call('console_messages', { sessionId })).messages.filter((m: any) => m.type === 'dialog')
    t.equal(cons.length, 9, 'one console message per dialog')
    t.equal(cons[0].text, 'alert in tab_1: Heads up → dismissed (by default: no answer was armed)')
    t.equal(cons[2].text, 'confirm in tab_1: Delete the draft? → accepted (as armed by dialog_handle)')
    t.match(cons[8].text, /^alert in tab_1: Welcome! → dismissed/)
    await call('session_end', { sessionId })
  })

  t.test('[INV-01] beforeunload: by default the page may leave; an armed dismiss keeps it (tab_close, navigate)', async (t) => {
    const id = (await rest('POST', '/v1/sessions', {})).body.id
    const base = `/v1/sessions/${id}`
    const text = async () => shown((await rest('POST', `${base}/perceive`, {})).body)
    const dirty = async () => {
      await rest('POST', `${base}/navigate`, { url: page('dialog-kinds.html') })
      // the click is the user gesture Chromium wants before it shows a beforeunload dialog
      await rest('POST', `${base}/act`, { verb: 'click', selector: '#dirty' })
      t.match(await text(), /unsaved changes/)
    }

    // navigate away, unanswered: the page may leave
    await dirty()
    const left = await rest('POST', `${base}/navigate`, { url: page('tabs-child.html') })
    t.same([left.status, left.body.title], [200, 'Child'], 'navigate went through')

    // armed dismiss: the navigation is cancelled and the page stays
    await dirty()
    const armed = await rest('POST', `${base}/dialog`, { action: 'dismiss' })
    t.equal(armed.status, 200)
    const stopped = await rest('POST', `${base}/navigate`, { url: page('tabs-child.html') })
    t.ok(stopped.status >= 400, `navigate does not land (${stopped.status})`)
    t.match(await text(), /unsaved changes/, 'the page stayed, its edits kept')

    // tab_close runs beforeunload: armed dismiss keeps the tab open
    await rest('POST', `${base}/dialog`, { action: 'dismiss' })
    const kept = await rest('POST', `${base}/tabs/close`, {})
    t.same([kept.status, kept.body.closed, kept.body.tabs.length, kept.body.activeTabId], [200, false, 1, 'tab_1'], 'closed: false, the tab is still there')
    t.match(await text(), /unsaved changes/)
    // unanswered: the tab closes (and a blank one takes its place)
    const gone = await rest('POST', `${base}/tabs/close`, {})
    t.same([gone.body.closed, gone.body.activeTabId, gone.body.tabs[0].url], [true, 'tab_2', 'about:blank'])

    const history = (await rest('POST', `${base}/dialog`, { action: 'dismiss' })).body.dialogs.filter((d: any) => d.type === 'beforeunload')
    t.same(history.map((d: any) => [d.answer, d.answeredBy]), [
      ['accepted', 'default'],
      ['dismissed', 'armed'],
      ['dismissed', 'armed'],
      ['accepted', 'default'],
    ], 'each beforeunload reported')

    // the REST door refuses a prompt text without accept; the journal keeps no prompt text
    const wrong = await rest('POST', `${base}/dialog`, { action: 'dismiss', promptText: 'x' })
    t.equal(wrong.status, 400)
    await rest('POST', `${base}/dialog`, { action: 'accept', promptText: 'a private answer' })
    const journal = await rest('GET', `${base}/journal?limit=100`)
    t.same(journal.body.items.filter((e: any) => e.op === 'dialog_handle' && e.outcome === 'ok').at(-1).detail, { action: 'accept', promptTextLength: 16 })
    t.notOk(journal.text.includes('a private answer'), 'the prompt text never enters the journal')
    await rest('DELETE', base)
  })

  t.test('[INV-03] dialog messages pass the pod’s echo guard: a filled secret the page shows in a dialog is masked', async (t) => {
    const canary = `Dlg-${randomBytes(6).toString('hex')}`
    const persona = await createPersona(s, acme.apiKey, { name: 'dialog-echo', value: canary, originAllowlist: ['login.example.com'], agentId: acme.agentId })
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const replies: string[] = []
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await mcp.callTool({ name, arguments: args })
      const text = JSON.stringify(r)
      replies.push(text)
      if (r.isError) throw new Error(`${name}: ${text.includes(canary) ? '(reply withheld)' : text}`)
      return r.structuredContent as any
    }
    const { id: sessionId } = await call('session_start', { identity: persona.identityId })
    await call('navigate', { sessionId, url: 'http://login.example.com/echo-dialog.html' })
    await call('credential_fill', { sessionId, credentialName: 'login', selector: '#pw' })
    await call('dialog_handle', { sessionId, action: 'accept' })
    await call('act', { sessionId, verb: 'click', selector: '#go' })
    await call('wait_for', { sessionId, text: 'dialogs=3' })
    const shown = await call('dialog_handle', { sessionId, action: 'dismiss' })
    t.same(shown.dialogs.map((d: any) => [d.type, d.message, d.defaultValue ?? null]), [
      ['alert', `your password is ${MASK}`, null],
      ['confirm', MASK, null],
      ['prompt', 'password?', MASK],
    ], 'messages and the prompt default are masked')
    const cons = await call('console_messages', { sessionId })
    t.equal(cons.messages.filter((m: any) => m.type === 'dialog' && m.text.includes(MASK)).length, 2, 'the console reports, masked')
    t.equal(replies.filter((r) => r.includes(canary)).length, 0, 'no reply carries the secret')
    t.notOk(s.logs().includes(canary), 'nor does the server log')
    await call('session_end', { sessionId })
  })
})
