// One pod, one session. A warm pod has Chromium running and waits for configure,
// which sets the egress policy and opens the browser context and its page.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { errors } from '../contracts/errors.ts'
import type { ConfigureInput, ConsoleMessage, SessionStorageEntry } from '../contracts/node-api.ts'
import type { EgressGateway, TunnelDialer } from './egress-gateway.ts'
import { EchoGuard } from './echo-guard.ts'
import { SessionFiles } from './session-files.ts'
import { NetworkLog } from './network-log.ts'

const CONSOLE_LIMIT = 1000
export const ACTION_TIMEOUT_MS = 10_000
export const NAVIGATION_TIMEOUT_MS = 30_000

export interface SessionDefaults {
  hostAliases: Record<string, string>
  denyCidrs: string[]
  /** The local-reach tunnel, once one exists; local/split without it refuse local targets. */
  tunnel?: TunnelDialer
}

export class PodSession {
  sessionId?: string
  context?: BrowserContext
  private _page?: Page
  private configuring = false
  readonly consoleMessages: ConsoleMessage[] = []
  /** Fingerprints of the secrets filled in this session; the node API masks them in
   * every string it sends (echo-guard.ts). Its key is random per pod, i.e. per session. */
  readonly echoGuard = new EchoGuard()
  /** what runs on every page of the context, the first one, tabs and popups alike */
  private readonly pageHooks: Array<(page: Page) => void> = []
  /** files put into the session and the downloads its pages made */
  readonly files: SessionFiles
  /** the requests the session's pages made (never a body or a credential header) */
  readonly network: NetworkLog

  constructor(
    readonly browser: Browser,
    readonly gateway: EgressGateway,
    private readonly defaults: SessionDefaults,
  ) {
    this.files = new SessionFiles(this)
    this.network = new NetworkLog(this)
  }

  /** Runs `hook` on every page of the session, those open now and every one opened later (tabs, popups). */
  onPage(hook: (page: Page) => void): void {
    this.pageHooks.push(hook)
    for (const page of this.context?.pages() ?? []) hook(page)
  }

  private watchPage(page: Page): void {
    page.on('console', (m) => this.pushConsole(m.type(), m.text()))
    page.on('pageerror', (e) => this.pushConsole('pageerror', e.message))
    for (const hook of this.pageHooks) hook(page)
  }

  get configured(): boolean {
    return this._page !== undefined
  }

  /** The session's page; 409 before configure. */
  get page(): Page {
    if (!this._page) throw errors.notConfigured()
    return this._page
  }

  private warm?: Promise<{ context: BrowserContext; page: Page } | undefined>

  /** Opens the default context and page ahead of any session (warm pool). */
  prewarm(): void {
    this.warm = this.openContext({ viewport: { width: 1280, height: 720 } }).catch(() => undefined) // a failed prewarm just means configure opens the context itself
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
    if (this.configuring || this._page) throw errors.alreadyConfigured()
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
      if (opened && input.viewport) await opened.page.setViewportSize(input.viewport)
      if (!opened) {
        try {
          opened = await this.openContext({
            viewport: input.viewport ?? { width: 1280, height: 720 },
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
      this.context = context
      this.sessionId = input.sessionId
      this._page = page
    } finally {
      this.configuring = false
    }
  }

  private pushConsole(type: string, text: string): void {
    this.consoleMessages.push({ type, text, time: Date.now() })
    if (this.consoleMessages.length > CONSOLE_LIMIT) this.consoleMessages.splice(0, this.consoleMessages.length - CONSOLE_LIMIT)
  }

  async close(): Promise<void> {
    await this.warm?.then((w) => w?.context.close()).catch(() => {}) // see above
    await this.context?.close().catch(() => {}) // closing: a context the browser already dropped is closed
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
