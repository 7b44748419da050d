// Errors of watching and taking over: the console's live view of a session,
// a person taking control from the agent, and handing it back.
import type { ApiEntry, UpgradeEntry } from './entry.ts'

export const LIVE_ERRORS = {
  humanInControl: {
    status: 409, code: 'conflict', reason: 'human_in_control',
    message: 'a person has taken control of this session in the console; driving tools are refused until they hand it back (session_get shows control)', spec: null,
    when: 'any driving tool that changes the page (navigate, act, credential_fill, mouse_*, tab_*, …), session_cdp or the CDP upgrade, while a person holds control of the session; read-only tools (perceive, screenshot, tab_list, …) keep working',
  },
} as const satisfies Record<string, ApiEntry>

/** Refusals of the console's live-view WebSocket upgrade, before any WebSocket exists. */
export const LIVE_UPGRADE_ERRORS = {
  liveViewSignIn: {
    status: 401, code: null, reason: null, message: 'sign in to the console to watch a session', spec: null,
    when: 'the live-view upgrade (/console/sessions/:id/live) without a live console session cookie',
  },
  liveViewCrossOrigin: {
    status: 403, code: null, reason: null, message: 'the live view opens only from the console’s own pages', spec: null,
    when: 'the live-view upgrade with an Origin that is not this server’s (a page of another site holding the person’s cookie)',
  },
  liveViewUnavailable: {
    status: 503, code: null, reason: null, message: 'the live view is not available for this session', spec: null,
    when: 'the api-server could not open the live-view socket of the session’s browser pod (not ready, closing, or gone)',
  },
} as const satisfies Record<string, UpgradeEntry>
