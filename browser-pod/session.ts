// One pod, one session. A warm pod has Chromium running and waits for configure (egress
// policy, browser context, first tab). Every page of the context is a tab (tab_1, tab_2 …,
// never reused) watched alike by watchPage; one tab is active and every driving action acts
// on it. A new tab becomes active; closing the active one returns to the one before it, and
// closing the last opens a blank one so the session stays usable.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { SandboxKind } from '../crds/types.ts'
import { errors } from '../contracts/errors.ts'
import type { ConfigureInput, ConsoleMessage, EgressProxyInput, SessionStorageEntry } from '../contracts/pod-api.ts'
import { parseProxyUrl } from '../contracts/proxy.ts'
import { DEFAULT_VIEWPORT } from '../contracts/operations/fields.ts'
import type { EgressGateway, TunnelDialer } from './egress-gateway.ts'
import { EchoGuard } from './secrets/echo-guard.ts'
import { SessionFiles } from './session-files.ts'
import { NetworkLog } from './network-log.ts'
import { SessionDialogs } from './dialogs.ts'
import type { ExtensionLauncher } from './extensions.ts'

const CONSOLE_LIMIT = 1000
export const ACTION_TIMEOUT_MS = 10_000
export const NAVIGATION_TIMEOUT_MS = 30_000
/** The most tabs a session holds: tab_open past it is refused, a popup past it closed as it opens. */
export const MAX_TABS = 20

export interface SessionDefaults {
  hostAliases: Record<string, string>
  denyCidrs: string[]
  /** The local-reach tunnel, once one exists; local/split without it refuse local targets. */
  tunnel?: TunnelDialer
  /** what isolates this pod's pages, reported at configure */
  sandbox?: SandboxKind
  /** writes a session's extensions and launches the browser that loads them (extensions.ts); none: a pod that loads none */
  extensions?: ExtensionLauncher
}

/** One tab of the session: its id and its page. */
export interface Tab {
  readonly id: string
  readonly page: Page
}

type Viewport = { width: number; height: number }

export class PodSession {
  sessionId?: string
  context?: BrowserContext
  private configuring = false
  readonly consoleMessages: ConsoleMessage[] = []
  /** Fingerprints of the secrets filled in this session; the pod API masks them in
   * every string it sends (secrets/echo-guard.ts). Its key is random per pod, i.e. per session. */
  readonly echoGuard = new EchoGuard()
  /** what runs on every page of the context, the first one, tabs and popups alike */
  private readonly pageHooks: Array<(page: Page) => void | Promise<void>> = []
  /** per page: when the hooks' asynchronous set-up (the recorder's attach) is done */
  private readonly hooked = new WeakMap<Page, Promise<void>>()
  /** The session's JavaScript dialogs: each is answered as it opens, never left to block (dialogs.ts). */
  readonly dialogs = new SessionDialogs((text) => this.pushConsole('dialog', text))
  /** the open tabs, in the order they opened */
  private readonly openTabs: Tab[] = []
  /** the open tabs by when each was last active, most recent last */
  private recency: Tab[] = []
  private active?: Tab
  private tabCount = 0
  /** the viewport every tab gets, once resize (or a warm configure) set one the context does not have */
  private viewport?: Viewport
  /** set when the session (or its context) is closing: tabs then close without a replacement */
  private closing = false
  /** the blank tab opening because the last one closed */
  private replacing?: Promise<void>
  /** files put into the session and the downloads its pages made */
  readonly files: SessionFiles
  /** the requests the session's pages made (never a body or a credential header) */
  readonly network: NetworkLog

  readonly browser: Browser
  readonly gateway: EgressGateway
  private readonly defaults: SessionDefaults
  constructor(
    browser: Browser,
    gateway: EgressGateway,
    defaults: SessionDefaults,
  ) {
    this.browser = browser
    this.gateway = gateway
    this.defaults = defaults
    this.files = new SessionFiles(this)
    this.network = new NetworkLog(this)
  }

  /**
   * Runs `hook` on every page of the session, those open now and every one opened later
   * (tabs, popups). A hook that returns a promise has set-up to finish before the page's
   * next document loads: tab_open waits for it (whenHooked) before it navigates.
   */
  onPage(hook: (page: Page) => void | Promise<void>): void {
    this.pageHooks.push(hook)
    for (const page of this.context?.pages() ?? []) this.runHooks(page, [hook])
  }

  /** The set-up of every hook on `page` is done (a failed one counts as done: it reports itself). */
  whenHooked(page: Page): Promise<void> {
    return this.hooked.get(page) ?? Promise.resolve()
  }

