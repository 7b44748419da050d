// browserKind cloak: headful Chromium on a private Xvfb display with a persistent
// profile and without Playwright's automation tells; the egress gateway and deny floor
// apply unchanged (RULE-33). The display, profile and Chromium go with the pod; a profile
// directory left by a pod killed outright is swept by the next cloak launch.
// Design: docs/cloak.md
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import { errors } from '../contracts/errors.ts'
import type { SandboxSetting } from './sandbox.ts'
import { browserEnv, cloakArgs, CLOAK_DROPPED_DEFAULT_ARGS, DEFAULT_CHROMIUM_PATH } from './chromium.ts'
import { alive } from '../contracts/process.ts'

/** The virtual screen: a common desktop size, larger than the window, as on a real desk. */
export const CLOAK_SCREEN = { width: 1920, height: 1080 }
/** The window before the session's viewport is known (it is then fitted, see fitWindow). */
const INITIAL_WINDOW = { width: 1366, height: 900 }
const DIR_PREFIX = 'nightjar-cloak-'
const DISPLAY_TIMEOUT_MS = 10_000

export interface CloakLaunchOptions {
  /** http://127.0.0.1:<port> of the egress gateway */
  proxyServer: string
  executablePath?: string
  sandbox: SandboxSetting
}

/**
 * Starts a cloak browser. The result is the real Browser with two methods replaced:
 * newContext() hands out the persistent profile's context (once: one session per pod),
 * and close() also stops the display and removes the profile.
 */
