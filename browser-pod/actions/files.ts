// The pod's actions for contracts/operations/drive-files.ts: files put into the
// session, set into file inputs, listed and read back. The files themselves are kept
// by the session (session-files.ts).
import { errors } from '../../contracts/errors.ts'
import { FILE_MAX_BYTES, FILE_READ_MAX_BYTES } from '../../contracts/operations/drive-files.ts'
import type { fileContracts } from '../../contracts/operations/drive-files.ts'
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'
import { locate } from './selector.ts'
import type { ActionTable } from './types.ts'

export async function filePut(session: PodSession, input: PodInput<'file_put'>): Promise<PodOutput<'file_put'>> {
  void session.page // 409 before configure, like every other route
  return session.files.put(input.name, Buffer.from(input.contentBase64, 'base64'), input.mimeType)
}

export async function fileUpload(session: PodSession, input: PodInput<'file_upload'>): Promise<PodOutput<'file_upload'>> {
  const page = session.page
  // the element is named rightly and every file is found and complete before the page changes
  const element = await locate(page, input)
  const { files, payloads } = await session.files.payloads(input.files)
  try {
    // Playwright sets nothing, and says nothing, for an <input> of another type: asked first
    if (!(await element.evaluate(isFileInput))) throw errors.notAFileInput()
    await element.setInputFiles(payloads)
  } catch (e) {
    throw uploadError(e)
  }
  return { ok: true, url: page.url(), files }
}

/** In the page: the element, or the control of the label it is in (as Playwright retargets), is an <input type=file>. */
function isFileInput(el: Element): boolean {
  let target: Element | null = el
  if (!el.matches('input, textarea, select')) target = el.closest('label')?.control ?? el
  return target instanceof HTMLInputElement && target.type === 'file'
}

/** Playwright's refusals of setInputFiles, as the catalogue's; anything else as any action's. */
function uploadError(e: unknown) {
  const msg = e instanceof Error ? e.message : ''
  if (/Non-multiple file input can only accept single file/.test(msg)) return errors.singleFileInput()
  if (/Node is not an HTMLInputElement|Not an <input> element|Not an input\[type=file\] element|Node is not of type HTMLElement/.test(msg)) return errors.notAFileInput()
  return actionError(e, 'file_upload')
}

export function fileList(session: PodSession): PodOutput<'file_list'> {
  void session.page
  return { files: session.files.list() }
}

export async function fileRead(session: PodSession, input: PodInput<'file_read'>): Promise<PodOutput<'file_read'>> {
  void session.page
  const offset = Number(input.offset ?? 0)
  const length = Number(input.length ?? FILE_READ_MAX_BYTES)
  const r = await session.files.read(input.fileId, offset, length)
  // A page can save a filled field into a download; the bytes are opaque to the reply's
  // scrub, so after a fill the whole file is scanned (a part read would miss a secret
  // that straddles two parts) and one that carries a secret is never returned.
  if (session.echoGuard.active) {
    const whole = (await session.files.read(input.fileId, 0, FILE_MAX_BYTES)).bytes
    if (carriesSecret(session, whole)) throw errors.fileCarriesSecret()
  }
  return { file: r.file, offset: r.offset, bytes: r.bytes.length, eof: r.eof, contentBase64: r.bytes.toString('base64') }
}

/** The file's bytes read as UTF-8 and as Latin-1 (a single-byte page encoding): does either show a filled secret? */
function carriesSecret(session: PodSession, bytes: Buffer): boolean {
  return [bytes.toString('utf8'), bytes.toString('latin1')].some((text) => session.echoGuard.redact(text) !== text)
}

/** This file's rows of the pod's action table (actions/index.ts). */
export const fileActions: Pick<ActionTable, (typeof fileContracts)[number]['name']> = {
  file_put: filePut,
  file_upload: fileUpload,
  file_list: fileList,
  file_read: fileRead,
}