  /** whenHooked for every page open now */
  whenOpenPagesHooked(): Promise<void> {
    return Promise.all((this.context?.pages() ?? []).map((page) => this.whenHooked(page))).then(() => undefined)
  }

  private runHooks(page: Page, hooks: ReadonlyArray<(page: Page) => void | Promise<void>>): void {
    const pending = hooks.map((hook) => hook(page)).filter((r): r is Promise<void> => r instanceof Promise)
    if (!pending.length) return
    this.hooked.set(page, Promise.all([this.whenHooked(page), ...pending]).then(() => undefined, () => undefined))
  }

  private watchPage(page: Page): void {
    page.on('console', (m) => this.pushConsole(m.type(), m.text()))
    page.on('pageerror', (e) => this.pushConsole('pageerror', e.message))
    page.on('dialog', (d) => void this.dialogs.answer(d, this.tabOf(page)?.id ?? ''))
    this.runHooks(page, this.pageHooks)
    // a page opened after configure (tab_open, a popup) is a tab; the first page is adopted by configure
    if (this.context && page.context() === this.context) this.adopt(page)
  }

  // --- tabs ----------------------------------------------------------------------------

  /** The open tabs, in the order they opened. */
  get tabs(): readonly Tab[] {
    return this.openTabs
  }

  /** The active tab; 409 before configure. */
  get activeTab(): Tab {
    if (!this.active) throw errors.notConfigured()
    return this.active
  }

  tabOf(page: Page): Tab | undefined {
    return this.openTabs.find((t) => t.page === page)
  }

  /** The open tab with this id; the one 404 otherwise (unknown, or closed). */
  tab(id: string): Tab {
    const tab = this.openTabs.find((t) => t.id === id)
    if (!tab) throw errors.notFound('tab')
    return tab
  }

  /** Resolves once the tabs are settled: no blank tab is still opening in place of the last one. */
  async settled(): Promise<void> {
    while (this.replacing) await this.replacing
  }

  /** Makes `page` a tab (once) and the active one; undefined for a page that is no tab (closed, or past MAX_TABS). */
  private adopt(page: Page): Tab | undefined {
    const known = this.tabOf(page)
    if (known) return known
    if (page.isClosed()) return undefined
    if (this.openTabs.length >= MAX_TABS) {
      // a page opening popups without end must not exhaust the pod
      this.pushConsole('tab', `a popup was closed as it opened: at most ${MAX_TABS} tabs can be open`)
      page.close().catch(() => {}) // it may be closing already; either way it is not a tab
      return undefined
    }
    const tab: Tab = { id: `tab_${++this.tabCount}`, page }
    this.openTabs.push(tab)
    page.on('close', () => this.dropTab(tab))
    // (configure has sized the first page already: a second resize is a wasted round trip to Chromium)
    const size = page.viewportSize()
    if (this.viewport && (size?.width !== this.viewport.width || size?.height !== this.viewport.height)) {
      page.setViewportSize(this.viewport).catch(() => {}) // a tab closing at once keeps no size
    }
    this.activate(tab)
    return tab
  }

  private activate(tab: Tab): void {
    this.active = tab
    this.recency = [...this.recency.filter((t) => t !== tab), tab]
  }

  private dropTab(tab: Tab): void {
    const i = this.openTabs.indexOf(tab)
    if (i < 0) return
    this.openTabs.splice(i, 1)
    this.recency = this.recency.filter((t) => t !== tab)
    if (this.active !== tab || this.closing) return
    const previous = this.recency.at(-1)
    if (previous) return this.activate(previous)
    // the last tab closed: a blank one takes its place (the old one stays active until it exists)
    const context = this.context
    if (!context) return
    const opening = context.newPage().then((page) => void this.adopt(page)).catch(() => {}) // the context is closing: no tab is needed
      .finally(() => {
        if (this.replacing === opening) this.replacing = undefined
      })
    this.replacing = opening
  }

  /** Opens a blank tab and makes it active (409 past MAX_TABS). */
  async openTab(): Promise<Tab> {
    await this.settled()
    if (this.openTabs.length >= MAX_TABS) throw errors.tabLimit(MAX_TABS)
    const page = await this.context!.newPage()
    // tab_open navigates next: the recorder must be in the page before its first document
    await this.whenHooked(page)
    const tab = this.adopt(page)
    if (!tab) {
      // a popup took the last place meanwhile (adopt closed this page), or the page closed at once
      throw this.openTabs.length >= MAX_TABS ? errors.tabLimit(MAX_TABS) : errors.browserClosed()
    }
    this.activate(tab)
    return tab
  }

