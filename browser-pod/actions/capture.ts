// Page captures: screenshot (PNG), PDF, and the console buffer the session keeps.
import type { ConsoleResult, PdfResult, ScreenshotInput, ScreenshotResult } from '../contract.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'

export async function screenshot(session: PodSession, input: ScreenshotInput): Promise<ScreenshotResult> {
  try {
    const png = await session.page.screenshot({ type: 'png', fullPage: input.fullPage ?? false })
    return { png: png.toString('base64') }
  } catch (e) {
    throw actionError(e, 'screenshot')
  }
}

export async function pdf(session: PodSession): Promise<PdfResult> {
  try {
    const buf = await session.page.pdf({ printBackground: true })
    return { pdf: buf.toString('base64') }
  } catch (e) {
    throw actionError(e, 'pdf')
  }
}

export function consoleMessages(session: PodSession): ConsoleResult {
  void session.page // 409 before configure, like every other route
  return { messages: [...session.consoleMessages] }
}