export async function launchCloak(opts: CloakLaunchOptions): Promise<Browser> {
  await sweepStaleDirs()
  // <dir>/profile is Chromium's user data dir; <dir>/Xauthority the display's cookie
  const dir = await mkdtemp(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`))
  let display: VirtualDisplay | undefined
  let context: BrowserContext | undefined
  let cleaning: Promise<void> | undefined
  const cleanup = () =>
    (cleaning ??= (async () => {
      await context?.close().catch(() => {}) // shutting down: a context that is already gone is closed
      await display?.stop()
      await rm(dir, { recursive: true, force: true }).catch(() => {}) // best effort: the next start sweeps stale profiles (sweepStaleProfiles)
    })())
  try {
    const profile = join(dir, 'profile')
    await mkdir(profile, { mode: 0o700 })
    display = await startDisplay(join(dir, 'Xauthority'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: opts.executablePath || process.env.NIGHTJAR_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH,
      headless: false,
      // no viewport emulation: the page is the real window's content area, so screen,
      // outer and inner sizes agree the way they do on a desktop
      viewport: null,
      chromiumSandbox: opts.sandbox === 'chromium',
      args: cloakArgs(INITIAL_WINDOW, opts.sandbox),
      ignoreDefaultArgs: CLOAK_DROPPED_DEFAULT_ARGS,
      proxy: { server: opts.proxyServer },
      acceptDownloads: false,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      env: { ...browserEnv(), DISPLAY: display.display, XAUTHORITY: display.authFile },
    })
  } catch (e) {
    await cleanup()
    throw e
  }
  const browser = context.browser()
  if (!browser) {
    await cleanup()
    throw new Error('cloak: the persistent context has no browser')
  }
  browser.once('disconnected', () => void cleanup())
  return cloakBrowser(browser, context, cleanup)
}

function cloakBrowser(browser: Browser, context: BrowserContext, cleanup: () => Promise<void>): Browser {
  let handedOut = false
  const newContext = async (options: BrowserContextOptions = {}): Promise<BrowserContext> => {
    // the profile is one context; a second session would share its cookies
    if (handedOut) throw new Error('cloak: the browser has one context and it is taken')
    handedOut = true
    // the real user agent is what UA-CH, navigator.platform and the UA string agree on
    if (options.userAgent) throw errors.cloakUserAgent()
    // restored before the session's page exists, so before the first navigation
    if (options.storageState) await context.setStorageState(options.storageState as Parameters<BrowserContext['setStorageState']>[0])
    return sessionContext(context, options.viewport ?? null)
  }
  return bound(browser, { newContext, close: cleanup })
}

/**
 * The profile's context, whose first newPage() becomes the session's only tab: the blank
 * start-up tab (it carries the --no-sandbox info bar) is closed, and the window is sized
 * so the page gets exactly the requested viewport inside real browser UI.
 */
function sessionContext(context: BrowserContext, viewport: { width: number; height: number } | null): BrowserContext {
  let first = true
  const newPage = async (): Promise<Page> => {
    const page = await context.newPage()
    if (!first) return page
    first = false
    for (const p of context.pages()) if (p !== page) await p.close().catch(() => {}) // a stray tab that closed itself is what we wanted
    if (viewport) await fitWindow(context, page, viewport)
    return page
  }
  return bound(context, { newPage })
}

/** Resizes the OS window (not an emulated viewport) so the page's inner size is `viewport`. */
async function fitWindow(context: BrowserContext, page: Page, viewport: { width: number; height: number }): Promise<void> {
  const cdp = await context.newCDPSession(page)
  try {
    const { windowId } = (await cdp.send('Browser.getWindowForTarget')) as { windowId: number }
    const [dx, dy] = await page.evaluate(() => [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight])
    await cdp.send('Browser.setWindowBounds', { windowId, bounds: { left: 0, top: 0, width: viewport.width + dx, height: viewport.height + dy } })
    await page
      .waitForFunction(([w, h]) => window.innerWidth === w && window.innerHeight === h, [viewport.width, viewport.height], { timeout: 5000 })
      .catch(() => {}) // a window manager-less display may round; the page still works
  } finally {
    await cdp.detach().catch(() => {}) // the CDP session only sized the window; detached or not, the page works
  }
}

/** `target` with some methods replaced; every other method is called on the real object. */
function bound<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === 'string' && prop in overrides) return overrides[prop]
      const v = Reflect.get(t, prop, t)
      return typeof v === 'function' ? v.bind(t) : v
    },
  })
}

// --- the virtual display --------------------------------------------------------------

interface VirtualDisplay {
  display: string
  authFile: string
  stop(): Promise<void>
}

/**
 * Xvfb on the first free display number (-displayfd: Xvfb picks it and writes it to
 * fd 3 once clients may connect, so parallel pods never race for a number). Access
 * needs a fresh random cookie (the window shows a logged-in session: another local user
 * must not be able to connect and capture it).
 */
async function startDisplay(authFile: string): Promise<VirtualDisplay> {
  const cookie = randomBytes(16)
  await writeFile(authFile, xauthority(cookie), { mode: 0o600 })
  cookie.fill(0)
  const { width, height } = CLOAK_SCREEN
  const proc = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp', '-auth', authFile, '-terminate'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d).slice(-500)))
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    proc.kill('SIGTERM')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 2000)
    await exited
    clearTimeout(timer)
  }
  try {
    const number = await new Promise<string>((resolve, reject) => {
      let out = ''
      const timer = setTimeout(() => reject(new Error('cloak: Xvfb did not report a display')), DISPLAY_TIMEOUT_MS)
      ;(proc.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
        out += d
        if (!out.includes('\n')) return
        clearTimeout(timer)
        resolve(out.trim())
      })
      proc.once('error', (e) => {
        clearTimeout(timer)
        reject(new Error(`cloak: cannot run Xvfb (${e.message}); install Debian xvfb`))
      })
      proc.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`cloak: Xvfb exited (${code}): ${stderr.trim().split('\n').pop() ?? ''}`))
      })
    })
    return { display: `:${number}`, authFile, stop }
  } catch (e) {
    await stop()
    throw e
  }
}

/**
 * One Xauthority entry: family FamilyWild (any address), no display number (any display),
 * MIT-MAGIC-COOKIE-1. Each field is a big-endian u16 length, then the bytes.
 */
function xauthority(cookie: Buffer): Buffer {
  const field = (b: Buffer) => {
    const len = Buffer.alloc(2)
    len.writeUInt16BE(b.length)
    return Buffer.concat([len, b])
  }
  return Buffer.concat([Buffer.from([0xff, 0xff]), field(Buffer.alloc(0)), field(Buffer.alloc(0)), field(Buffer.from('MIT-MAGIC-COOKIE-1')), field(cookie)])
}

/** Removes cloak directories whose pod process is gone (it was killed before its close ran). */
async function sweepStaleDirs(): Promise<void> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[])
  for (const name of entries) {
    const m = new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(name)
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue
    await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => {}) // best effort: a profile another process still holds stays until next time
  }
}