  /** Makes `tab` the active tab and brings it to the front. */
  async selectTab(tab: Tab): Promise<void> {
    this.activate(tab)
    await tab.page.bringToFront()
  }

  /**
   * Closes `tab`, running its page's beforeunload handler: the dialog it may open is
   * answered like any other (dialogs.ts), and a "stay" answer keeps the tab open
   * (returns false). A handler that never returns is cut short by a plain close.
   */
  async closeTab(tab: Tab): Promise<boolean> {
    const page = tab.page
    let stop = () => {}
    let timer: NodeJS.Timeout | undefined
    try {
      const closed = new Promise<boolean>((resolve) => {
        if (page.isClosed()) return resolve(true)
        page.once('close', () => resolve(true))
        stop = this.dialogs.watch((p, entry) => {
          if (p === page && entry.type === 'beforeunload' && entry.answer === 'dismissed') resolve(false)
        })
        timer = setTimeout(() => resolve(page.close().then(() => true, () => true)), ACTION_TIMEOUT_MS)
      })
      await page.close({ runBeforeUnload: true }).catch(() => {}) // a page that closed meanwhile is what was asked
      const done = await closed
      await this.settled()
      return done
    } finally {
      stop()
      clearTimeout(timer)
    }
  }

  /** Sets the viewport of every tab, open now and opened later. */
  async resize(viewport: Viewport): Promise<void> {
    this.viewport = viewport
    await Promise.all(this.openTabs.map((t) => t.page.setViewportSize(viewport)))
  }

  get sandbox(): SandboxKind | undefined {
    return this.defaults.sandbox
  }

  get configured(): boolean {
    return this.active !== undefined
  }

  /** the session's pages run in a browser with extensions (extensions.ts): CDP connect is not offered there */
  extensionsLoaded = false
  readonly #extensionBrowserLost: Array<() => void> = []
  /** Calls `fn` if the extensions' browser goes away while the session has not closed (a crash): the pod is then useless. */
  onExtensionBrowserLost(fn: () => void): void {
    this.#extensionBrowserLost.push(fn)
  }

  /** Writes one extension's files, before loadExtensions (after configure, before the session is live). */
  async putExtension(ext: { id: string; files: Array<{ path: string; dataBase64: string }> }): Promise<void> {
    if (!this.configured) throw errors.notConfigured()
    if (this.extensionsLoaded) throw errors.alreadyConfigured()
    if (!this.defaults.extensions) throw errors.extensionsUnsupported()
    await this.defaults.extensions.put(ext)
  }

  /**
   * Moves the session into a browser that loads the extensions put: its context replaces
   * the one configure opened, whose only tab nobody has driven yet (the session is not live
   * until this answers), so the new browser's first page is tab_1. Once.
   */
  async loadExtensions(): Promise<number> {
    const launcher = this.defaults.extensions
    if (!this.configured) throw errors.notConfigured()
    if (this.extensionsLoaded) throw errors.alreadyConfigured()
    if (!launcher?.count) throw errors.invalidRequest('no extension was put')
    const old = this.context!
    const viewport = this.viewport ?? this.page.viewportSize() ?? DEFAULT_VIEWPORT
    const context = await launcher.launch(viewport)
    // (not `closing`: the context's own close event sets that when the browser dies)
    context.browser()?.on('disconnected', () => {
      if (!this.#closed) for (const fn of this.#extensionBrowserLost) fn()
    })
    this.extensionsLoaded = true
    this.openTabs.length = 0
    this.recency = []
    this.active = undefined
    this.tabCount = 0
    await old.close().catch(() => {}) // an unused context that is already gone is what was wanted
    this.closing = false // the old context's close said the session was closing; it is not
    context.setDefaultTimeout(ACTION_TIMEOUT_MS)
    context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS)
    context.on('close', () => {
      this.closing = true
    })
    this.context = context
    // the start-up page opened before anyone listened: watched here, every later one by the event
    const existing = context.pages()
    context.on('page', (p) => this.watchPage(p))
    for (const p of existing) this.watchPage(p)
    if (!existing.length) await context.newPage()
    const first = this.openTabs[0]
    if (first) this.activate(first)
    if (!this.active) throw errors.browserClosed()
    return launcher.count
  }

  /**
   * The session's upstream proxy, once, after configure (docs/proxy.md): the egress
   * gateway opens every direct connection through it from now on. Its credentials live
   * in the gateway's memory only.
   */
  setProxy(input: EgressProxyInput): void {
    if (!this.configured) throw errors.notConfigured()
    if (this.gateway.proxy) throw errors.alreadyConfigured()
    const a = parseProxyUrl(input.url)
    if (typeof a === 'string') throw errors.invalidRequest(`url: ${a}`)
    this.gateway.setProxy({
      ...a, username: input.username, password: input.username !== undefined ? (input.password ?? '') : undefined, platformProxy: input.platformProxy === true,
    })
  }

