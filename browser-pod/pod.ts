// Assembles one pod: egress gateway, Chromium behind it, the session, the pod API.
// main.ts runs it as a process; tests may run it in-process.
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import type { BrowserKind } from '../crds/types.ts'
import { launchChromium } from './chromium.ts'
import { cdpTap } from './cdp-pipe.ts'
import { CdpProxy } from './cdp-proxy.ts'
import { launchCloak } from './cloak.ts'
import { EgressGateway, type TunnelDialer } from './egress-gateway.ts'
import { sameUidOnly } from './loopback-peer.ts'
import { createPodApi, rehearseRequests, warmParsers } from './pod-api.ts'
import { CompiledPolicy } from './egress-policy.ts'
import { oomKills } from './memory.ts'
import { isSandboxRefusal, SANDBOX_HELP, sandboxKind, SandboxUnavailableError, type SandboxSetting } from './sandbox.ts'
import { PodSession } from './session.ts'
import { ExtensionLauncher } from './extensions.ts'

export interface PodOptions {
  token: string
  /** chromium (headless, pooled) or cloak (headful on a virtual display, cloak.ts) */
  browserKind?: BrowserKind
  host?: string
  port?: number
  chromiumPath?: string
  hostAliases?: Record<string, string>
  denyCidrs?: string[]
  tunnel?: TunnelDialer
  /** Chromium's sandbox on (the default) or, only when the operator said so, off */
  sandbox?: SandboxSetting
  /** the host's loopback, not a pod network namespace's (embedded): the gateway then serves only this uid */
  sharedLoopback?: boolean
  log?: (line: string) => void
}

export interface Pod {
  port: number
  endpoint: string
  browser: Browser
  gateway: EgressGateway
  session: PodSession
  /** CDP connect: the /v1/cdp relay and its filter */
  cdp: CdpProxy
  /** Resolves when Chromium goes away on its own (crash) — the pod is then useless. */
  browserLost: Promise<void>
  /** Resolves when a page's renderer crashed and the container's memory cgroup counted an OOM kill. */
  outOfMemory: Promise<void>
  close(): Promise<void>
}

export async function startPod(opts: PodOptions): Promise<Pod> {
  const gateway = new EgressGateway({ admits: opts.sharedLoopback ? sameUidOnly() : undefined })
  await gateway.listen()
  let browser: Browser
  const sandbox = opts.sandbox ?? 'chromium'
  try {
    const launch = opts.browserKind === 'cloak' ? launchCloak : launchChromium
    const launching = launch({ proxyServer: gateway.proxyServer, executablePath: opts.chromiumPath, sandbox })
    warmParsers() // while Chromium starts
    browser = await launching
  } catch (e) {
    await gateway.close()
    // never a silent fallback to --no-sandbox: the pod fails and says what to change
    if (sandbox === 'chromium' && isSandboxRefusal(String((e as Error)?.message ?? e))) throw new SandboxUnavailableError(SANDBOX_HELP)
    throw e
  }
  let closing = false
  let lost = () => {}
  const browserLost = new Promise<void>((resolve) => (lost = resolve))
  browser.on('disconnected', () => { if (!closing) lost() })
  const session = new PodSession(browser, gateway, {
    hostAliases: opts.hostAliases ?? {},
    denyCidrs: opts.denyCidrs ?? [],
    tunnel: opts.tunnel,
    sandbox: sandboxKind(sandbox),
    // a cloak browser is its own profile and loads none
    extensions: opts.browserKind === 'cloak' ? undefined : new ExtensionLauncher({ proxyServer: gateway.proxyServer, executablePath: opts.chromiumPath, sandbox }),
  })
  // the session's pages may run in a second browser, the one that loads its extensions: its crash is the pod's too
  session.onExtensionBrowserLost(() => { if (!closing) lost() })
  // a renderer the OOM killer took leaves a crashed tab and a Running container: tell them
  // apart from other crashes by the cgroup's count (memory.ts says why the pod then exits)
  const oomBaseline = oomKills()
  const outOfMemory = new Promise<void>((resolve) => {
    if (oomBaseline === undefined) return // no memory cgroup to read: a host process
    session.onPage((page) => {
      page.on('crash', () => {
        if ((oomKills() ?? 0) > oomBaseline) resolve()
      })
    })
  })
  // a warm pod opens its context before any session claims it; a cloak pod has one
  // context (its profile) and opens it at configure, with the session's auth-state
  if (opts.browserKind !== 'cloak') session.prewarm()
  // CDP connect relays over Chromium's pipe (cdp-pipe.ts); a cloak browser offers none
  const cdp = new CdpProxy({ session, tap: opts.browserKind === 'cloak' ? undefined : cdpTap(browser), log: opts.log })
  const server = createPodApi({ token: opts.token, session, log: opts.log, cdp })
  const host = opts.host ?? '127.0.0.1'
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(opts.port ?? 0, host, () => resolve())
    })
  } catch (e) {
    cdp.close()
    await browser.close().catch(() => {}) // the process is exiting; a browser that is already gone is closed
    await gateway.close()
    throw e
  }
  const port = (server.address() as AddressInfo).port
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  // the claim's configure call then runs compiled code (rehearseRequests says why); the
  // policy is compiled once with the pod's own ranges for the same reason
  new CompiledPolicy({ mode: 'platform', declaredHosts: [], denyCidrs: opts.denyCidrs ?? [], hostAliases: opts.hostAliases ?? {} })
  await rehearseRequests(endpoint, opts.token)

  let closed: Promise<void> | undefined
  const close = () =>
    (closed ??= (async () => {
      closing = true
      // CDP clients first: their sockets are upgraded, so closeAllConnections does not reach them
      cdp.close()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await session.close()
      await browser.close().catch(() => {}) // the process is exiting; a browser that is already gone is closed
      await gateway.close()
    })())

  return { port, endpoint, browser, gateway, session, cdp, browserLost, outOfMemory, close }
}
