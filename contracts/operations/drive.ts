// Driving actions: one page action each, forwarded by the api-server to the session's
// browser pod. A driving action is declared once, here: its tool/REST contract and
// the node API route that runs it. The node route's input is the operation's input
// without sessionId and its output is the operation's output, so the api-server, the
// node API (contracts/node-api.ts) and the NodeClient are all typed from this table.
//
// Adding a driving action: declare it here, implement it in browser-pod/actions/
// (the node's action table is typed by this list), and say what the journal keeps of
// it in api-server/operations/sessions/drive.ts (typed the same way). See
// docs/ARCHITECTURE.md.
import { z } from 'zod'
import { defineContract } from './types.ts'
import { ActResult, BinaryMeta, ConsoleResult, DRIVE, FillResult, NavigateResult, OkResult, PdfResult, PerceiveResult, ScreenshotResult, SelectOptionResult, defineDrive } from './drive-kit.ts'
import { navigableUrl, selector, sessionId, timeoutMs } from './fields.ts'
import { pageContracts } from './drive-pages.ts'
import { mouseContracts } from './drive-mouse.ts'
import { fileContracts } from './drive-files.ts'
import { inspectContracts } from './drive-inspect.ts'

export { BinaryMeta, ConsoleMessage, ConsoleResult, FillResult, NavigateResult, OkResult, PerceiveResult, ActResult, SelectOptionResult, ScreenshotResult, PdfResult, defineDrive, type DriveContract } from './drive-kit.ts'

export const navigate = defineDrive({
  name: 'navigate',
  description: 'Navigate the session’s page; returns the resolved url after redirects',
  input: z.strictObject({ sessionId, url: navigableUrl }),
  output: NavigateResult,
  restPath: 'navigate',
  node: { path: '/v1/navigate' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const perceive = defineDrive({
  name: 'perceive',
  description: 'Read the page: url, title, accessibility snapshot and visible text (password values never appear)',
  input: z.strictObject({ sessionId, full: z.boolean().optional().describe('advisory; not forwarded') }),
  output: PerceiveResult,
  restPath: 'perceive',
  node: { path: '/v1/perceive' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const act = defineDrive({
  name: 'act',
  description: 'One page action: click, type, press, goto or scroll',
  input: z.strictObject({
    sessionId,
    verb: z.enum(['click', 'type', 'press', 'goto', 'scroll']),
    selector: selector.optional(),
    text: z.string().max(100_000).optional(),
    key: z.string().min(1).max(100).optional(),
    url: navigableUrl.optional(),
    direction: z.enum(['up', 'down', 'left', 'right']).optional(),
  }),
  // a type act whose text carries a {{credential:…}} marker is the deprecated free-text fill
  output: z.union([ActResult, FillResult]),
  restPath: 'act',
  // the fill result is the api-server's (the free-text fill never reaches /v1/act)
  node: { path: '/v1/act', output: ActResult },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

export const screenshot = defineDrive({
  name: 'screenshot',
  description: 'PNG of the page',
  input: z.strictObject({ sessionId }),
  output: ScreenshotResult,
  mcpOutput: BinaryMeta,
  restPath: 'screenshot',
  node: { path: '/v1/screenshot', opaque: ['png'] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const goBack = defineDrive({
  name: 'go_back',
  description: 'Go back in the page history',
  input: z.strictObject({ sessionId }),
  output: NavigateResult,
  restPath: 'go-back',
  node: { path: '/v1/go_back' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const reload = defineDrive({
  name: 'reload',
  description: 'Reload the page',
  input: z.strictObject({ sessionId }),
  output: NavigateResult,
  restPath: 'reload',
  node: { path: '/v1/reload' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const waitFor = defineDrive({
  name: 'wait_for',
  description: 'Wait until a selector or a text appears (exactly one of them)',
  input: z.strictObject({ sessionId, selector: selector.optional(), text: z.string().min(1).max(10_000).optional(), timeoutMs: timeoutMs.optional() })
    .refine((v) => (v.selector === undefined) !== (v.text === undefined), { message: 'give exactly one of selector or text' }),
  output: OkResult,
  restPath: 'wait-for',
  node: { path: '/v1/wait_for' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const selectOption = defineDrive({
  name: 'select_option',
  description: 'Select options of a <select>',
  input: z.strictObject({ sessionId, selector, values: z.array(z.string().max(10_000)).min(1).max(1000) }),
  output: SelectOptionResult,
  restPath: 'select-option',
  node: { path: '/v1/select_option' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const hover = defineDrive({
  name: 'hover',
  description: 'Hover over an element',
  input: z.strictObject({ sessionId, selector }),
  output: OkResult,
  restPath: 'hover',
  node: { path: '/v1/hover' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const pdf = defineDrive({
  name: 'pdf',
  description: 'PDF of the page',
  input: z.strictObject({ sessionId }),
  output: PdfResult,
  mcpOutput: BinaryMeta,
  restPath: 'pdf',
  node: { path: '/v1/pdf', opaque: ['pdf'] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const consoleMessages = defineDrive({
  name: 'console_messages',
  description: 'Console messages the page logged',
  input: z.strictObject({ sessionId }),
  output: ConsoleResult,
  restPath: 'console',
  restMethod: 'GET',
  node: { path: '/v1/console' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const coreDriveContracts = [navigate, perceive, act, screenshot, goBack, reload, waitFor, selectOption, hover, pdf, consoleMessages] as const

/** Every forwarded driving action, in the order tools are listed: the core above, then one list per domain file. */
export const driveContracts = [...coreDriveContracts, ...pageContracts, ...mouseContracts, ...fileContracts, ...inspectContracts] as const
export type DriveName = (typeof driveContracts)[number]['name']

/** The secure fill is driving too, but not forwarded as-is: the api-server decrypts and calls the node's secure_type. */
export const credentialFill = defineContract({
  name: 'credential_fill',
  description: 'Securely type a persona credential into a field; the secret is never returned or shown',
  scopes: DRIVE,
  input: z.strictObject({ sessionId, credentialName: z.string().min(1).max(64), selector }),
  output: FillResult,
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/fill-credential' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

/** The driving tools in the order they are listed (the secure fill fourth, as always). */
export const sessionDriveContracts = [navigate, perceive, act, credentialFill, screenshot, goBack, reload, waitFor, selectOption, hover, pdf, consoleMessages, ...pageContracts, ...mouseContracts, ...fileContracts, ...inspectContracts] as const
