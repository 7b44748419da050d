// The one place that says how Chromium is launched (CONVENTIONS.md). Every browser
// request must leave through the pod's egress gateway, so the proxy is not optional.
import { chromium, type Browser } from 'playwright-core'

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium'

/**
 * Flags on top of Playwright's own defaults (it already adds --headless, --no-sandbox,
 * --disable-sync, --no-first-run ...; repeating them is harmless and keeps this list
 * readable as the full contract).
 */
export function chromiumArgs(): string[] {
  return [
    '--headless',
    '--no-sandbox', // the pod is the sandbox: one session per pod, no shared profile
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
  ]
}

export interface LaunchOptions {
  /** http://127.0.0.1:<port> of the egress gateway. */
  proxyServer: string
  executablePath?: string
}

export async function launchChromium(opts: LaunchOptions): Promise<Browser> {
  return chromium.launch({
    executablePath: opts.executablePath || process.env.NIGHTJAR_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: chromiumArgs(),
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

/** Chromium inherits no NIGHTJAR_* variable: the node token must never reach the browser. */
function browserEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('NIGHTJAR_')) env[k] = v
  return env
}
