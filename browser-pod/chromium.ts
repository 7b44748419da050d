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
    // no SwiftShader: the GPU process then runs under seccomp-bpf like the renderers (with it,
    // Chromium leaves that process unsandboxed in the pod's network namespace); costs WebGL
    '--disable-software-rasterizer',
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
 * flag above except --headless and the GPU switches, so the egress flags (QUIC off, WebRTC
 * proxied-only, no DNS of its own) are the same by construction (RULE-33). The GPU
 * process stays on, for WebGL as a real browser has it (SwiftShader without a GPU): its
 * price is that process unsandboxed (docs/security.md).
 */
export function cloakArgs(window: { width: number; height: number }, sandbox: SandboxSetting = 'chromium'): string[] {
  return [
    ...chromiumArgs(sandbox).filter((a) => a !== '--headless' && a !== '--disable-gpu' && a !== '--disable-software-rasterizer'),
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
    // no --remote-debugging-port: CDP goes over Playwright's pipe only (cdp-pipe.ts)
    args: chromiumArgs(opts.sandbox),
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
