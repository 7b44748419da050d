// CDP connect at the pod: /v1/cdp relays CDP between one client (the api-server's relay)
// and this pod's Chromium through a filter, so CDP drives this session's browser but never
// gets around the egress gateway, the deny floor, the pod's files or the sealed fill. The
// filter forwards each message as it judged it (re-serialised), never the client's bytes.
// Design: docs/sessions.md#how-the-cdp-filter-judges
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocket, WebSocketServer, type RawData } from 'ws'
import { closeQuietly } from '../tunnel/ws-relay.ts'
import { upgradeErrors, upgradeRefusal } from '../contracts/errors.ts'
import { CDP_MAX_BROWSER_MESSAGE, CDP_MAX_CLIENT_MESSAGE } from '../contracts/pod-api.ts'
import type { CdpChannel, CdpTap } from './cdp-pipe.ts'
import type { PodSession } from './session.ts'
import { beginCdpClient, cdpClients } from './secrets/fill-lock.ts'
import { parseRequest, refusal, type CdpRequest } from './cdp-messages.ts'
import { attachPage, pageMessage, pageTargetOf, type PageAttachment } from './cdp-page-endpoint.ts'

// --- the filter ------------------------------------------------------------------------

/** A refusal may come with messages the filter itself sends the browser (closing the tab a refused navigation was opened for). */
export type Verdict = { forward: CdpRequest } | { refuse: string; toBrowser?: string[] }

/** Domains a client may use. Anything else (Cast, Extensions, PWA, Tethering, new ones) is refused. */
const DOMAINS = new Set([
  'Accessibility', 'Animation', 'Audits', 'Autofill', 'BackgroundService', 'Browser', 'CSS', 'CacheStorage', 'Console', 'DOM',
  'DOMDebugger', 'DOMSnapshot', 'DOMStorage', 'Debugger', 'DeviceAccess', 'DeviceOrientation', 'Emulation', 'EventBreakpoints',
  'FedCm', 'Fetch', 'FileSystem', 'HeadlessExperimental', 'HeapProfiler', 'IO', 'IndexedDB', 'Input', 'Inspector', 'LayerTree',
  'Log', 'Media', 'Memory', 'Network', 'Overlay', 'Page', 'Performance', 'PerformanceTimeline', 'Preload', 'Profiler', 'Runtime',
  'Schema', 'Security', 'ServiceWorker', 'Storage', 'SystemInfo', 'Target', 'Tracing', 'WebAudio', 'WebAuthn',
])

type Params = Record<string, unknown>
type Rule = (params: Params, filter: CdpFilter, req: CdpRequest) => Verdict

const refuse = (why: string): Rule => () => ({ refuse: why })
const forward = (req: CdpRequest): Verdict => ({ forward: req })

