// The one place that says how Chromium is launched (CONVENTIONS.md). Every browser
// request must leave through the pod's egress gateway, so the proxy is not optional.
import { chromium, type Browser } from 'playwright-core'
import type { SandboxSetting } from './sandbox.ts'

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium'

/**
 * Flags on top of Playwright's own defaults (it already adds --headless, --disable-sync,
 * --no-first-run ...; repeating them is harmless and keeps this list readable as the full
 * contract). Chromium's sandbox stays on unless the operator turned it off: then, and only
 * then, --no-sandbox (sandbox.ts).
 */
export function chromiumArgs(sandbox: SandboxSetting = 'chromium'): string[] {
  return [
    '--headless',
    ...(sandbox === 'none' ? ['--no-sandbox'] : []),
    '--disable-gpu',
    '--disable-quic', // QUIC (UDP) would not traverse an HTTP proxy
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    // WebRTC may open UDP straight to any address (STUN/TURN, LAN candidates); only proxied
    // traffic is allowed, so the deny floor cannot be side-stepped through a peer connection.
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    // Defence in depth: Chromium should never resolve a name itself (the gateway resolves,
    // once per connection). Anything that tried to go direct fails to resolve.
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
    // Chromium's own calls home, measured through the gateway despite the flags above: its
    // account check (ListAccounts at accounts.google.com, four calls at start) and the
    // component updater (update.googleapis.com). They would leave through the session's
    // egress — a developer's tunnel included — for nobody's benefit. Both services are
    // pointed at a closed loopback port; measured: no request at all, to it or elsewhere.
    '--gaia-url=http://127.0.0.1:9',
    '--component-updater=url-source=http://127.0.0.1:9',
  ]
}

/**
 * browserKind cloak (cloak.ts): headful Chromium on a virtual display. It keeps every
 * flag above except --headless and --disable-gpu, so the egress flags (QUIC off, WebRTC
 * proxied-only, no DNS of its own) are the same by construction (RULE-33). The GPU
 * process stays on: on a node with a GPU the real WebGL renderer shows; without one
 * (measured here) WebGL is SwiftShader either way, as headless gives.
 */
export function cloakArgs(window: { width: number; height: number }, sandbox: SandboxSetting = 'chromium'): string[] {
  return [
    ...chromiumArgs(sandbox).filter((a) => a !== '--headless' && a !== '--disable-gpu'),
    // navigator.webdriver stays false (with --enable-automation dropped, below)
    '--disable-blink-features=AutomationControlled',
    '--ozone-platform=x11', // the virtual display is X11, whatever the host runs
    '--window-position=0,0',
    `--window-size=${window.width},${window.height}`,
    '--lang=en-US', // navigator.language(s) and Accept-Language agree
  ]
}

/**
 * Playwright defaults a cloak browser must not carry: --enable-automation sets
 * navigator.webdriver and shows the "controlled by automated software" bar;
 * --disable-popup-blocking lets a page open windows no real browser would.
 */
export const CLOAK_DROPPED_DEFAULT_ARGS = ['--enable-automation', '--disable-popup-blocking']

/**
 * CDP connect (cdp-proxy.ts): Chromium's DevTools server on a kernel-picked loopback port,
 * beside Playwright's own pipe; only the pod's CDP proxy is told where it is. In Kubernetes
 * that loopback is the pod's own; in the embedded runtime it is the host's and the server has
 * no authentication, so run it only where local users are trusted (docs/sessions.md#the-toolbox).
 * (The way out is a CDP multiplexer over Playwright's pipe, which Playwright does not allow.)
 */
export function devtoolsArgs(): string[] {
  return ['--remote-debugging-port=0']
}

/**
 * The browser's DevTools WebSocket endpoint (ws://127.0.0.1:N/devtools/browser/<id>), or
 * undefined. Playwright reads it from Chromium's "DevTools listening on" line when the
 * port flag is given; it keeps it on its in-process server object, which the public API
 * does not expose, so this reaches it through the in-process connection. Only a loopback
 * ws:// endpoint is accepted; anything else (a Playwright without that internal) leaves
 * CDP connect unavailable, never the pod.
 */
export function devtoolsEndpoint(browser: Browser): string | undefined {
  try {
    const connection = (browser as unknown as { _connection?: { toImpl?: (o: unknown) => { options?: { wsEndpoint?: unknown } } | undefined } })._connection
    const ws = connection?.toImpl?.(browser)?.options?.wsEndpoint
    if (typeof ws !== 'string') return undefined
    return /^ws:\/\/(127\.0\.0\.1|\[::1\]):\d{1,5}\/devtools\/browser\/[0-9a-f-]{1,64}$/.test(ws) ? ws : undefined
  } catch {
    return undefined // no such internal: CDP connect is unavailable (the pod answers 503)
  }
}

export interface LaunchOptions {
  /** http://127.0.0.1:<port> of the egress gateway. */
  proxyServer: string
  executablePath?: string
  sandbox: SandboxSetting
}

export async function launchChromium(opts: LaunchOptions): Promise<Browser> {
  return chromium.launch({
    executablePath: opts.executablePath || process.env.NIGHTJAR_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH,
    headless: true,
    // Playwright adds --no-sandbox unless told the sandbox is wanted
    chromiumSandbox: opts.sandbox === 'chromium',
    args: [...chromiumArgs(opts.sandbox), ...devtoolsArgs()],
    // Playwright adds --proxy-bypass-list=<-loopback>, so loopback goes through the gateway
    // too (platform egress must be able to refuse it).
    proxy: { server: opts.proxyServer },
    // The pod entry owns signal handling and shuts Chromium down itself.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    env: browserEnv(),
  })
}

/** Chromium inherits no NIGHTJAR_* variable: the pod token must never reach the browser. */
export function browserEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('NIGHTJAR_')) env[k] = v
  return env
}