  /** The active tab's page, the one every driving action acts on; 409 before configure. */
  get page(): Page {
    return this.activeTab.page
  }

  private warm?: Promise<{ context: BrowserContext; page: Page } | undefined>

  /** Opens the default context and page ahead of any session (warm pool). */
  prewarm(): void {
    this.warm = this.openContext({ viewport: DEFAULT_VIEWPORT }).catch(() => undefined) // a failed prewarm just means configure opens the context itself
  }

  private async openContext(
    opts: { viewport: { width: number; height: number }; userAgent?: string; storageState?: never },
    sessionStorage?: SessionStorageEntry[],
  ): Promise<{ context: BrowserContext; page: Page }> {
    // downloads are kept, within limits, by SessionFiles (a download never breaks the session)
    const context = await this.browser.newContext({ ...opts, acceptDownloads: true })
    context.setDefaultTimeout(ACTION_TIMEOUT_MS)
    context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS)
    if (Array.isArray(sessionStorage) && sessionStorage.length) await context.addInitScript(restoreSessionStorage, sessionStorage)
    context.on('page', (p) => this.watchPage(p))
    const page = await context.newPage()
    return { context, page }
  }

  async configure(input: ConfigureInput): Promise<void> {
    if (this.configuring || this.active) throw errors.alreadyConfigured()
    this.configuring = true
    try {
      try {
        this.gateway.configure({
          mode: input.egress.mode,
          declaredHosts: input.egress.declaredHosts,
          denyCidrs: this.defaults.denyCidrs,
          hostAliases: this.defaults.hostAliases,
          tunnel: this.defaults.tunnel,
        })
      } catch (e) {
        throw errors.egressPolicyRejected((e as Error).message)
      }
      const { sessionStorage, ...playwrightState } = (input.storageState ?? {}) as { sessionStorage?: SessionStorageEntry[] }
      // A warm pod has a context open already; a plain session takes it (a viewport is a
      // cheap resize), so claiming a pod does not wait for a new context.
      const plain = !input.storageState && !input.userAgent
      let opened = plain ? await this.warm?.catch(() => undefined) : undefined // see prewarm: no warm context, open one now
      if (!opened) await this.warm?.then((w) => w?.context.close()).catch(() => {}) // the unused warm context is discarded; if it never opened there is nothing to close
      this.warm = undefined
      if (opened && input.viewport) {
        // the warm context was made with the default size: every tab gets the asked one
        this.viewport = input.viewport
        await opened.page.setViewportSize(input.viewport)
      }
      if (!opened) {
        try {
          opened = await this.openContext({
            viewport: input.viewport ?? DEFAULT_VIEWPORT,
            userAgent: input.userAgent,
            // Restored before the first navigation (cookies + localStorage).
            storageState: input.storageState ? (playwrightState as never) : undefined,
          }, sessionStorage)
        } catch (e) {
          // Never echo the state: it is credential-equivalent.
          if (input.storageState) throw errors.invalidStorageState()
          throw e
        }
      }
      const { context, page } = opened
      context.on('close', () => {
        this.closing = true
      })
      this.context = context
      this.sessionId = input.sessionId
      this.adopt(page)
    } finally {
      this.configuring = false
    }
  }

  private pushConsole(type: string, text: string): void {
    this.consoleMessages.push({ type, text, time: Date.now() })
    if (this.consoleMessages.length > CONSOLE_LIMIT) this.consoleMessages.splice(0, this.consoleMessages.length - CONSOLE_LIMIT)
  }

  #closed = false

  async close(): Promise<void> {
    this.#closed = true
    this.closing = true
    await this.warm?.then((w) => w?.context.close()).catch(() => {}) // see above
    await this.context?.close().catch(() => {}) // closing: a context the browser already dropped is closed
    await this.defaults.extensions?.close()
  }
}

/**
 * Runs in every new document: Playwright's storageState has no sessionStorage, so the
 * captured entries are put back for a fresh tab of the same origin.
 */
function restoreSessionStorage(entries: SessionStorageEntry[]): void {
  try {
    const mine = entries.find((e) => e.origin === location.origin)
    if (!mine || sessionStorage.length > 0) return
    for (const { name, value } of mine.entries) sessionStorage.setItem(name, value)
  } catch {
    // opaque origins have no sessionStorage
  }
}
