// CDP connect at the pod (browser-pod/cdp-proxy.ts): the /v1/cdp upgrade relays to the
// pod's real Chromium through the filter. Real Chromium, real playwright-core client,
// real "public web" hosts (a network namespace behind hostAliases), and a loopback server
// the deny floor forbids (it must never see a request). Raw CDP over `ws` for the
// refusals: each is answered with a CDP error and never reaches Chromium.
import t, { type Test } from 'tap'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { WebSocket } from 'ws'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import type { ApiError } from '../../contracts/errors.ts'
import { CDP_MAX_CLIENT_MESSAGE, POD_CDP_PATH } from '../../contracts/pod-api.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { cdpTap } from '../../browser-pod/cdp-pipe.ts'
import { CdpFilter, privilegedTarget } from '../../browser-pod/cdp-proxy.ts'
import { parseRequest } from '../../browser-pod/cdp-messages.ts'
import { startPublicWeb } from '../helpers/netns.ts'
import { waitFor } from '../helpers/wait.ts'
import { loopbackServer, newToken, publicAliases, inProcessSandbox } from './harness.ts'

const CANARY = 'Cdp-Canary-5e1f'

interface Reply {
  id: number
  result?: any
  error?: { code: number; message: string }
  sessionId?: string
}

interface Raw {
  ws: WebSocket
  send(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<Reply>
  sendText(text: string): void
  events: Array<{ method: string; params: any; sessionId?: string }>
  replies: Reply[]
  /** every message received, as text */
  texts: string[]
  closed: Promise<{ code: number }>
  close(): Promise<void>
}

/** A raw CDP client: one WebSocket, replies matched by id, events kept. */
async function rawCdp(t: Test, url: string, token?: string): Promise<Raw> {
  const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, maxPayload: 256 * 1024 * 1024 })
  const closed = new Promise<{ code: number }>((resolve) => ws.once('close', (code) => resolve({ code })))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
    ws.once('unexpected-response', (_req, res) => reject(new Error(`unexpected ${res.statusCode}`)))
  })
  let next = 1
  const waiting = new Map<number, (r: Reply) => void>()
  const events: Raw['events'] = []
  const replies: Reply[] = []
  const texts: string[] = []
  ws.on('message', (data) => {
    texts.push(data.toString())
    const msg = JSON.parse(data.toString())
    if (msg.method) return void events.push(msg)
    replies.push(msg)
    waiting.get(msg.id)?.(msg)
    waiting.delete(msg.id)
  })
  const close = async () => {
    if (ws.readyState === WebSocket.CLOSED) return
    ws.close()
    await closed
  }
  t.teardown(close)
  return {
    ws, events, replies, texts, closed, close,
    send: (method, params, sessionId) => new Promise<Reply>((resolve) => {
      const id = next++
      waiting.set(id, resolve)
      ws.send(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }))
    }),
    sendText: (text) => ws.send(text),
  }
}

/** The control: an unfiltered channel on Chromium's pipe (what the filter stands in front of). */
async function rawPipe(t: Test, browser: Parameters<typeof cdpTap>[0]): Promise<Pick<Raw, 'send' | 'close' | 'events'>> {
  const channel = await cdpTap(browser)!.open()
  let next = 1
  const waiting = new Map<number, (r: Reply) => void>()
  const events: Raw['events'] = []
  channel.onMessage = (text) => {
    const msg = JSON.parse(text)
    if (msg.method) return void events.push(msg)
    waiting.get(msg.id)?.(msg)
    waiting.delete(msg.id)
  }
  const close = async () => channel.close()
  t.teardown(close)
  return {
    close,
    events,
    send: (method, params, sessionId) => new Promise<Reply>((resolve) => {
      const id = next++
      waiting.set(id, resolve)
      channel.send(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }))
    }),
  }
}