/** What a browser-initiated navigation may open: the web (through the gateway), data: and about:blank. */
function navigable(url: unknown, { blankOk, data }: { blankOk: boolean; data: boolean }): string | null {
  if (url === undefined) return blankOk ? null : 'url: required'
  if (typeof url !== 'string') return 'url: must be a string'
  if (url === '' && blankOk) return null
  if (/^about:blank([?#].*)?$/i.test(url)) return null
  // the raw text and the parsed URL must agree: no leading space or control, no scheme Chromium could read differently
  const raw = /^(https?|data):/i.exec(url)?.[1]?.toLowerCase()
  let parsed: string | undefined
  try {
    parsed = new URL(url).protocol.slice(0, -1)
  } catch {
    parsed = undefined
  }
  if (raw && raw === parsed && (raw !== 'data' || data)) return null
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]{0,30}):/.exec(url)?.[1]?.toLowerCase()
  return scheme ? `scheme ${scheme}: is not allowed` : 'url: not an absolute http(s) URL'
}

const urlRule = (field: string, opts: { blankOk: boolean; data: boolean; optional?: boolean }): Rule => (p, _f, req) => {
  if (opts.optional && p[field] === undefined) return forward(req)
  const why = navigable(p[field], opts)
  return why ? { refuse: `${why} (CDP may open http, https${opts.data ? ', data:' : ''} and about:blank only)` } : forward(req)
}

// Judged and allowed: Network.setBypassServiceWorker (requests skip the page's service
// worker, not the gateway); Security.setIgnoreCertificateErrors (TLS goes end to end
// through the gateway's CONNECT tunnels: what the session trusts changes, never what it can
// reach; Playwright's ignoreHTTPSErrors needs it); Fetch.* (fabricated responses stay in the
// page; a fabricated redirect to file:// or chrome:// is Chromium's ERR_UNSAFE_REDIRECT,
// tested); Target.closeTarget (the caller's own session's tabs).
const RULES: Record<string, Rule> = {
  // the session's browser is not the client's to end
  'Browser.close': refuse('the session’s browser is closed by session_end'),
  'Browser.crash': refuse('crashing the browser is not allowed'),
  'Browser.crashGpuProcess': refuse('crashing the browser is not allowed'),
  'Page.crash': refuse('crashing the page is not allowed'),
  'Browser.executeBrowserCommand': refuse('browser commands are not allowed'),
  // where the pod writes is the pod's choice (a download path is a write anywhere)
  'Browser.setDownloadBehavior': (p, f, req) => f.downloadBehavior(p, req),
  'Page.setDownloadBehavior': refuse('the download path is the pod’s (use Browser.setDownloadBehavior with behavior deny)'),
  // files of the pod never go into a page
  'DOM.setFileInputFiles': refuse('files of the browser’s machine cannot be set; send file contents instead (set_input_files)'),
  'Input.dispatchDragEvent': (p, _f, req) =>
    Array.isArray((p.data as Params | undefined)?.files) && ((p.data as Params).files as unknown[]).length > 0
      ? { refuse: 'dragging files of the browser’s machine is not allowed' }
      : forward(req),
  // browser-initiated navigations: no chrome://, file://, devtools://, chrome-extension://, view-source: …
  'Page.navigate': (p, f, req) => f.navigation(urlRule('url', { blankOk: false, data: true })(p, f, req), req),
  'Target.createTarget': (p, f, req) => {
    const v = urlRule('url', { blankOk: true, data: true })(p, f, req)
    return 'refuse' in v ? v : f.expect(req, 'Target.createTarget')
  },
  'Network.loadNetworkResource': urlRule('url', { blankOk: false, data: false }),
  'Fetch.continueRequest': urlRule('url', { blankOk: false, data: false, optional: true }),
  'Network.continueInterceptedRequest': urlRule('url', { blankOk: false, data: false, optional: true }),
  // every context goes through the egress gateway: a context of its own inherits the launch-level proxy
  'Target.createBrowserContext': (p, f, req) => {
    if ('proxyServer' in p || 'proxyBypassList' in p) return { refuse: 'a browser context cannot choose its own proxy (all traffic leaves through the session’s egress gateway)' }
    return f.expect(req, 'Target.createBrowserContext')
  },
  'Target.disposeBrowserContext': (p, f, req) =>
    f.owns(p.browserContextId) ? forward(req) : { refuse: 'only a browser context this connection created can be disposed' },
  // channels that would carry CDP (or connections) past this filter
  'Target.exposeDevToolsProtocol': refuse('exposing the protocol to a page is not allowed'),
  'Target.sendMessageToTarget': refuse('use flattened sessions (sessionId on the message)'),
  'Target.setRemoteLocations': refuse('remote target discovery is not allowed'),
  'Target.openDevTools': refuse('DevTools windows are not allowed'),
  // Chromium's own pages (WebUI: chrome.send, Mojo): never attached to, activated or closed
  'Target.attachToTarget': (p, f, req) => f.targetRule(p, req),
  'Target.activateTarget': (p, f, req) => f.targetRule(p, req),
  'Target.closeTarget': (p, f, req) => f.targetRule(p, req),
  'Target.autoAttachRelated': (p, f, req) => { const v = f.targetRule(p, req); return 'refuse' in v ? v : forward(hideBrowserUi(req)) },
  'Target.getTargetInfo': (p, f, req) => (p.targetId === undefined ? f.expect(req, 'Target.getTargetInfo') : f.targetRule(p, req)),
  // auto-attach never attaches to them (what slips through is kept out of reach by observe);
  // discovery and lists name them to the filter, which learns and hides them
  'Target.setAutoAttach': (_p, _f, req) => forward(hideBrowserUi(req)),
  'Target.getTargets': (_p, f, req) => f.expect(req, 'Target.getTargets'),
  // the pod's paths: returned by these wholesale
  'Browser.getBrowserCommandLine': refuse('the browser’s command line holds the pod’s paths'),
  'Tracing.start': refuse('a trace holds the pod’s paths and command line'),
  'Memory.getBrowserSamplingProfile': refuse('a sampling profile lists the pod’s module paths'),
  'Memory.getAllTimeSamplingProfile': refuse('a sampling profile lists the pod’s module paths'),
  'Memory.getSamplingProfile': refuse('a sampling profile lists the pod’s module paths'),
  'DOM.getFileInfo': refuse('a file’s path is the pod’s'),
  'SystemInfo.getInfo': (_p, f, req) => f.expect(req, 'SystemInfo.getInfo'),
}

/** The first id of the filter's own commands on a client's session (Chromium's ids are int32). */
const OWN_REPLY_IDS = 2_000_000_000

/** Schemes of Chromium's privileged pages (WebUI, DevTools, extensions): never a CDP client's to script. */
const PRIVILEGED_URL = /^\s*(chrome|chrome-untrusted|devtools|chrome-extension|chrome-search):/i

export interface TargetInfoLike {
  targetId?: unknown
  type?: unknown
  url?: unknown
}

/** A target CDP clients never reach: a browser_ui target (headless Chromium's WebUI) or any page at a privileged scheme. */
export function privilegedTarget(info: TargetInfoLike): boolean {
  return info.type === 'browser_ui' || (typeof info.url === 'string' && PRIVILEGED_URL.test(info.url))
}

/** Chromium's default target filter (discovery, getTargets, auto-attach) when the client gives none. */
const DEFAULT_TARGET_FILTER = [{ type: 'browser', exclude: true }, { type: 'tab', exclude: true }, {}]

/** An auto-attach request with browser_ui excluded first (a target filter's first match decides). */
function hideBrowserUi(req: CdpRequest): CdpRequest {
  const p = req.params ?? {}
  const asked = Array.isArray(p.filter) ? p.filter : DEFAULT_TARGET_FILTER
  return { ...req, params: { ...p, filter: [{ type: 'browser_ui', exclude: true }, ...asked] } }
}

/** What observe makes of one browser message: forward it (as is or rewritten), or drop it; and messages the filter itself sends to the browser. */
export interface Observed {
  toClient: RawData | string | null
  toBrowser?: string[]
}

type Expected = 'Target.getTargets' | 'Target.getTargetInfo' | 'Target.attachToTarget' | 'Target.createTarget' | 'SystemInfo.getInfo' | 'Target.createBrowserContext'

/**
 * One connection's filter. It remembers the browser contexts the client created (from
 * Chromium's answers), so the client may dispose and configure those, and no other; and
 * every target Chromium told the client about, so it can tell Chromium's own pages apart.
 */
export class CdpFilter {
  readonly #own = new Set<string>()
  /** answers the filter reads (and may rewrite): "sessionId|id" → what was asked */
  readonly #pending = new Map<string, { method: Expected; targetId?: string; blank?: boolean }>()
  /** ids of #pending, whatever their session: the cheap test before a browser message is parsed */
  readonly #pendingIds = new Map<number, number>()
  /** targetId → privileged?, for every target Chromium named to this client */
  readonly #targets = new Map<string, boolean>()
  /** flattened sessions → their target; sessions attached to a privileged target are #blocked */
  readonly #sessions = new Map<string, string>()
  readonly #blocked = new Set<string>()
  /** ids of the filter's own messages on blocked sessions (the client never uses those sessions) */
  #ownId = 0
  /** tabs this client opened blank that never showed anything else: a refused first navigation closes them */
  readonly #fresh = new Set<string>()
  /** "sessionId|id" of the filter's own commands on the client's sessions; their answers are kept from the client */
  readonly #ownReplies = new Set<string>()
  /** ids of those commands: far above the small counters clients use, within Chromium's int32 */
  #ownReplyId = OWN_REPLY_IDS

  judge(req: CdpRequest): Verdict {
    if (req.sessionId !== undefined && this.#blocked.has(req.sessionId)) return { refuse: 'that session belongs to one of Chromium’s own pages' }
    const dot = req.method.indexOf('.')
    const domain = req.method.slice(0, dot)
    if (!DOMAINS.has(domain)) return { refuse: `the ${domain} domain is not available over CDP` }
    const rule = RULES[req.method]
    return rule ? rule(req.params ?? {}, this, req) : forward(req)
  }

  owns(browserContextId: unknown): boolean {
    return typeof browserContextId === 'string' && this.#own.has(browserContextId)
  }

  /** A command naming a target: only one Chromium named to this client, and never one of its own pages. */
  targetRule(p: Params, req: CdpRequest): Verdict {
    const id = p.targetId
    if (typeof id !== 'string') return { refuse: 'targetId: required' }
    const privileged = this.#targets.get(id)
    if (privileged === undefined) return { refuse: 'unknown target (learn targets from Target.getTargets, setDiscoverTargets or setAutoAttach first)' }
    if (privileged) return { refuse: 'Chromium’s own pages (chrome://, chrome-untrusted://, devtools://) are not available over CDP' }
    return req.method === 'Target.attachToTarget' ? this.expect(req, 'Target.attachToTarget', id) : forward(req)
  }

  /**
   * A refused navigation in a tab the client opened blank for it (Playwright's newPage then
   * goto, Playwright MCP's `browser_tabs new <url>`) would leave an empty tab behind: the
   * refusal closes that tab too. A tab that ever showed a page stays.
   */
  navigation(v: Verdict, req: CdpRequest): Verdict {
    if (!('refuse' in v) || req.sessionId === undefined) return v
    const targetId = this.#sessions.get(req.sessionId)
    if (targetId === undefined || !this.#fresh.delete(targetId)) return v
    const id = this.#ownReplyId++
    this.#ownReplies.add(`${req.sessionId}|${id}`)
    return { ...v, toBrowser: [JSON.stringify({ id, method: 'Page.close', sessionId: req.sessionId })] }
  }

  /** Browser.setDownloadBehavior: deny passes; anything else is downgraded to deny on the default context or one of ours, refused elsewhere. */
  downloadBehavior(p: Params, req: CdpRequest): Verdict {
    if (p.behavior === 'deny' && p.downloadPath === undefined) return forward(req)
    const ctx = p.browserContextId
    if (ctx !== undefined && !this.owns(ctx)) return { refuse: 'download behaviour of the session’s own context is the pod’s' }
    // Playwright's connectOverCDP asks for allowAndName into a folder of the CLIENT's
    // machine for every context it initialises, and its newContext() always sends a
    // path; refusing would fail both. The pod never writes where a client says:
    // downloads in these contexts are denied (and a download's path never reaches the
    // client: observe removes it from the progress events).
    const params: Params = { behavior: 'deny' }
    if (ctx !== undefined) params.browserContextId = ctx
    if (typeof p.eventsEnabled === 'boolean') params.eventsEnabled = p.eventsEnabled
    return forward({ ...req, params })
  }

  /** Forwards `req`, and reads its answer when it comes (observe). */
  expect(req: CdpRequest, method: Expected, targetId?: string): Verdict {
    const key = `${req.sessionId ?? ''}|${req.id}`
    if (!this.#pending.has(key)) this.#pendingIds.set(req.id, (this.#pendingIds.get(req.id) ?? 0) + 1)
    const url = req.params?.url
    const blank = method === 'Target.createTarget' && (url === undefined || url === '' || (typeof url === 'string' && /^about:blank$/i.test(url)))
    this.#pending.set(key, { method, targetId, blank })
    // a client that never reads its answers cannot grow this without bound
    if (this.#pending.size > 10_000) this.#forget(this.#pending.keys().next().value!)
    return forward(req)
  }

  #forget(key: string): void {
    if (!this.#pending.delete(key)) return
    const id = Number(key.slice(key.indexOf('|') + 1))
    const n = (this.#pendingIds.get(id) ?? 1) - 1
    if (n > 0) this.#pendingIds.set(id, n)
    else this.#pendingIds.delete(id)
  }

  #learn(info: TargetInfoLike | undefined): boolean {
    if (!info || typeof info.targetId !== 'string') return false
    const privileged = privilegedTarget(info)
    this.#targets.set(info.targetId, privileged)
    if (this.#targets.size > 10_000) this.#targets.delete(this.#targets.keys().next().value!)
    if (privileged) for (const [sid, tid] of this.#sessions) if (tid === info.targetId) this.#blocked.add(sid)
    return privileged
  }

  /**
   * A browser message on its way to the client. Parsed only when it can matter (a Target
   * event, a download's progress, a message of a blocked session, an answer the filter
   * waits for); everything else passes untouched.
   */
  observe(data: RawData): Observed {
    const buf = data as Buffer
    const head = buf.toString('latin1', 0, 64)
    const event = /^\{"method":"(Target\.\w+|Browser\.downloadProgress)"/.exec(head)?.[1]
    const reply = event ? undefined : /^\{"id":(\d+),/.exec(head)?.[1]
    const waited = reply !== undefined && this.#pendingIds.has(Number(reply))
    if (reply !== undefined && Number(reply) >= OWN_REPLY_IDS && this.#ownReplies.size) {
      const sid = /"sessionId":"([^"]{1,200})"\}$/.exec(buf.toString('latin1', Math.max(0, buf.length - 240)))?.[1]
      if (this.#ownReplies.delete(`${sid ?? ''}|${reply}`)) return { toClient: null }
    }
    // Chromium writes a message's sessionId last: a blocked session is told by the tail alone
    const tailSession = this.#blocked.size ? /"sessionId":"([^"]{1,200})"\}$/.exec(buf.toString('latin1', Math.max(0, buf.length - 240)))?.[1] : undefined
    if (tailSession !== undefined && this.#blocked.has(tailSession)) return { toClient: null }
    if (!event && !waited) return { toClient: data }
    let msg: { id?: number; method?: string; sessionId?: string; params?: Record<string, any>; result?: Record<string, any>; error?: unknown }
    try {
      msg = JSON.parse(data.toString())
    } catch {
      return { toClient: data }
    }
    // nothing of a session attached to Chromium's own pages reaches the client
    if (msg.sessionId !== undefined && this.#blocked.has(msg.sessionId)) return { toClient: null }
    if (event) return this.#event(event, msg, data)
    if (!waited) return { toClient: data }
    const key = `${msg.sessionId ?? ''}|${msg.id}`
    const asked = this.#pending.get(key)
    if (!asked) return { toClient: data }
    this.#forget(key)
    const r = msg.result
    if (!r) return { toClient: data }
    switch (asked.method) {
      case 'Target.createBrowserContext':
        if (typeof r.browserContextId === 'string') this.#own.add(r.browserContextId)
        return { toClient: data }
      case 'Target.createTarget':
        // a target the client opened itself: at a URL the filter allowed
        if (typeof r.targetId === 'string') {
          this.#targets.set(r.targetId, false)
          if (asked.blank) this.#fresh.add(r.targetId)
        }
        return { toClient: data }
      case 'Target.attachToTarget':
        if (typeof r.sessionId === 'string' && asked.targetId) this.#sessions.set(r.sessionId, asked.targetId)
        return { toClient: data }
      case 'Target.getTargets': {
        if (!Array.isArray(r.targetInfos)) return { toClient: data }
        const shown = r.targetInfos.filter((info: TargetInfoLike) => !this.#learn(info))
        return { toClient: shown.length === r.targetInfos.length ? data : JSON.stringify({ ...msg, result: { ...r, targetInfos: shown } }) }
      }
      case 'Target.getTargetInfo':
        if (!this.#learn(r.targetInfo)) return { toClient: data }
        return { toClient: refusal(msg.id, msg.sessionId, 'Target.getTargetInfo is refused: Chromium’s own pages are not available over CDP') }
      case 'SystemInfo.getInfo':
        // the command line names the pod's profile directory and binary
        return { toClient: typeof r.commandLine === 'string' && r.commandLine ? JSON.stringify({ ...msg, result: { ...r, commandLine: '' } }) : data }
      default:
        return { toClient: data }
    }
  }

  #event(method: string, msg: { params?: Record<string, any> }, data: RawData): Observed {
    const params = msg.params ?? {}
    switch (method) {
      case 'Target.targetCreated':
      case 'Target.targetInfoChanged': {
        const info = params.targetInfo
        if (this.#fresh.size && typeof info?.url === 'string' && info.url !== '' && !/^about:blank$/i.test(info.url)) this.#fresh.delete(info.targetId)
        return { toClient: this.#learn(info) ? null : data }
      }
      case 'Target.targetDestroyed':
      case 'Target.targetCrashed':
        this.#fresh.delete(params.targetId)
        return { toClient: this.#targets.get(params.targetId) ? null : data }
      case 'Target.attachedToTarget': {
        const sid = params.sessionId
        if (typeof sid !== 'string') return { toClient: data }
        if (typeof params.targetInfo?.targetId === 'string') this.#sessions.set(sid, params.targetInfo.targetId)
        if (!this.#learn(params.targetInfo)) return { toClient: data }
        // attached behind the client's back (auto-attach): kept out of its reach, and let run if it waits
        this.#blocked.add(sid)
        const toBrowser = params.waitingForDebugger ? [JSON.stringify({ id: ++this.#ownId, method: 'Runtime.runIfWaitingForDebugger', sessionId: sid })] : undefined
        return { toClient: null, toBrowser }
      }
      case 'Target.detachedFromTarget': {
        const sid = params.sessionId
        this.#sessions.delete(sid)
        return { toClient: this.#blocked.delete(sid) ? null : data }
      }
      case 'Browser.downloadProgress':
        // where the pod keeps a download is the pod's
        if (params.filePath === undefined) return { toClient: data }
        return { toClient: JSON.stringify({ ...msg, params: { ...params, filePath: undefined } }) }
      default:
        return { toClient: data }
    }
  }
}

// --- the relay ---------------------------------------------------------------------------

export interface CdpProxyOptions {
  session: PodSession
  /** the tap on Chromium's pipe (cdp-pipe.ts), or undefined: no CDP on this pod */
  tap: CdpTap | undefined
  /** error lines (never a message's content) */
  log?: (line: string) => void
}

/** A client that reads slower than Chromium writes is dropped past this: the pipe is shared, so it cannot be paused for one client. */
const CLIENT_BACKLOG = CDP_MAX_BROWSER_MESSAGE

export class CdpProxy {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: CDP_MAX_CLIENT_MESSAGE, perMessageDeflate: false })
  readonly #sockets = new Set<WebSocket>()
  readonly #channels = new Set<CdpChannel>()
  readonly #opts: CdpProxyOptions
  #closed = false

  constructor(opts: CdpProxyOptions) {
    this.#opts = opts
  }

  /** Clients connected now. */
  get clients(): number {
    return cdpClients(this.#opts.session)
  }

  /** An authorized /v1/cdp upgrade (pod-api.ts checked the pod token). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy())
    const { session, tap } = this.#opts
    if (this.#closed || !tap || !session.configured || session.extensionsLoaded) return void socket.end(upgradeRefusal(upgradeErrors.cdpUnavailable()))
    // a page a secret was typed into may still hold it: no raw access to it, ever; once
    // admitted the client is counted, so a fill starting while Chromium answers is refused
    const release = beginCdpClient(session)
    if (!release) return void socket.end(upgradeRefusal(upgradeErrors.cdpAfterFill()))
    let settled = false
    const fail = () => {
      if (settled) return
      settled = true
      release()
      if (!socket.destroyed) socket.end(upgradeRefusal(upgradeErrors.cdpUnavailable()))
    }
    // the client went away while Chromium was answering
    socket.once('close', () => { if (!settled) { settled = true; release() } })
    const targetId = pageTargetOf(req.url)
    const filter = new CdpFilter()
    tap.open().then(
      async (channel) => {
        // a page endpoint (/devtools/page/<id>, as Chrome serves it): attached before the upgrade, so an unknown target is a 404
        const page = targetId === undefined ? undefined : await attachPage(channel, filter, targetId).catch(() => null)
        if (settled || this.#closed || page === null) {
          channel.close()
          if (page === null && !settled) {
            settled = true
            release()
            if (!socket.destroyed) socket.end(upgradeRefusal(upgradeErrors.cdpUnknownTarget()))
            return
          }
          return fail()
        }
        settled = true
        this.#wss.handleUpgrade(req, socket, head, (client) => this.#relay(client, channel, release, filter, page))
      },
      (e: unknown) => {
        if (!settled) this.#opts.log?.(`cdp: the browser gave no session (${e instanceof Error ? e.message : 'error'})`)
        fail()
      },
    )
  }

  #relay(client: WebSocket, upstream: CdpChannel, release: () => void, filter: CdpFilter, page: PageAttachment | undefined): void {
    this.#sockets.add(client)
    this.#channels.add(upstream)
    let done = false
    const end = (code: number, reason: string) => {
      if (done) return
      done = true
      release()
      this.#sockets.delete(client)
      this.#channels.delete(upstream)
      closeQuietly(client, code, reason)
      upstream.close()
    }
    const toClient = (data: RawData | string) => {
      if (client.readyState !== WebSocket.OPEN) return
      if (client.bufferedAmount > CLIENT_BACKLOG) return end(1008, 'the client reads too slowly')
      client.send(data as Buffer | string, { binary: false })
    }
    client.on('message', (data, isBinary) => {
      if (isBinary) return end(1003, 'CDP messages are text')
      const req = parseRequest(data.toString())
      if ('invalid' in req) return toClient(refusal(req.id, req.sessionId, req.invalid))
      const asked = req.sessionId
      // a page endpoint's client speaks to its page without naming a session
      if (page && asked === undefined) req.sessionId = page.sessionId
      const verdict = filter.judge(req)
      if ('refuse' in verdict) {
        for (const m of verdict.toBrowser ?? []) upstream.send(m)
        return toClient(refusal(req.id, asked, `${req.method} is refused: ${verdict.refuse}`))
      }
      upstream.send(JSON.stringify(verdict.forward))
    })
    upstream.onMessage = (text) => {
      const seen = filter.observe(Buffer.from(text))
      for (const m of seen.toBrowser ?? []) upstream.send(m)
      if (seen.toClient === null) return
      if (!page) return toClient(seen.toClient)
      const out = pageMessage(page, String(seen.toClient))
      if (out === 'detached') return end(1000, 'the target closed')
      if (out !== null) toClient(out)
    }
    upstream.onClose = (why) => end(1011, why)
    client.on('close', () => end(1000, ''))
    client.on('error', () => end(1011, 'error'))
  }

  /** Closes every CDP connection and refuses new ones (the pod is closing). */
  close(): void {
    this.#closed = true
    for (const s of this.#sockets) closeQuietly(s, 1001, 'the session ended')
    for (const c of this.#channels) c.close()
    this.#sockets.clear()
    this.#channels.clear()
    this.#wss.close()
  }
}
