// A session's browser extensions at the pod: each one's files written under a private
// directory (0700, this pod's own, removed with it), then a second Chromium launched as a
// persistent context with exactly those extensions, behind the same egress gateway. Only
// the full Chromium has an extension system: the headless shell ignores --load-extension,
// so a pod running it refuses instead of pretending. Design: docs/extensions.md
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import { errors } from '../contracts/errors.ts'
import { browserEnv, chromiumArgs, DEFAULT_CHROMIUM_PATH } from './chromium.ts'
import type { SandboxSetting } from './sandbox.ts'

/** the binaries without an extension system (Debian's and Playwright's names for the headless shell) */
export const hasExtensionSystem = (executablePath: string): boolean => !/headless[-_]shell/.test(basename(executablePath))

/** a path inside an extension's folder, as the api-server checked it; anything else is refused again here */
const safePath = (p: string) => p.length > 0 && !p.startsWith('/') && !p.includes('\\') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..')

export interface ExtensionLauncherOptions {
  proxyServer: string
  executablePath?: string
  sandbox: SandboxSetting
}

export class ExtensionLauncher {
  #dir?: Promise<string>
  readonly #dirs: string[] = []
  readonly #opts: ExtensionLauncherOptions
  constructor(opts: ExtensionLauncherOptions) {
    this.#opts = opts
  }

  get executablePath(): string {
    return this.#opts.executablePath || process.env.NIGHTJAR_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH
  }

  #root(): Promise<string> {
    return (this.#dir ??= mkdtemp(join(tmpdir(), `nightjar-ext-${process.pid}-`)))
  }

  /** Writes one extension's files; its folder is named by its id. */
  async put(ext: { id: string; files: Array<{ path: string; dataBase64: string }> }): Promise<void> {
    if (!hasExtensionSystem(this.executablePath)) throw errors.extensionsUnsupported()
    if (!/^next_[0-9A-Za-z]{1,40}$/.test(ext.id)) throw errors.invalidRequest('id: must be an extension id')
    if (ext.files.some((f) => !safePath(f.path))) throw errors.invalidRequest('files: a path leaves the extension’s folder')
    const folder = join(await this.#root(), ext.id)
    await mkdir(folder, { recursive: true, mode: 0o700 })
    for (const f of ext.files) {
      const target = join(folder, f.path)
      await mkdir(dirname(target), { recursive: true, mode: 0o700 })
      await writeFile(target, Buffer.from(f.dataBase64, 'base64'), { mode: 0o600 })
    }
    if (!this.#dirs.includes(folder)) this.#dirs.push(folder)
  }

  get count(): number {
    return this.#dirs.length
  }

  /** Chromium with the extensions put so far, as one persistent context (new headless: the extension system is on). */
  async launch(viewport: { width: number; height: number }): Promise<BrowserContext> {
    if (!this.#dirs.length) throw errors.invalidRequest('no extension was put')
    const profile = join(await this.#root(), 'profile')
    await mkdir(profile, { mode: 0o700 })
    const list = this.#dirs.join(',')
    return chromium.launchPersistentContext(profile, {
      executablePath: this.executablePath,
      headless: true,
      chromiumSandbox: this.#opts.sandbox === 'chromium',
      // the same flags as every session's browser (egress, no calls home), plus these extensions and no other
      args: [...chromiumArgs(this.#opts.sandbox), `--disable-extensions-except=${list}`, `--load-extension=${list}`],
      ignoreDefaultArgs: ['--disable-extensions'],
      proxy: { server: this.#opts.proxyServer },
      viewport,
      acceptDownloads: true,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      env: browserEnv(),
    })
  }

  async close(): Promise<void> {
    const dir = await this.#dir?.catch(() => undefined)
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {}) // best effort: the pod's own tmp goes with the pod
  }
}