/** This process's Chromium processes: its descendants whose command is chromium's. */
function chromiumPids(_browser: unknown): number[] {
  const parent = new Map<number, number>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const ppid = /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${d}/status`, 'utf8'))?.[1]
      if (ppid) parent.set(Number(d), Number(ppid))
    } catch { /* gone meanwhile */ }
  }
  const below = (pid: number): boolean => { for (let p = parent.get(pid); p; p = parent.get(p)) if (p === process.pid) return true; return false }
  return [...parent.keys()].filter((pid) => below(pid) && processArgs([pid]).some((a) => /chrom/.test(a.split('/').pop() ?? '')))
}

function processArgs(pids: number[]): string[] {
  return pids.flatMap((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') } catch { return [] } })
}

/** TCP ports these processes listen on (from /proc/net/tcp{,6} and their open sockets). */
function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>()
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try { const l = readlinkSync(`/proc/${pid}/fd/${fd}`); const m = /^socket:\[(\d+)\]$/.exec(l); if (m) inodes.add(m[1]) } catch { /* closed meanwhile */ }
      }
    } catch { /* gone meanwhile */ }
  }
  const ports: number[] = []
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/)
      if (c[3] === '0A' && inodes.has(c[9])) ports.push(parseInt(c[1].split(':').pop()!, 16))
    }
  }
  return ports
}

/** The HTTP status a refused upgrade answers with, and its body. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.once('open', () => { ws.close(); reject(new Error('the upgrade was accepted')) })
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    ws.once('error', (e) => reject(e))
  })
}

const refused = (t: Test, r: Reply, what: RegExp, msg: string) => {
  t.equal(r.result, undefined, `${msg}: no result`)
  t.equal(r.error?.code, -32000, `${msg}: a CDP error`)
  t.match(r.error?.message ?? '', what, msg)
}

t.test('[ISSUE-50] a refused first navigation closes the blank tab opened for it; a tab that showed a page stays', async (t) => {
  const f = new CdpFilter()
  const seen = (msg: unknown) => f.observe(Buffer.from(JSON.stringify(msg))).toClient
  f.judge({ id: 1, method: 'Target.createTarget', params: { url: 'about:blank' } })
  seen({ method: 'Target.attachedToTarget', params: { sessionId: 'S1', targetInfo: { targetId: 'T1', type: 'page', url: 'about:blank' }, waitingForDebugger: false } })
  seen({ id: 1, result: { targetId: 'T1' } })
  const v = f.judge({ id: 5, method: 'Page.navigate', params: { url: 'chrome://version' }, sessionId: 'S1' })
  t.ok('refuse' in v, 'refused')
  const close = 'refuse' in v ? (v.toBrowser ?? []).map((m) => JSON.parse(m)) : []
  t.match(close, [{ method: 'Page.close', sessionId: 'S1' }], 'the blank tab is closed')
  t.equal(seen({ id: close[0]?.id, result: {}, sessionId: 'S1' }), null, 'the filter’s own answer never reaches the client')
  const again = f.judge({ id: 6, method: 'Page.navigate', params: { url: 'chrome://version' }, sessionId: 'S1' })
  t.notOk('refuse' in again && again.toBrowser, 'a second refusal closes nothing more')
  // a tab that showed a page: the refusal alone
  f.judge({ id: 2, method: 'Target.createTarget', params: { url: 'about:blank' } })
  seen({ method: 'Target.attachedToTarget', params: { sessionId: 'S2', targetInfo: { targetId: 'T2', type: 'page', url: 'about:blank' }, waitingForDebugger: false } })
  seen({ id: 2, result: { targetId: 'T2' } })
  seen({ method: 'Target.targetInfoChanged', params: { targetInfo: { targetId: 'T2', type: 'page', url: 'https://example.com/' } } })
  const kept = f.judge({ id: 7, method: 'Page.navigate', params: { url: 'file:///etc/passwd' }, sessionId: 'S2' })
  t.ok('refuse' in kept && !kept.toBrowser, 'refused, the tab kept')
})

t.test('the filter, message by message', async (t) => {
  const f = new CdpFilter()
  const judge = (method: string, params?: Record<string, unknown>) => f.judge({ id: 1, method, params })
  t.ok('forward' in judge('Runtime.evaluate', { expression: '1' }))
  t.ok('forward' in judge('Page.navigate', { url: 'https://example.com/' }))
  t.ok('forward' in judge('Page.navigate', { url: 'data:text/html,hi' }))
  t.ok('forward' in judge('Target.createTarget', { url: 'about:blank' }))
  t.ok('forward' in judge('Target.createTarget', { url: '' }))
  for (const url of ['file:///etc/passwd', 'FILE:///etc/passwd', ' file:///etc/passwd', 'chrome://version', 'devtools://devtools/bundled/inspector.html',
    'chrome-extension://abc/x.html', 'view-source:http://example.com/', 'about:version', 'javascript:alert(1)', 'filesystem:http://x/temporary/a', '\\\\host\\share']) {
    t.ok('refuse' in judge('Page.navigate', { url }), `Page.navigate ${url}`)
    t.ok('refuse' in judge('Target.createTarget', { url }), `Target.createTarget ${url}`)
  }
  t.ok('refuse' in judge('Network.loadNetworkResource', { url: 'file:///etc/passwd', frameId: 'x', options: {} }))
  t.ok('refuse' in judge('Fetch.continueRequest', { requestId: '1', url: 'file:///etc/passwd' }))
  t.ok('forward' in judge('Fetch.continueRequest', { requestId: '1' }))
  t.ok('refuse' in judge('Target.createBrowserContext', { proxyServer: 'direct://' }))
  t.ok('refuse' in judge('Target.createBrowserContext', { proxyBypassList: '*' }))
  t.ok('refuse' in judge('Target.createBrowserContext', { proxyServer: '' }), 'any proxy field at all')
  t.ok('forward' in judge('Target.createBrowserContext', { disposeOnDetach: true }))
  t.ok('refuse' in judge('Input.dispatchDragEvent', { type: 'drop', x: 1, y: 1, data: { items: [], files: ['/etc/passwd'], dragOperationsMask: 1 } }))
  t.ok('forward' in judge('Input.dispatchDragEvent', { type: 'drop', x: 1, y: 1, data: { items: [], dragOperationsMask: 1 } }))
  for (const m of ['Extensions.loadUnpacked', 'Cast.enable', 'Tethering.bind', 'PWA.install', 'NewDomain.anything']) t.ok('refuse' in judge(m, {}), `${m}: the domain is closed`)
  // Browser.setDownloadBehavior: deny passes as asked; anything else is deny on the default context, refused on a foreign one
  t.same(judge('Browser.setDownloadBehavior', { behavior: 'deny' }), { forward: { id: 1, method: 'Browser.setDownloadBehavior', params: { behavior: 'deny' } } })
  t.same(judge('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: '/etc', eventsEnabled: true }),
    { forward: { id: 1, method: 'Browser.setDownloadBehavior', params: { behavior: 'deny', eventsEnabled: true } } }, 'no path ever reaches Chromium')
  t.ok('refuse' in judge('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp', browserContextId: 'SOMEONE-ELSES' }))
  // a context is ours once Chromium said so
  f.judge({ id: 7, method: 'Target.createBrowserContext', params: {} })
  t.ok('refuse' in judge('Target.disposeBrowserContext', { browserContextId: 'CTX1' }))
  f.observe(Buffer.from(JSON.stringify({ id: 7, result: { browserContextId: 'CTX1' } })))
  t.ok('forward' in judge('Target.disposeBrowserContext', { browserContextId: 'CTX1' }))
  t.same(judge('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp', browserContextId: 'CTX1' }),
    { forward: { id: 1, method: 'Browser.setDownloadBehavior', params: { behavior: 'deny', browserContextId: 'CTX1' } } })
  // what is forwarded is the message as judged
  const dup = parseRequest('{"id":3,"method":"Runtime.evaluate","method":"Page.navigate","params":{"url":"file:///etc/passwd"}}')
  t.ok(!('invalid' in dup) && 'refuse' in f.judge(dup), 'a duplicate key is judged as JSON.parse reads it, and that is what would be sent')
  const escaped = parseRequest('{"id":4,"method":"Page.navig\\u0061te","params":{"url":"fil\\u0065:///etc/passwd"}}')
  t.ok(!('invalid' in escaped) && 'refuse' in f.judge(escaped), 'escapes are decoded before judging')
  t.same(parseRequest('[1]'), { invalid: 'message is not a JSON object' })
  t.match(parseRequest('{"id":-1,"method":"A.b"}'), { invalid: /^id/ })
  t.match(parseRequest('{"id":1,"method":"nodot"}'), { invalid: /^method/, id: 1 })
})

t.test('the filter keeps Chromium’s own pages and the pod’s paths out of reach, message by message', async (t) => {
  const f = new CdpFilter()
  const judge = (method: string, params?: Record<string, unknown>, sessionId?: string) => f.judge(sessionId ? { id: 1, method, params, sessionId } : { id: 1, method, params })
  const seen = (msg: unknown) => {
    const data = Buffer.from(JSON.stringify(msg))
    const o = f.observe(data)
    return { ...o, same: o.toClient === data, json: o.toClient === null ? null : JSON.parse(o.toClient.toString()) }
  }
  const own = /Chromium’s own pages/
  t.match(judge('Target.attachToTarget', { targetId: 'NEVER-NAMED', flatten: true }), { refuse: /unknown target/ }, 'a target Chromium never named to this client')
  // a list names them: the filter learns them and the client never sees them
  t.ok('forward' in f.judge({ id: 20, method: 'Target.getTargets', params: { filter: [{}] } }))
  const list = seen({ id: 20, result: { targetInfos: [
    { targetId: 'UI1', type: 'browser_ui', url: 'chrome://omnibox-popup.top-chrome/' },
    { targetId: 'P1', type: 'page', url: 'https://example.com/' },
    { targetId: 'D1', type: 'page', url: 'devtools://devtools/bundled/inspector.html' },
    { targetId: 'U1', type: 'other', url: 'chrome-untrusted://terminal/' },
    { targetId: 'C1', type: 'page', url: 'CHROME://version' },
  ] } })
  t.same(list.json.result.targetInfos.map((x: any) => x.targetId), ['P1'], 'getTargets: only the web page is disclosed')
  for (const id of ['UI1', 'D1', 'U1', 'C1']) {
    for (const m of ['Target.attachToTarget', 'Target.activateTarget', 'Target.closeTarget', 'Target.getTargetInfo', 'Target.autoAttachRelated']) {
      t.match(judge(m, { targetId: id, flatten: true, waitForDebuggerOnStart: false }), { refuse: own }, `${m} ${id}`)
    }
  }
  t.ok('forward' in judge('Target.attachToTarget', { targetId: 'P1', flatten: true }), 'a web page is attached to')
  for (const url of ['chrome://version', 'chrome-untrusted://terminal/', 'devtools://devtools/bundled/inspector.html']) {
    t.ok('refuse' in judge('Target.createTarget', { url }), `Target.createTarget ${url}`)
    t.ok('refuse' in judge('Page.navigate', { url }), `Page.navigate ${url}`)
  }
  // events: created, changed, attached behind the client's back
  t.equal(seen({ method: 'Target.targetCreated', params: { targetInfo: { targetId: 'UI2', type: 'browser_ui', url: 'chrome://x/' } } }).toClient, null, 'targetCreated of one: dropped')
  t.ok(seen({ method: 'Target.targetCreated', params: { targetInfo: { targetId: 'P2', type: 'page', url: 'https://example.com/a' } } }).same, 'of a web page: untouched')
  const attached = seen({ method: 'Target.attachedToTarget', params: { sessionId: 'S-UI', targetInfo: { targetId: 'UI3', type: 'browser_ui', url: 'chrome://y/' }, waitingForDebugger: true } })
  t.equal(attached.toClient, null, 'attachedToTarget of one: dropped')
  t.same((attached.toBrowser ?? []).map((m) => JSON.parse(m)), [{ id: 1, method: 'Runtime.runIfWaitingForDebugger', sessionId: 'S-UI' }], 'and let run (it waits for a debugger)')
  t.match(judge('Runtime.evaluate', { expression: 'chrome.send' }, 'S-UI'), { refuse: /Chromium’s own pages/ }, 'a message to that session is refused')
  t.equal(seen({ method: 'Runtime.consoleAPICalled', params: { type: 'log', args: [] }, sessionId: 'S-UI' }).toClient, null, 'its events are dropped')
  t.equal(seen({ id: 1, result: {}, sessionId: 'S-UI' }).toClient, null, 'and its answers')
  t.ok(seen({ method: 'Target.attachedToTarget', params: { sessionId: 'S-P2', targetInfo: { targetId: 'P2', type: 'page', url: 'https://example.com/a' }, waitingForDebugger: false } }).same)
  t.ok('forward' in judge('Runtime.evaluate', { expression: '1' }, 'S-P2'))
  t.equal(seen({ method: 'Target.targetInfoChanged', params: { targetInfo: { targetId: 'P2', type: 'page', url: 'chrome://settings/' } } }).toClient, null, 'a page that became one: its change is dropped')
  t.match(judge('Runtime.evaluate', { expression: '1' }, 'S-P2'), { refuse: /Chromium’s own pages/ }, 'and its session is closed to the client')
  // auto-attach is asked without them
  const auto = judge('Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false, filter: [{}] })
  t.same('forward' in auto && auto.forward.params?.filter, [{ type: 'browser_ui', exclude: true }, {}], 'setAutoAttach: browser_ui excluded first')
  const autoDefault = judge('Target.setAutoAttach', { autoAttach: true, flatten: true, waitForDebuggerOnStart: false })
  t.same('forward' in autoDefault && autoDefault.forward.params?.filter, [{ type: 'browser_ui', exclude: true }, { type: 'browser', exclude: true }, { type: 'tab', exclude: true }, {}], 'and Chromium’s default after it')
  t.ok(privilegedTarget({ type: 'browser_ui', url: '' }) && privilegedTarget({ type: 'page', url: 'chrome-extension://a/b' }) && !privilegedTarget({ type: 'page', url: 'https://chrome.example/' }))

  // the pod's paths
  const progress = seen({ method: 'Browser.downloadProgress', params: { guid: 'g', totalBytes: 5, receivedBytes: 5, state: 'completed', filePath: '/tmp/playwright-artifacts-X/g' } })
  t.same(progress.json, { method: 'Browser.downloadProgress', params: { guid: 'g', totalBytes: 5, receivedBytes: 5, state: 'completed' } }, 'a download’s filePath is removed')
  t.ok(seen({ method: 'Browser.downloadProgress', params: { guid: 'g', state: 'inProgress' } }).same, 'progress without one: untouched')
  t.ok('forward' in f.judge({ id: 30, method: 'SystemInfo.getInfo' }))
  t.same(seen({ id: 30, result: { gpu: {}, modelName: '', modelVersion: '', commandLine: '/usr/lib/chromium/chromium --user-data-dir=/tmp/p' } }).json,
    { id: 30, result: { gpu: {}, modelName: '', modelVersion: '', commandLine: '' } }, 'SystemInfo: the command line is blanked')
  for (const m of ['Browser.getBrowserCommandLine', 'Tracing.start', 'Memory.getBrowserSamplingProfile', 'Memory.getAllTimeSamplingProfile', 'Memory.getSamplingProfile', 'DOM.getFileInfo']) {
    t.ok('refuse' in judge(m, {}), `${m} is refused`)
  }
  // everything else passes as the very same bytes, unparsed
  t.ok(seen({ id: 99, result: { data: 'x' } }).same && seen({ method: 'Page.loadEventFired', params: { timestamp: 1 } }).same)
})

t.test('CDP at the pod, real Chromium', async (t) => {
  const web = await startPublicWeb(t)
  // the deny floor forbids loopback outright (platform egress would refuse it anyway)
  const forbidden = await loopbackServer(t, 'forbidden loopback')
  const token = newToken()
  const pod = await startPod({ token, hostAliases: publicAliases(web.ip), denyCidrs: ['127.0.0.0/8'], sandbox: inProcessSandbox() })
  t.teardown(() => pod.close())
  const podApi = new PodClient(pod.endpoint, token)
  t.teardown(() => podApi.close())
  const url = pod.endpoint.replace(/^http/, 'ws') + POD_CDP_PATH

  t.test('Chromium opens no DevTools port: CDP reaches it over the pipe only', async (t) => {
    const pids = chromiumPids(pod.browser)
    t.ok(pids.length > 0, 'the browser and its helpers are running')
    t.same(listeningPorts(pids), [], 'no process of this browser listens on TCP')
    t.notOk(processArgs(pids).some((a) => a.startsWith('--remote-debugging-port')), 'and none was started with a debugging port')
  })

  t.test('refusals before the upgrade: token, configure, path', async (t) => {
    t.same(await upgradeStatus(url, {}), { status: 401, body: 'unauthorized' })
    t.same(await upgradeStatus(url, { authorization: 'Bearer wrong' }), { status: 401, body: 'unauthorized' })
    t.same(await upgradeStatus(url, { authorization: `Bearer ${token}` }), { status: 503, body: 'CDP is not available for this session' }, 'not configured yet')
    await podApi.configure({ sessionId: 'nsess_cdpnode', egress: { mode: 'platform', declaredHosts: [] } })
    await t.rejects(upgradeStatus(pod.endpoint.replace(/^http/, 'ws') + '/v1/other', { authorization: `Bearer ${token}` }), 'another upgrade path is dropped')
  })

  t.test('playwright-core connectOverCDP drives the session: goto, click, screenshot', async (t) => {
    const browser = await chromium.connectOverCDP(url, { headers: { authorization: `Bearer ${token}` } })
    t.teardown(() => browser.close())
    const page = browser.contexts().flatMap((c) => c.pages())[0]
    t.ok(page, 'the session’s page is there')
    await page.goto('http://example.com/cdp-drive.html')
    await page.click('#go')
    t.equal(await page.textContent('#status'), 'clicked over CDP')
    const png = await page.screenshot()
    t.ok(png.subarray(1, 4).toString() === 'PNG' && png.length > 1000, 'a screenshot')
    t.equal(pod.session.page.url(), 'http://example.com/cdp-drive.html', 'the same page the pod API drives')
    t.ok((await web.requests()).some((r) => r.url === '/cdp-drive.html'), 'through the gateway to the public web')
    await browser.close()
    await waitFor(() => pod.cdp.clients === 0, { what: 'the CDP client to be gone' })
  })

  t.test('a context created over CDP inherits the egress gateway; one with its own proxy is refused', async (t) => {
    const cdp = await rawCdp(t, url, token)
    // the attempt: a context that would go direct, to a loopback server the deny floor forbids
    refused(t, await cdp.send('Target.createBrowserContext', { proxyServer: 'direct://' }), /cannot choose its own proxy/, 'proxyServer direct://')
    refused(t, await cdp.send('Target.createBrowserContext', { proxyServer: 'http://127.0.0.1:1', proxyBypassList: '<-loopback>' }), /own proxy/, 'any proxyServer')
    refused(t, await cdp.send('Target.createBrowserContext', { proxyBypassList: '*' }), /own proxy/, 'a bypass list alone')
    // a context without one: the browser's launch-level proxy, i.e. the gateway
    const { result: ctx } = await cdp.send('Target.createBrowserContext', { disposeOnDetach: true })
    t.ok(ctx?.browserContextId, 'a context of its own')
    const { result: target } = await cdp.send('Target.createTarget', { url: 'about:blank', browserContextId: ctx.browserContextId })
    const { result: attached } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: true })
    const sid = attached.sessionId as string
    await cdp.send('Page.enable', {}, sid)
    const before = pod.gateway.seq
    await cdp.send('Page.navigate', { url: `http://127.0.0.1:${forbidden.port}/` }, sid)
    await waitFor(() => pod.gateway.recordsSince(before).find((r) => r.port === forbidden.port), { what: 'the gateway to judge the loopback request' })
    t.same(pod.gateway.recordsSince(before).filter((r) => r.port === forbidden.port).map((r) => [r.outcome, r.reason]), [['denied', 'deny_floor']], 'the gateway saw it and denied it')
    const nav = await cdp.send('Page.navigate', { url: 'http://www.example.com/cdp-drive.html' }, sid)
    t.notOk(nav.error, 'the public web is reachable from that context')
    await waitFor(async () => (await web.requests()).some((r) => r.host === 'www.example.com'), { what: 'the public web to see the request' })
    t.equal(forbidden.connections(), 0, 'the loopback server never saw a connection')

    // the control: Chromium's raw endpoint (which nothing but the proxy is told) would have gone direct
    const control = await loopbackServer(t, 'control loopback')
    const direct = await rawPipe(t, pod.browser)
    const { result: ctx2 } = await direct.send('Target.createBrowserContext', { proxyServer: 'direct://', disposeOnDetach: true })
    const { result: t2 } = await direct.send('Target.createTarget', { url: 'about:blank', browserContextId: ctx2.browserContextId })
    const { result: a2 } = await direct.send('Target.attachToTarget', { targetId: t2.targetId, flatten: true })
    await direct.send('Page.navigate', { url: `http://127.0.0.1:${control.port}/` }, a2.sessionId)
    await waitFor(() => control.connections() > 0, { what: 'the unfiltered context to reach loopback' })
    t.pass('unfiltered, proxyServer direct:// does bypass the gateway: the refusal above is what stops it')
    await direct.close()
    await cdp.close()
  })

  t.test('Chromium’s own pages cannot be attached to, created or listed; the pod’s paths never reach the client', async (t) => {
    t.equal(pod.session.page.url(), 'http://example.com/cdp-drive.html', 'the session’s page (the Playwright subtest opened it)')
    const cdp = await rawCdp(t, url, token)
    // the control: on the raw endpoint the WebUI targets exist, and attaching gives a privileged renderer
    const direct = await rawPipe(t, pod.browser)
    const all = (await direct.send('Target.getTargets', { filter: [{}] })).result.targetInfos as Array<{ targetId: string; type: string; url: string }>
    const webui = all.filter((x) => privilegedTarget(x))
    t.ok(webui.length > 0 && webui.every((x) => /^chrome:/.test(x.url)), `Chromium keeps WebUI targets (${webui.map((x) => x.type).join(', ')})`)
    const { result: raw } = await direct.send('Target.attachToTarget', { targetId: webui[0].targetId, flatten: true })
    const probe = await direct.send('Runtime.evaluate', { expression: 'typeof chrome.send', returnByValue: true }, raw.sessionId)
    t.equal(probe.result?.result?.value, 'function', 'unfiltered, a client runs script with chrome.send in it: the refusals below are what stop it')
    await direct.send('Browser.setDownloadBehavior', { behavior: 'deny', eventsEnabled: true })
    const { result: sys } = await direct.send('SystemInfo.getInfo')
    const userDataDir = /--user-data-dir=(\S+)/.exec(sys.commandLine)?.[1]
    t.ok(userDataDir, 'unfiltered, SystemInfo names the pod’s profile directory')

    // through the filter: never listed, never discovered, never auto-attached
    const listed = (await cdp.send('Target.getTargets', { filter: [{}] })).result.targetInfos as Array<{ type: string; url: string }>
    t.ok(listed.some((x) => x.type === 'page'), 'the session’s pages are listed')
    t.notOk(listed.some((x) => privilegedTarget(x)), 'no WebUI target is listed, even with a filter that asks for every type')
    await cdp.send('Target.setDiscoverTargets', { discover: true, filter: [{}] })
    // every type but tab (Chromium refuses a filter that allows both tab and page): browser_ui included
    const auto = await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: 'tab', exclude: true }, {}] })
    t.same(auto.result, {}, 'auto-attach asked for every type')
    await waitFor(() => cdp.events.find((e) => e.method === 'Target.attachedToTarget' && e.params.targetInfo.type === 'page'), { what: 'auto-attach to the session’s page' })
    t.notOk(cdp.events.some((e) => e.method.startsWith('Target.') && e.params.targetInfo && privilegedTarget(e.params.targetInfo)), 'no event names one')
    // attach, activate, close by id (the id from the raw endpoint): refused with the documented error
    for (const m of ['Target.attachToTarget', 'Target.activateTarget', 'Target.closeTarget']) {
      refused(t, await cdp.send(m, { targetId: webui[0].targetId, flatten: true }), /is refused: Chromium’s own pages \(chrome:\/\/, chrome-untrusted:\/\/, devtools:\/\/\) are not available over CDP/, `${m} of a WebUI target`)
    }
    refused(t, await cdp.send('Target.attachToTarget', { targetId: 'F'.repeat(32), flatten: true }), /unknown target/, 'a target never named')
    for (const u of ['chrome://version', 'chrome-untrusted://terminal/', 'devtools://devtools/bundled/inspector.html', 'chrome://omnibox-popup.top-chrome/']) {
      refused(t, await cdp.send('Target.createTarget', { url: u }), /scheme .* is not allowed/, `Target.createTarget ${u}`)
    }
    const still = (await direct.send('Target.getTargets', { filter: [{}] })).result.targetInfos as Array<{ targetId: string }>
    t.ok(still.some((x) => x.targetId === webui[0].targetId), 'the WebUI target was not closed either')

    // downloads: a path is never used, and the pod's is never shown
    const dir = mkdtempSync(join(tmpdir(), 'nightjar-cdp-dl2-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    refused(t, await cdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: dir }), /download path is the pod/, 'Page.setDownloadBehavior with a path')
    const sessionCtx = listed.find((x: any) => x.type === 'page' && x.url === 'http://example.com/cdp-drive.html') as any
    refused(t, await cdp.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: dir, browserContextId: sessionCtx.browserContextId, eventsEnabled: true }),
      /download behaviour of the session’s own context is the pod’s/, 'Browser.setDownloadBehavior with a path on the session’s context')
    t.same((await cdp.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: dir, eventsEnabled: true })).result, {},
      'on the default context (what connectOverCDP sends): applied as deny, its path unused')
    // the session's own page downloads (the pod keeps it): the client sees it happen, not where
    await pod.session.page.click('#dl')
    const done = await waitFor(() => cdp.events.find((e) => e.method === 'Browser.downloadProgress' && e.params.state === 'completed'), { what: 'the client to see the download complete' })
    const controlDone = await waitFor(() => direct.events.find((e) => e.method === 'Browser.downloadProgress' && e.params.guid === done.params.guid && e.params.state === 'completed'), { what: 'the raw endpoint’s event' })
    t.ok(typeof controlDone.params.filePath === 'string' && controlDone.params.filePath.startsWith('/'), 'unfiltered, the event names the pod’s file')
    t.equal(done.params.filePath, undefined, 'through the filter it does not')
    t.same(readdirSync(dir), [], 'nothing was written where the client asked')

    // the command line and the other path-bearing calls
    t.equal((await cdp.send('SystemInfo.getInfo')).result?.commandLine, '', 'SystemInfo: the command line is blanked')
    refused(t, await cdp.send('Browser.getBrowserCommandLine'), /command line holds the pod’s paths/, 'Browser.getBrowserCommandLine')
    refused(t, await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream' }), /a trace holds the pod’s paths/, 'Tracing.start')
    refused(t, await cdp.send('Memory.getBrowserSamplingProfile'), /module paths/, 'Memory.getBrowserSamplingProfile')

    const everything = cdp.texts.join('\n')
    t.notOk(everything.includes(userDataDir!), 'no message the client received names the pod’s profile directory')
    t.notOk(everything.includes(controlDone.params.filePath), 'nor the download’s file')
    t.notOk(webui.some((x) => everything.includes(x.targetId) || everything.includes(x.url)), 'nor any WebUI target, by id or URL')
    await direct.close()
    await cdp.close()
  })

  t.test('refused, never forwarded: closing or crashing the browser, files, schemes, other channels', async (t) => {
    const cdp = await rawCdp(t, url, token)
    for (const m of ['Browser.close', 'Browser.crash', 'Browser.crashGpuProcess']) refused(t, await cdp.send(m), /refused/, m)
    t.ok(pod.browser.isConnected(), 'the browser is still there')
    const targets = async () => ((await cdp.send('Target.getTargets')).result.targetInfos as Array<{ type: string; url: string; targetId: string; browserContextId: string }>).filter((x) => x.type === 'page')
    const pageTarget = (await targets()).find((x) => x.url.startsWith('http://example.com/'))!
    t.ok(pageTarget, 'the session’s page')
    const { result: { sessionId: sid } } = await cdp.send('Target.attachToTarget', { targetId: pageTarget.targetId, flatten: true })
    const count = (await targets()).length
    for (const u of ['file:///etc/passwd', 'chrome://version', 'devtools://devtools/bundled/inspector.html', 'chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x.html', 'view-source:http://example.com/']) {
      refused(t, await cdp.send('Page.navigate', { url: u }, sid), /scheme .* is not allowed/, `Page.navigate ${u}`)
      refused(t, await cdp.send('Target.createTarget', { url: u }), /scheme .* is not allowed/, `Target.createTarget ${u}`)
    }
    t.equal((await targets()).length, count, 'no target was opened')
    t.equal(pod.session.page.url(), 'http://example.com/cdp-drive.html', 'the page never left')
    // downloads: where the pod writes is the pod's
    const dir = mkdtempSync(join(tmpdir(), 'nightjar-cdp-dl-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    refused(t, await cdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: dir }, sid), /download path is the pod/, 'Page.setDownloadBehavior')
    refused(t, await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, browserContextId: pageTarget.browserContextId }), /the pod/,
      'Browser.setDownloadBehavior on the session’s context')
    // on a context of its own it is forwarded as deny: a download there writes nothing
    const { result: ctx } = await cdp.send('Target.createBrowserContext', { disposeOnDetach: true })
    const set = await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, browserContextId: ctx.browserContextId, eventsEnabled: true })
    t.same(set.result, {}, 'answered like Chromium answers it')
    const { result: own } = await cdp.send('Target.createTarget', { url: 'about:blank', browserContextId: ctx.browserContextId })
    const { result: { sessionId: ownSid } } = await cdp.send('Target.attachToTarget', { targetId: own.targetId, flatten: true })
    await cdp.send('Page.enable', {}, ownSid)
    await cdp.send('Page.navigate', { url: 'http://example.com/cdp-drive.html' }, ownSid)
    await waitFor(async () => (await cdp.send('Runtime.evaluate', { expression: '!!document.getElementById("dl")', returnByValue: true }, ownSid)).result?.result?.value === true, { what: 'the page' })
    await cdp.send('Runtime.evaluate', { expression: 'document.getElementById("dl").click()' }, ownSid)
    const progress = await waitFor(() => cdp.events.find((e) => e.method === 'Browser.downloadProgress' && e.params.state !== 'inProgress'), { what: 'the download to end' })
    t.equal(progress.params.state, 'canceled', 'the download was denied')
    t.same(readdirSync(dir), [], 'nothing was written where the client asked')
    // files of the pod never go into a page
    const { result: doc } = await cdp.send('DOM.getDocument', {}, sid)
    refused(t, await cdp.send('DOM.setFileInputFiles', { files: ['/etc/passwd'], nodeId: doc.root.nodeId }, sid), /files of the browser/, 'DOM.setFileInputFiles')
    refused(t, await cdp.send('Input.dispatchDragEvent', { type: 'drop', x: 5, y: 5, modifiers: 0, data: { items: [], files: ['/etc/passwd'], dragOperationsMask: 1 } }, sid), /dragging files/, 'a drag of pod files')
    // channels around this filter, and closed domains
    refused(t, await cdp.send('Target.exposeDevToolsProtocol', { targetId: pageTarget.targetId }), /refused/, 'Target.exposeDevToolsProtocol')
    refused(t, await cdp.send('Target.sendMessageToTarget', { message: '{"id":1,"method":"Browser.close"}', sessionId: sid }), /flattened/, 'Target.sendMessageToTarget')
    refused(t, await cdp.send('Target.setRemoteLocations', { locations: [{ host: '127.0.0.1', port: forbidden.port }] }), /refused/, 'Target.setRemoteLocations')
    refused(t, await cdp.send('Target.disposeBrowserContext', { browserContextId: pageTarget.browserContextId }), /only a browser context this connection created/, 'the session’s context')
    for (const m of ['Extensions.loadUnpacked', 'Tethering.bind', 'Cast.enable', 'PWA.install']) refused(t, await cdp.send(m, {}), /domain is not available/, m)
    t.equal(forbidden.connections(), 0, 'the loopback server never saw a connection')
    // malformed input is answered, never forwarded
    cdp.sendText('{nope')
    await waitFor(() => cdp.replies.find((r) => r.id === 0 && /not JSON/.test(r.error?.message ?? '')), { what: 'the answer to a non-JSON message' })
    t.ok(pod.browser.isConnected() && !pod.session.page.isClosed(), 'the session is whole')
    // Fetch may fabricate a response (Playwright's routes need it), but not a way to file://: Chromium refuses the redirect
    refused(t, await cdp.send('Fetch.continueRequest', { requestId: 'x', url: 'file:///etc/passwd' }, sid), /scheme file: is not allowed/, 'Fetch.continueRequest to file://')
    await cdp.send('Page.enable', {}, sid)
    await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*/cdp-redirect*' }] }, sid)
    const nav = cdp.send('Page.navigate', { url: 'http://example.com/cdp-redirect' }, sid)
    const paused = await waitFor(() => cdp.events.find((e) => e.method === 'Fetch.requestPaused'), { what: 'the request to pause' })
    await cdp.send('Fetch.fulfillRequest', { requestId: paused.params.requestId, responseCode: 302, responseHeaders: [{ name: 'Location', value: 'file:///etc/passwd' }] }, sid)
    t.equal((await nav).result?.errorText, 'net::ERR_UNSAFE_REDIRECT', 'a fabricated redirect to file:// goes nowhere')
    t.notMatch(pod.session.page.url(), /^file:/)
    await cdp.send('Fetch.disable', {}, sid)
    await cdp.close()
  })

  t.test('frames are bounded: a message past the limit closes the socket (1009)', async (t) => {
    const cdp = await rawCdp(t, url, token)
    cdp.sendText(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: 'x'.repeat(CDP_MAX_CLIENT_MESSAGE) } }))
    t.equal((await cdp.closed).code, 1009)
    const bin = await rawCdp(t, url, token)
    bin.ws.send(Buffer.from('{"id":1,"method":"Browser.getVersion"}'), { binary: true })
    t.equal((await bin.closed).code, 1003, 'binary frames are not CDP')
    await waitFor(() => pod.cdp.clients === 0, { what: 'both clients to be gone' })
  })

  t.test('the sealed fill and CDP exclude each other at the pod', async (t) => {
    await podApi.drive('navigate', { url: 'http://login.example.com/login.html' })
    const fill = () => {
      const value = Buffer.from(CANARY)
      return podApi.secureType({ selector: '#pw', value, allowlist: ['login.example.com'] }).finally(() => value.fill(0))
    }
    const cdp = await rawCdp(t, url, token)
    const err = await fill().then(() => null, (e: ApiError) => e)
    t.same(err?.toBody(), { error: { code: 'conflict', message: 'a CDP client is connected to this session; credential fill is refused until it disconnects', reason: 'cdp_connected' } })
    t.equal(err?.status, 409)
    t.ok(await pod.session.page.locator('#pw').evaluate((el) => (el as HTMLInputElement).value === ''), 'nothing was typed')
    await cdp.close()
    await waitFor(() => pod.cdp.clients === 0, { what: 'the CDP client to be gone' })
    t.same(await fill(), { ok: true, fieldKind: 'password', host: 'login.example.com' }, 'allowed again once it disconnected')
    t.same(await upgradeStatus(url, { authorization: `Bearer ${token}` }), { status: 403, body: 'CDP is refused on a session a credential was filled in' },
      'and no CDP client connects to a page a secret was typed into')
  })

  t.test('closing the pod closes its CDP sockets', async (t) => {
    // the fill above closed this pod to CDP: a second pod
    const token2 = newToken()
    const pod2 = await startPod({ token: token2, hostAliases: publicAliases(web.ip), sandbox: inProcessSandbox() })
    t.teardown(() => pod2.close())
    const n2 = new PodClient(pod2.endpoint, token2)
    t.teardown(() => n2.close())
    await n2.configure({ sessionId: 'nsess_cdpnode2', egress: { mode: 'platform', declaredHosts: [] } })
    const cdp = await rawCdp(t, pod2.endpoint.replace(/^http/, 'ws') + POD_CDP_PATH, token2)
    t.ok((await cdp.send('Browser.getVersion')).result?.product, 'connected')
    await pod2.close()
    t.equal((await cdp.closed).code, 1001)
  })
})
