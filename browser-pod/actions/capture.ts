// Page captures: screenshot (PNG), PDF, and the console buffer the session keeps.
import type { PodInput, PodOutput } from '../../contracts/pod-api.ts'
import { errors } from '../../contracts/errors.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'
import { locate } from './selector.ts'
import type { ActionTable } from './types.ts'

export async function screenshot(session: PodSession, input: PodInput<'screenshot'>): Promise<PodOutput<'screenshot'>> {
  const page = session.page
  // a ref is checked (same document, still on the page) before anything is captured;
  // an element's pixels are the page's, so field masking holds for them as for the viewport
  const element = input.ref !== undefined || input.selector !== undefined ? await locate(page, input) : undefined
  try {
    const png = element ? await element.screenshot({ type: 'png', timeout: 10_000 }) : await page.screenshot({ type: 'png', fullPage: false })
    return { png: png.toString('base64') }
  } catch (e) {
    throw actionError(e, 'screenshot')
  }
}

// No PDF once a secret was filled (403 pdf_after_fill): a PDF carries the page's text layer,
// links and title in forms no scan after the print can reliably find, and masking before
// printing would race the page's scripts. Why in full: docs/personas.md#secrets-the-page-echoes
export async function pdf(session: PodSession): Promise<PodOutput<'pdf'>> {
  // filled, not active: a secret too short to fingerprint was still typed
  if (session.echoGuard.filled) throw errors.pdfAfterFill()
  let buf: Buffer
  try {
    buf = await session.page.pdf({ printBackground: true })
  } catch (e) {
    throw actionError(e, 'pdf')
  }
  // a fill that began while Chromium printed: the page may have held the secret when it was printed
  if (session.echoGuard.filled) throw errors.pdfAfterFill()
  return { pdf: buf.toString('base64') }
}

export function consoleMessages(session: PodSession): PodOutput<'console_messages'> {
  void session.page // 409 before configure, like every other route
  return { messages: [...session.consoleMessages] }
}

/** This file's rows of the pod's action table (actions/index.ts). */
export const captureActions = { screenshot, pdf, console_messages: consoleMessages } satisfies Partial<ActionTable>
