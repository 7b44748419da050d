// Tabs and popups, through the real API server, the real MCP SDK client and
// REST, against real Chromium and the "public web" namespace: tab_list, tab_open,
// tab_select, tab_close, popups a page opens (target=_blank, window.open), go_forward
// and resize. The active tab is what every other tool drives, so each step is checked
// with perceive or a screenshot, the way an agent sees it.
import t from 'tap'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { mcpClient } from '../../helpers/mcp.ts'
import { waitFor } from '../../helpers/wait.ts'
import { shown } from '../../helpers/perceived.ts'

// resize and go_forward are REST and SDK only (request_human and credential_request took
// their places among the 38)
const PAGE_TOOLS = ['tab_list', 'tab_open', 'tab_select', 'tab_close', 'dialog_handle']

/** A PNG's size, from its IHDR chunk. */
function pngSize(base64: string): { width: number; height: number } {
  const b = Buffer.from(base64, 'base64')
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) }
}

t.test('tabs and popups', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const page = (p: string) => `http://example.com/${p}`
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })

  t.test('[INV-01] two tabs and a popup, over MCP: new tabs become active, the active tab is what tools drive', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await mcp.callTool({ name, arguments: args })
      if (r.isError) throw new Error(`${name}: ${(r.content as any)[0].text}`)
      return r.structuredContent as any
    }
    const { id } = await call('session_start', {})
    const sessionId = id
    const tabs = () => call('tab_list', { sessionId })
    const perceive = () => call('perceive', { sessionId })

    await call('navigate', { sessionId, url: page('tabs-opener.html') })
    t.same(await tabs(), { tabs: [{ tabId: 'tab_1', url: page('tabs-opener.html'), title: 'Opener', active: true }], activeTabId: 'tab_1' }, 'one tab, active')

    // a target=_blank link: a second tab, which becomes the active one
    await call('act', { sessionId, verb: 'click', selector: '#blank' })
    const two = await waitFor(async () => {
      const l = await tabs()
      return l.tabs.length === 2 && l.tabs[1].title === 'Child' ? l : null
    }, { what: 'the target=_blank tab' })
    t.same(two.tabs.map((x: any) => [x.tabId, x.url, x.active]), [['tab_1', page('tabs-opener.html'), false], ['tab_2', page('tabs-child.html'), true]])
    t.equal(two.activeTabId, 'tab_2')
    t.match(shown(await perceive()), /child ready/, 'perceive reads the new tab')

    // back to the first tab
    const selected = await call('tab_select', { sessionId, tabId: 'tab_1' })
    t.equal(selected.activeTabId, 'tab_1')
    t.same(selected.tabs.map((x: any) => x.active), [true, false])
    t.equal((await perceive()).title, 'Opener', 'perceive reads the selected tab')

    // window.open: the popup is a third tab, active, and can talk to its opener
    await call('act', { sessionId, verb: 'click', selector: '#popup' })
    const three = await waitFor(async () => {
      const l = await tabs()
      return l.tabs.length === 3 && l.tabs[2].title === 'Popup' ? l : null
    }, { what: 'the popup' })
    t.same(three.tabs.map((x: any) => x.tabId), ['tab_1', 'tab_2', 'tab_3'])
    t.equal(three.activeTabId, 'tab_3', 'the popup is the active tab')
    t.match(shown(await perceive()), /popup ready/)

    // the popup closes itself (as an OAuth window does): the tab active before it takes over
    await call('act', { sessionId, verb: 'click', selector: '#done' })
    const back = await waitFor(async () => {
      const l = await tabs()
      return l.tabs.length === 2 ? l : null
    }, { what: 'the popup to close' })
    t.equal(back.activeTabId, 'tab_1', 'its opener, active before it, is active again')
    t.match(shown(await perceive()), /popup said done/, 'the popup wrote into its opener')

    // tab_close without a tabId closes the active tab
    const closed = await call('tab_close', { sessionId })
    t.same([closed.tabId, closed.closed, closed.activeTabId], ['tab_1', true, 'tab_2'])
    t.same(closed.tabs.map((x: any) => x.tabId), ['tab_2'])
    t.equal((await perceive()).title, 'Child')

    // closing the last tab leaves a blank one: the session stays usable
    const last = await call('tab_close', { sessionId, tabId: 'tab_2' })
    t.same(last, { tabId: 'tab_2', closed: true, tabs: [{ tabId: 'tab_4', url: 'about:blank', title: '', active: true }], activeTabId: 'tab_4' }, 'a fresh blank tab, with a new id')
    const nav = await call('navigate', { sessionId, url: page('tabs-child.html') })
    t.equal(nav.title, 'Child', 'navigate works in it')

    // an id that is not (or no longer) a tab
    const gone = await mcp.callTool({ name: 'tab_select', arguments: { sessionId, tabId: 'tab_1' } })
    t.equal(gone.isError, true)
    t.match((gone.content as any)[0].text, /unknown tab/)
    const bad = await mcp.callTool({ name: 'tab_close', arguments: { sessionId, tabId: 'first' } })
    t.equal(bad.isError, true, 'a tab id is tab_<n>')
    await call('session_end', { sessionId })
  })

  t.test('[INV-01] tab_open, tab_select, tab_close, go_back and go_forward over REST, with the journal', async (t) => {
    const started = await rest('POST', '/v1/sessions', {})
    t.equal(started.status, 201)
    const id = started.body.id
    const base = `/v1/sessions/${id}`
    await rest('POST', `${base}/navigate`, { url: page('tabs-opener.html') })

    const opened = await rest('POST', `${base}/tabs/open`, { url: page('tabs-child.html?q=private') })
    t.equal(opened.status, 200)
    t.same([opened.body.tabId, opened.body.status, opened.body.activeTabId], ['tab_2', 200, 'tab_2'])
    t.same(opened.body.tabs.map((x: any) => [x.tabId, x.title]), [['tab_1', 'Opener'], ['tab_2', 'Child']])
    const listed = await rest('GET', `${base}/tabs`)
    t.equal(listed.status, 200, 'tab_list is a GET')
    t.same(listed.body, { tabs: opened.body.tabs, activeTabId: 'tab_2' })

    const blank = await rest('POST', `${base}/tabs/open`, {})
    t.same([blank.body.tabId, blank.body.status, blank.body.tabs[2].url], ['tab_3', null, 'about:blank'], 'no url: a blank tab, no status')

    // history in the selected tab: forward after back
    const sel = await rest('POST', `${base}/tabs/select`, { tabId: 'tab_1' })
    t.equal(sel.body.activeTabId, 'tab_1')
    await rest('POST', `${base}/act`, { verb: 'click', selector: '#same' })
    await waitFor(async () => (await rest('GET', `${base}/tabs`)).body.tabs[0].title === 'Child', { what: 'the link in tab_1' })
    const backed = await rest('POST', `${base}/go-back`, {})
    t.same([backed.body.url, backed.body.title], [page('tabs-opener.html'), 'Opener'])
    const forward = await rest('POST', `${base}/go-forward`, {})
    t.equal(forward.status, 200)
    t.has(forward.body, { url: page('tabs-child.html'), title: 'Child', status: 200 }, 'go_forward returns where it landed')
    const noMore = await rest('POST', `${base}/go-forward`, {})
    t.same([noMore.status, noMore.body.url], [200, page('tabs-child.html')], 'nothing ahead: it stays')
    t.equal((await rest('GET', `${base}/tabs`)).body.tabs[1].url, page('tabs-child.html?q=private'), 'the other tabs did not move')

    const closed = await rest('POST', `${base}/tabs/close`, { tabId: 'tab_3' })
    t.same([closed.status, closed.body.closed, closed.body.activeTabId], [200, true, 'tab_1'], 'closing another tab keeps the active one')
    const unknown = await rest('POST', `${base}/tabs/close`, { tabId: 'tab_3' })
    t.equal(unknown.status, 404)
    t.same(unknown.body.error, { code: 'not_found', message: 'unknown tab' })
    const malformed = await rest('POST', `${base}/tabs/select`, { tabId: 'x' })
    t.equal(malformed.status, 400)

    const journal = await rest('GET', `${base}/journal`)
    const rows = journal.body.items.map((e: any) => [e.op, e.detail])
    t.same(rows.filter((r: any) => r[0].startsWith('tab_') && r[0] !== 'tab_list'), [
      ['tab_open', { url: page('tabs-child.html') }],
      ['tab_open', {}],
      ['tab_select', { tabId: 'tab_1' }],
      ['tab_close', { tabId: 'tab_3' }],
      ['tab_close', { tabId: 'tab_3' }],
    ], 'the journal keeps tab ids and urls without their query')
    t.ok(rows.some((r: any) => r[0] === 'go_forward'))
    t.notOk(journal.text.includes('private'), 'no query in the journal')
    await rest('DELETE', base)
  })

  t.test('resize applies to every tab, open now and later; tab_open stops at the tab limit', async (t) => {
    const id = (await rest('POST', '/v1/sessions', { viewport: { width: 1024, height: 700 } })).body.id
    const base = `/v1/sessions/${id}`
    const shot = async () => pngSize((await rest('POST', `${base}/screenshot`, {})).body.png)
    t.same(await shot(), { width: 1024, height: 700 }, 'the session’s viewport')
    await rest('POST', `${base}/tabs/open`, {})
    const resized = await rest('POST', `${base}/resize`, { width: 800, height: 600 })
    t.same(resized.body, { ok: true, url: 'about:blank', viewport: { width: 800, height: 600 } })
    t.same(await shot(), { width: 800, height: 600 }, 'the active tab')
    await rest('POST', `${base}/tabs/select`, { tabId: 'tab_1' })
    t.same(await shot(), { width: 800, height: 600 }, 'the other open tab')
    await rest('POST', `${base}/tabs/open`, { url: page('tabs-child.html') })
    t.same(await shot(), { width: 800, height: 600 }, 'a tab opened later')
    const tooSmall = await rest('POST', `${base}/resize`, { width: 50, height: 600 })
    t.equal(tooSmall.status, 400, 'the viewport bounds of session_start')

    let open = 3
    while (open < 20) {
      const r = await rest('POST', `${base}/tabs/open`, {})
      t.equal(r.status, 200)
      open = r.body.tabs.length
    }
    const refused = await rest('POST', `${base}/tabs/open`, {})
    t.equal(refused.status, 409)
    t.same(refused.body.error, { code: 'conflict', reason: 'tab_limit', message: 'at most 20 tabs can be open; close one first' })
    t.equal((await rest('GET', `${base}/tabs`)).body.tabs.length, 20, 'nothing was opened')
    await rest('DELETE', base)
  })

  t.test('the page tools: annotations, schemas and REST bindings', async (t) => {
    const mcp = await mcpClient(t, s.url, acme.apiKey)
    const { tools } = await mcp.listTools()
    for (const name of PAGE_TOOLS) {
      const tool = tools.find((x) => x.name === name)
      t.ok(tool, `${name} is a tool`)
      const a = (tool?.annotations ?? {}) as Record<string, unknown>
      t.same(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].filter((k) => typeof a[k] !== 'boolean'), [], `${name} has every hint`)
      t.ok(tool?.outputSchema, `${name} declares its output`)
      t.equal((tool?.inputSchema as any).additionalProperties, false, `${name} has a closed input`)
    }
    t.notOk(tools.some((x) => x.name === 'resize'), 'resize is not an MCP tool (REST keeps it)')
    const byName = Object.fromEntries(tools.map((x) => [x.name, x.annotations as Record<string, unknown>]))
    t.equal(byName.tab_list.readOnlyHint, true, 'tab_list only reads')
    t.equal(byName.tab_close.destructiveHint, true, 'tab_close destroys a tab')
    t.match(tools.find((x) => x.name === 'tab_list')!.description, /become the active tab/, 'the popup policy is in the description')
    t.match(tools.find((x) => x.name === 'dialog_handle')!.description, /answered the moment it opens/, 'the dialog policy is in the description')
    const spec = (await rest('GET', '/openapi.json')).body
    t.ok(spec.paths['/v1/sessions/{sessionId}/tabs'].get, 'GET /v1/sessions/:sessionId/tabs')
    for (const p of ['go-forward', 'tabs/open', 'tabs/select', 'tabs/close', 'dialog', 'resize']) t.ok(spec.paths[`/v1/sessions/{sessionId}/${p}`].post, `POST ${p}`)
  })
})
