// The session's files: those put in over the API and the downloads its pages made, within
// FILE_MAX_BYTES / FILE_MAX_COUNT, in one temp directory per pod; nothing of a file is logged.
// Every page is watched twice: Playwright's download event is the authoritative size check,
// and a CDP watch on download progress cancels an oversized download early so it never
// fills the disk. A refused download is listed with its reason; the session goes on.
import { open, rm, stat, writeFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import type { Download, Page } from 'playwright-core'
import { errors } from '../contracts/errors.ts'
import { newId } from '../contracts/ids.ts'
import { FILE_MAX_BYTES, FILE_MAX_COUNT } from '../contracts/operations/drive-files.ts'
import type { PodOutput } from '../contracts/pod-api.ts'
import { podDir } from './pod-dirs.ts'

/** What the keeper needs of the pod's session (PodSession; not imported, so session.ts and this file stay acyclic). */
export interface PageSource {
  /** runs the hook on every page of the session, open now or opened later (tabs, popups) */
  onPage(hook: (page: Page) => void): void
}

export type FileInfo = PodOutput<'file_put'>
type State = FileInfo['state']

/** Records kept in all (refused and failed downloads are dropped oldest first past it). */
const RECORDS_MAX = FILE_MAX_COUNT + 80
/** Cancels by the progress watch not yet matched to Playwright's report of them. */
const CANCELS_MAX = 50

interface Entry {
  info: FileInfo
  /** where the bytes are (complete files only) */
  path: string
}

/** What a file input is given: the file's name, type and bytes. */
export interface FilePayload {
  name: string
  mimeType: string
  buffer: Buffer
}

// --- media types by extension (downloads carry none; a put may omit it) ---------------

const TYPES: Record<string, string> = {
  '.txt': 'text/plain', '.csv': 'text/csv', '.html': 'text/html', '.htm': 'text/html', '.json': 'application/json', '.xml': 'application/xml',
  '.pdf': 'application/pdf', '.zip': 'application/zip', '.gz': 'application/gzip', '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg',
  '.gif': 'image/gif', '.webp': 'image/webp', '.svg': 'image/svg+xml', '.ics': 'text/calendar', '.md': 'text/markdown',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
}
export function guessMimeType(name: string): string {
  return TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream'
}

/** A download's failure as Chromium words it (canceled, NETWORK_FAILED …), nothing longer. */
function failureReason(text: string | null): string {
  return text && /^[A-Za-z0-9_.:-]{1,80}$/.test(text) ? text : 'failed'
}

export class SessionFiles {
  readonly #entries: Entry[] = []
  #dir?: string
  /** downloads the progress watch cancelled for their size, until Playwright reports them */
  readonly #cancels: Array<{ url: string; name: string; size: number }> = []

  constructor(session: PageSource) {
    session.onPage((page) => this.#watch(page))
  }

  /** Every file, oldest first. */
  list(): FileInfo[] {
    return this.#entries.map((e) => ({ ...e.info }))
  }

  /** Keeps a file put over the API; refused over the size or the count limit. */
  async put(name: string, bytes: Buffer, mimeType?: string): Promise<FileInfo> {
    if (bytes.length > FILE_MAX_BYTES) throw errors.fileTooLarge(FILE_MAX_BYTES)
    if (this.#held() >= FILE_MAX_COUNT) throw errors.tooManyFiles(FILE_MAX_COUNT)
    const entry = this.#add({ name, size: bytes.length, mimeType: mimeType ?? guessMimeType(name), source: 'upload', state: 'in_progress' })
    try {
      await writeFile(entry.path, bytes, { mode: 0o600 })
    } catch (e) {
      this.#entries.splice(this.#entries.indexOf(entry), 1)
      await rm(entry.path, { force: true }).catch(() => {}) // a partial write, if any; the put fails either way
      throw e
    }
    entry.info.state = 'complete'
    return { ...entry.info }
  }

  /** Part of a complete file's bytes: from offset, at most length. */
  async read(ref: string, offset: number, length: number): Promise<{ file: FileInfo; offset: number; bytes: Buffer; eof: boolean }> {
    const entry = this.#complete(ref)
    const size = entry.info.size ?? 0
    const n = Math.max(0, Math.min(length, size - offset))
    const bytes = Buffer.alloc(n)
    if (n > 0) {
      const fh = await open(entry.path, 'r')
      try {
        await fh.read(bytes, 0, n, offset)
      } finally {
        await fh.close()
      }
    }
    return { file: { ...entry.info }, offset, bytes, eof: offset + n >= size }
  }

  /** The files named (ids or names), whole, for a file input; every one must be complete. */
  async payloads(refs: readonly string[]): Promise<{ files: FileInfo[]; payloads: FilePayload[] }> {
    const entries = refs.map((r) => this.#complete(r))
    const payloads: FilePayload[] = []
    for (const e of entries) {
      const { bytes } = await this.read(e.info.id, 0, FILE_MAX_BYTES)
      payloads.push({ name: e.info.name, mimeType: e.info.mimeType, buffer: bytes })
    }
    return { files: entries.map((e) => ({ ...e.info })), payloads }
  }

  // --- lookups --------------------------------------------------------------------------

  /** files that count toward FILE_MAX_COUNT: kept, or on their way (a put or a download in progress) */
  #held(): number {
    return this.#entries.filter((e) => e.info.state === 'complete' || e.info.state === 'in_progress').length
  }

  /** By id; else by name, the most recent complete file of that name, else the most recent of any state. */
  #find(ref: string): Entry {
    const byId = this.#entries.find((e) => e.info.id === ref)
    if (byId) return byId
    let any: Entry | undefined
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i]
      if (e.info.name !== ref) continue
      if (e.info.state === 'complete') return e
      any ??= e
    }
    if (!any) throw errors.notFound('file')
    return any
  }

  #complete(ref: string): Entry {
    const entry = this.#find(ref)
    if (entry.info.state !== 'complete') throw errors.fileNotReady(entry.info.state.replace('_', ' '))
    return entry
  }

  #add(info: Omit<FileInfo, 'id' | 'time'>): Entry {
    this.#dir ??= podDir('files')
    const id = newId('nfile_')
    const entry: Entry = { info: { id, ...info, time: Date.now() }, path: join(this.#dir, id) }
    this.#entries.push(entry)
    // past the cap, the oldest refused or failed records go (kept files and those on their way stay)
    while (this.#entries.length > RECORDS_MAX) {
      const i = this.#entries.findIndex((e) => e.info.state === 'refused' || e.info.state === 'failed')
      if (i < 0) break
      this.#entries.splice(i, 1)
    }
    return entry
  }

  #settle(entry: Entry, state: State, fields: Partial<FileInfo> = {}): void {
    Object.assign(entry.info, fields, { state })
  }

  // --- downloads --------------------------------------------------------------------------

  #watch(page: Page): void {
    // a listener that threw would surface as an unhandled rejection: every failure ends in a record
    page.on('download', (d) => void this.#download(d).catch(() => {}))
    void this.#watchProgress(page).catch(() => {}) // the page closed before the watch attached, or CDP refused it: the size check after the download still holds
  }

  async #download(d: Download): Promise<void> {
    const suggested = d.suggestedFilename()
    const name = suggested || 'download'
    if (this.#held() >= FILE_MAX_COUNT) {
      this.#add({ name, size: null, mimeType: guessMimeType(name), source: 'download', state: 'refused', reason: 'too_many_files' })
      await d.cancel().catch(() => {}) // already finished or gone: nothing to stop
      await d.delete().catch(() => {}) // nothing was written, or the context closed and took it
      return
    }
    const entry = this.#add({ name, size: null, mimeType: guessMimeType(name), source: 'download', state: 'in_progress' })
    try {
      const path = await d.path().catch(() => null)
      if (!path) {
        const failure = failureReason(await d.failure().catch(() => null))
        const cancelled = failure === 'canceled' ? this.#takeCancel(d.url(), suggested) : undefined
        if (cancelled) this.#settle(entry, 'refused', { reason: 'too_large', size: cancelled.size })
        else this.#settle(entry, 'failed', { reason: failure })
        return
      }
      const size = (await stat(path)).size
      if (size > FILE_MAX_BYTES) {
        this.#takeCancel(d.url(), suggested) // the watch may have tried to cancel it too late
        this.#settle(entry, 'refused', { reason: 'too_large', size })
        return
      }
      await d.saveAs(entry.path)
      this.#settle(entry, 'complete', { size })
    } catch {
      // the copy failed (disk, or the context closed under it): listed as failed, never half kept
      await rm(entry.path, { force: true }).catch(() => {}) // nothing may have been written
      this.#settle(entry, 'failed', { reason: 'failed' })
    } finally {
      await d.delete().catch(() => {}) // Playwright's own copy; gone already if the context closed
    }
  }

  #takeCancel(url: string, name: string): { size: number } | undefined {
    const i = this.#cancels.findIndex((c) => c.url === url && c.name === name)
    return i < 0 ? undefined : this.#cancels.splice(i, 1)[0]
  }

  /** Cancels a download of this page once it announces or passes the size limit (CDP Page.downloadProgress). */
  async #watchProgress(page: Page): Promise<void> {
    const cdp = await page.context().newCDPSession(page)
    const { targetInfo } = await cdp.send('Target.getTargetInfo')
    const begun = new Map<string, { url: string; name: string }>()
    cdp.on('Page.downloadWillBegin', (e) => begun.set(e.guid, { url: e.url, name: e.suggestedFilename }))
    cdp.on('Page.downloadProgress', (e) => {
      const b = begun.get(e.guid)
      if (!b) return
      if (e.state !== 'inProgress') return void begun.delete(e.guid)
      const size = Math.max(e.totalBytes, e.receivedBytes)
      if (size <= FILE_MAX_BYTES) return
      begun.delete(e.guid)
      this.#cancels.push({ ...b, size })
      if (this.#cancels.length > CANCELS_MAX) this.#cancels.shift()
      // the download may have finished meanwhile: the size check after it refuses it then
      void cdp.send('Browser.cancelDownload', { guid: e.guid, browserContextId: targetInfo.browserContextId }).catch(() => {})
    })
    await cdp.send('Page.enable')
  }
}
