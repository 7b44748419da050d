// Driving actions: one page action each, forwarded by the api-server to the session's pod,
// declared once here (tool/REST contract and pod route), so the api-server, the pod API
// and the PodClient are all typed from this table. Adding one: docs/ARCHITECTURE.md#walk-through-adding-a-driving-action
import { z } from 'zod'
import { defineContract } from './types.ts'
import { ActResult, BinaryMeta, ConsoleResult, DRIVE, FillResult, NavigateResult, OkResult, PdfResult, PerceiveResult, ScreenshotResult, SelectOptionResult, defineDrive } from './drive-kit.ts'
import { ONE_TARGET, TARGET_HELP, changesArg, elementRef, navigableUrl, oneTarget, selector, sessionId, timeoutMs } from './fields.ts'
import { tabContracts } from './drive-tabs.ts'
import { mouseContracts } from './drive-mouse.ts'
import { fileContracts } from './drive-files.ts'
import { inspectContracts } from './drive-inspect.ts'

export { BinaryMeta, ConsoleMessage, ConsoleResult, FillResult, NavigateResult, OkResult, PerceiveResult, ActResult, SelectOptionResult, ScreenshotResult, PdfResult, defineDrive, type DriveContract } from './drive-kit.ts'

export const navigate = defineDrive({
  name: 'navigate',
  description: 'Navigate the session’s page; returns the resolved url after redirects, and in `changes` the new page: the whole of it with its refs when it is small (a form, a menu), else what it is in a few hundred characters (counts of its links, buttons, fields and headings; its landmarks and top headings with refs). perceive then reads the page without loading it again; perceive with query finds elements by their words',
  input: z.strictObject({ sessionId, url: navigableUrl, changes: changesArg }),
  output: NavigateResult,
  restPath: 'navigate',
  pod: { path: '/v1/navigate' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const perceive = defineDrive({
  name: 'perceive',
  description: 'Read the page: url, title, accessibility snapshot, and as text only the visible lines carrying words the snapshot does not already say (usually none: the snapshot holds the page’s words; password values never appear). '
    + 'Every element carries [ref=e12] (inside an iframe [ref=f1e3]): pass the ref to act, hover, select_option, drag, fill_form, file_upload, wait_for or credential_fill instead of a selector; a ref holds until its document navigates. '
    + 'Text the page wrote (names, values, text runs) is always in double quotes with YAML escapes (\\" \\\\ \\n \\xNN), one element a line, and a [ref= inside it is written \\x5bref=: only a [ref=…] outside quotes is a ref. '
    + 'At most maxChars characters (default 12000): the outline of landmarks and headings and what the viewport shows come first; when truncated is true, call again with the cursor given to read on until the whole page has been read, every element once. '
    + 'ref returns the subtree under one element; query returns only the elements whose name or text holds the words, each inside the link, button or other control that holds it (the ref to act on), text with its whole sentence or small paragraph, with the headings and landmarks above them; the heading, term or signature that defines the words comes first with the paragraphs under it (a question such as "what is X" asks for X) — or, when more than ten elements match, the matches alone, each once: the definition, then those holding the words as one phrase, controls first within',
  input: z.strictObject({
    sessionId,
    full: z.boolean().optional().describe('advisory; not forwarded'),
    maxChars: z.number().int().min(1000).max(500_000).optional().describe('the most characters of snapshot and text in the answer (default 12000)'),
    cursor: z.string().min(1).max(200).optional().describe('the cursor of a truncated answer: reads on from there'),
    ref: elementRef.optional().describe('only the subtree under this element'),
    query: z.string().min(1).max(500).optional().describe('only the elements whose name or text (not a url) holds these words (any order, case-insensitive; "what is X" asks for X; what defines them ranks first, then the exact phrase), each with the control around it to act on and its sentence; with the headings and landmarks above them when ten or fewer match'),
  }).refine((v) => [v.cursor, v.ref, v.query].filter((x) => x !== undefined).length <= 1, { message: 'give at most one of cursor, ref or query' }),
  output: PerceiveResult,
  restPath: 'perceive',
  pod: { path: '/v1/perceive' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const act = defineDrive({
  name: 'act',
  description: `One page action: click, type, press, goto or scroll. ${TARGET_HELP} (type and press without either go to the focused element). The answer's changes say what the action changed, with refs`,
  input: z.strictObject({
    sessionId,
    verb: z.enum(['click', 'type', 'press', 'goto', 'scroll']),
    selector: selector.optional(),
    ref: elementRef.optional(),
    text: z.string().max(100_000).optional(),
    key: z.string().min(1).max(100).optional(),
    url: navigableUrl.optional(),
    direction: z.enum(['up', 'down', 'left', 'right']).optional(),
    changes: changesArg,
  }).refine((v) => v.selector === undefined || v.ref === undefined, { message: 'give ref or selector, not both' }),
  // a type act whose text carries a {{credential:…}} marker is the deprecated free-text fill
  output: z.union([ActResult, FillResult]),
  restPath: 'act',
  // the fill result is the api-server's (the free-text fill never reaches /v1/act)
  pod: { path: '/v1/act', output: ActResult },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

export const screenshot = defineDrive({
  name: 'screenshot',
  description: 'PNG of the page’s viewport; with ref (from perceive, frames included) or selector, of that one element only (scrolled into view). Filled fields render masked',
  input: z.strictObject({
    sessionId,
    ref: elementRef.optional().describe('only this element (from perceive’s snapshot)'),
    selector: selector.optional().describe('only the element this selector names'),
  }).refine((v) => v.selector === undefined || v.ref === undefined, { message: 'give ref or selector, not both' }),
  output: ScreenshotResult,
  mcpOutput: BinaryMeta,
  restPath: 'screenshot',
  pod: { path: '/v1/screenshot', opaque: ['png'] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const goBack = defineDrive({
  name: 'go_back',
  description: 'Go back in the page history',
  input: z.strictObject({ sessionId, changes: changesArg }),
  output: NavigateResult,
  restPath: 'go-back',
  pod: { path: '/v1/go_back' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const reload = defineDrive({
  name: 'reload',
  description: 'Reload the page',
  input: z.strictObject({ sessionId, changes: changesArg }),
  output: NavigateResult,
  restPath: 'reload',
  pod: { path: '/v1/reload' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const waitFor = defineDrive({
  name: 'wait_for',
  description: 'Wait until an element (by ref or selector) or a text appears (exactly one of the three)',
  input: z.strictObject({ sessionId, selector: selector.optional(), ref: elementRef.optional(), text: z.string().min(1).max(10_000).optional(), timeoutMs: timeoutMs.optional() })
    .refine((v) => [v.selector, v.ref, v.text].filter((x) => x !== undefined).length === 1, { message: 'give exactly one of selector, ref or text' }),
  output: OkResult,
  restPath: 'wait-for',
  pod: { path: '/v1/wait_for' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const selectOption = defineDrive({
  name: 'select_option',
  description: `Select options of a <select>. ${TARGET_HELP}`,
  input: z.strictObject({ sessionId, selector: selector.optional(), ref: elementRef.optional(), values: z.array(z.string().max(10_000)).min(1).max(1000), changes: changesArg })
    .refine(oneTarget, ONE_TARGET),
  output: SelectOptionResult,
  restPath: 'select-option',
  pod: { path: '/v1/select_option' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const hover = defineDrive({
  name: 'hover',
  description: `Hover over an element. ${TARGET_HELP}`,
  input: z.strictObject({ sessionId, selector: selector.optional(), ref: elementRef.optional(), changes: changesArg }).refine(oneTarget, ONE_TARGET),
  output: OkResult,
  restPath: 'hover',
  pod: { path: '/v1/hover' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const pdf = defineDrive({
  name: 'pdf',
  description: 'PDF of the page. Refused (403 pdf_after_fill) once a credential was filled in this session: a PDF carries page text, where a filled secret could be echoed; use screenshot instead',
  input: z.strictObject({ sessionId }),
  output: PdfResult,
  mcpOutput: BinaryMeta,
  restPath: 'pdf',
  pod: { path: '/v1/pdf', opaque: ['pdf'] },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const consoleMessages = defineDrive({
  name: 'console_messages',
  description: 'Console messages the page logged',
  input: z.strictObject({ sessionId }),
  output: ConsoleResult,
  restPath: 'console',
  restMethod: 'GET',
  pod: { path: '/v1/console' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const coreDriveContracts = [navigate, perceive, act, screenshot, goBack, reload, waitFor, selectOption, hover, pdf, consoleMessages] as const

/** The domain files' lists, in the order their tools are listed. */
const domainDriveContracts = [...tabContracts, ...mouseContracts, ...fileContracts, ...inspectContracts] as const

/** Every forwarded driving action, in the order tools are listed: the core above, then one list per domain file. */
export const driveContracts = [...coreDriveContracts, ...domainDriveContracts] as const
export type DriveName = (typeof driveContracts)[number]['name']

/**
 * Page-changing: an action whose input takes `changes`. It answers with what it changed on
 * the page (the pod reads that only when asked: browser-pod/actions/index.ts).
 */
export const takesChanges = (contract: { input: z.ZodObject }): boolean => 'changes' in contract.input.shape
/** The forwarded driving actions that are page-changing. */
export const pageChangingDrives: readonly DriveName[] = driveContracts.filter(takesChanges).map((c) => c.name)

/** The secure fill is driving too, but not forwarded as-is: the api-server decrypts and calls the pod's secure_type. */
export const credentialFill = defineContract({
  name: 'credential_fill',
  description: `Securely type a persona credential into a field; the secret is never returned or shown. ${TARGET_HELP}; a field inside an iframe is judged by the iframe’s own origin`,
  scopes: DRIVE,
  input: z.strictObject({ sessionId, credentialName: z.string().min(1).max(64), selector: selector.optional(), ref: elementRef.optional(), changes: changesArg }).refine(oneTarget, ONE_TARGET),
  output: FillResult,
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/fill-credential' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

/** The driving tools in the order they are listed: the forwarded ones, with the secure fill fourth, as always. */
const [first, second, third, ...restOfCore] = coreDriveContracts
export const sessionDriveContracts = [first, second, third, credentialFill, ...restOfCore, ...domainDriveContracts] as const
