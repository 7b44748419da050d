// Page captures: screenshot (PNG), PDF, and the console buffer the session keeps.
import type { NodeOutput } from '../../contracts/node-api.ts'
import { actionError } from '../errors.ts'
import type { PodSession } from '../session.ts'
import type { ActionTable } from './types.ts'

export async function screenshot(session: PodSession): Promise<NodeOutput<'screenshot'>> {
  try {
    const png = await session.page.screenshot({ type: 'png', fullPage: false })
    return { png: png.toString('base64') }
  } catch (e) {
    throw actionError(e, 'screenshot')
  }
}

export async function pdf(session: PodSession): Promise<NodeOutput<'pdf'>> {
  try {
    const buf = await session.page.pdf({ printBackground: true })
    return { pdf: buf.toString('base64') }
  } catch (e) {
    throw actionError(e, 'pdf')
  }
}

export function consoleMessages(session: PodSession): NodeOutput<'console_messages'> {
  void session.page // 409 before configure, like every other route
  return { messages: [...session.consoleMessages] }
}

/** This file's rows of the node's action table (actions/index.ts). */
export const captureActions = { screenshot, pdf, console_messages: consoleMessages } satisfies Partial<ActionTable>
