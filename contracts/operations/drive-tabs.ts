// Driving actions: tabs, popups, go_forward, dialogs and the viewport. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its pod action
// (browser-pod/actions/tabs.ts) and its journal row (api-server/operations/sessions/drive-tabs.ts).
import { z } from 'zod'
import { NavigateResult, defineDrive } from './drive-kit.ts'
import { navigableUrl, sessionId, viewport, changesArg } from './fields.ts'

/** A tab's id: `tab_<n>`, given in the order tabs open, never reused within a session. */
export const tabId = z.string().regex(/^tab_[0-9]{1,9}$/, 'must be a tab id (tab_…)')

export const TabInfo = z.object({ tabId: z.string(), url: z.string(), title: z.string(), active: z.boolean() })
/** Every tab result: the session's tabs in the order they opened, and which one the other tools drive. */
export const TabsResult = z.object({ tabs: z.array(TabInfo), activeTabId: z.string() })
export const TabOpenResult = TabsResult.extend({
  tabId: z.string().describe('the new tab'),
  status: z.number().int().nullable().describe('HTTP status of the url, null without one'),
})
export const TabCloseResult = TabsResult.extend({
  tabId: z.string().describe('the tab asked to close'),
  closed: z.boolean().describe('false when the page’s beforeunload dialog was answered “stay”'),
})

export const DIALOG_TYPES = ['alert', 'confirm', 'prompt', 'beforeunload'] as const
export const DialogRecord = z.object({
  tabId: z.string(),
  type: z.enum(DIALOG_TYPES),
  message: z.string(),
  /** a prompt's default value */
  defaultValue: z.string().optional(),
  answer: z.enum(['accepted', 'dismissed']),
  answeredBy: z.enum(['armed', 'default']).describe('armed: by dialog_handle; default: no answer was armed'),
  time: z.number(),
})
export const DialogResult = z.object({
  armed: z.object({ action: z.enum(['accept', 'dismiss']) }).describe('the answer waiting for the next dialog'),
  dialogs: z.array(DialogRecord).describe('the latest dialogs of the session, oldest first'),
})
export const ResizeResult = z.object({ ok: z.literal(true), url: z.string(), viewport })

const TABS = 'New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. '
  + 'The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; '
  + 'closing the last tab opens a blank one, so the session stays usable.'

export const goForward = defineDrive({
  name: 'go_forward',
  description: 'Go forward in the active tab’s history',
  input: z.strictObject({ sessionId, changes: changesArg }),
  output: NavigateResult,
  restPath: 'go-forward',
  pod: { path: '/v1/go_forward' },
  // REST and the SDK only (credential_request took its place among the 38): an
  // agent goes forward by navigating to the URL it left, which navigate does in one call
  mcp: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const tabList = defineDrive({
  name: 'tab_list',
  description: `List the session’s tabs (id, url, title, which is active). ${TABS}`,
  input: z.strictObject({ sessionId }),
  output: TabsResult,
  restPath: 'tabs',
  restMethod: 'GET',
  pod: { path: '/v1/tab_list' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const tabOpen = defineDrive({
  name: 'tab_open',
  description: `Open a new tab, optionally at a url, and make it the active tab. ${TABS}`,
  input: z.strictObject({ sessionId, url: navigableUrl.optional() }),
  output: TabOpenResult,
  restPath: 'tabs/open',
  pod: { path: '/v1/tab_open' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const tabSelect = defineDrive({
  name: 'tab_select',
  description: `Make a tab the active tab (the one every other tool drives) and bring it to the front. ${TABS}`,
  input: z.strictObject({ sessionId, tabId }),
  output: TabsResult,
  restPath: 'tabs/select',
  pod: { path: '/v1/tab_select' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const tabClose = defineDrive({
  name: 'tab_close',
  description: 'Close a tab (default: the active one). The page’s beforeunload handler runs: its dialog is answered like any other (see dialog_handle; '
    + `by default the page may leave), and a “stay” answer keeps the tab open (closed: false). ${TABS}`,
  input: z.strictObject({ sessionId, tabId: tabId.optional() }),
  output: TabCloseResult,
  restPath: 'tabs/close',
  pod: { path: '/v1/tab_close' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
})

export const dialogHandle = defineDrive({
  name: 'dialog_handle',
  description: 'Set the answer to the next JavaScript dialog (alert, confirm, prompt, beforeunload) in any tab: accept (with promptText for a prompt) or dismiss. '
    + 'Dialogs never block the page or a tool call: each one is answered the moment it opens, with the armed answer if this tool set one '
    + '(used once), otherwise by default: alert closed, confirm and prompt dismissed (false / null), beforeunload accepted (the page may leave). '
    + 'So call this BEFORE the action that opens the dialog. Every dialog is reported with how it was answered: in this tool’s result '
    + '(the latest dialogs) and as a console message of type "dialog" (console_messages).',
  input: z.strictObject({
    sessionId,
    action: z.enum(['accept', 'dismiss']),
    promptText: z.string().max(10_000).optional().describe('the text a prompt returns when accepted (default: the prompt’s own default value, as OK in a browser)'),
  }).refine((v) => v.promptText === undefined || v.action === 'accept', { message: 'promptText goes with accept' }),
  output: DialogResult,
  restPath: 'dialog',
  pod: { path: '/v1/dialog_handle' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const resize = defineDrive({
  name: 'resize',
  description: 'Set the viewport size of every tab, open now or later',
  input: z.strictObject({ sessionId, width: viewport.shape.width, height: viewport.shape.height }),
  output: ResizeResult,
  restPath: 'resize',
  pod: { path: '/v1/resize' },
  // REST and the SDK only (request_human took its place among the 38): the
  // viewport is chosen at session_start, and a live resize is rarely what an agent needs
  mcp: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const tabContracts = [goForward, tabList, tabOpen, tabSelect, tabClose, dialogHandle, resize] as const
