// Errors raised at the browser pod (its API, its actions, its egress gateway) and by
// the api-server's client of it. They reach callers unchanged through REST and MCP.
import type { ApiEntry } from './entry.ts'

export const POD_ERRORS = {
  credentialOriginDenied: {
    status: 403, code: 'forbidden', reason: 'credential.origin_denied', details: 'host', message: 'origin not on the credential allowlist', spec: ['ERR-11', 'EV-03'],
    when: 'at the pod: the live document\'s host is not on the effective allowlist (body carries host)',
  },
  credentialFieldDenied: {
    status: 403, code: 'forbidden', reason: 'credential.field_denied', details: 'field_kind', message: 'target is not an editable field', spec: ['ERR-12', 'EV-04'],
    when: 'at the pod: the fill target is not an editable field (body carries field_kind)',
  },
  fillNavigated: { status: 409, code: 'conflict', reason: 'fill_navigated', message: 'the page navigated during the fill; nothing was typed', spec: null, when: 'the field\'s document navigated away mid-fill' },
  fillTargetNotFound: { status: 504, code: 'E_UPSTREAM', reason: 'timeout', message: 'fill target not found', spec: null, when: 'no element matched the fill selector in time' },
  ambiguousSelector: {
    status: 400, code: 'bad_request', reason: 'ambiguous_selector', message: (detail: string) => `selector matches more than one element${detail ? `: ${detail}` : ''}`, args: ['detail'],
    spec: null, when: 'a selector matching several elements (strict: never guessed)',
  },
  invalidSelector: {
    status: 400, code: 'bad_request', reason: 'invalid_selector', message: (detail: string) => `selector is not valid${detail ? `: ${detail}` : ''}`, args: ['detail'], spec: null,
    when: 'a selector that cannot name an element: Playwright or the page cannot parse it, an engine it no longer ships, nth= other than an integer (every selector tool, at once)',
  },
  staleRef: {
    status: 409, code: 'conflict', reason: 'stale_ref', message: (ref: string) => `ref ${ref} is unknown or stale (its element or its document is gone): call perceive again and use a ref from its answer`, args: ['ref'], spec: null,
    when: 'a ref that no perceive of the current document of its frame gave, or whose element has left the page (nothing is done)',
  },
  staleCursor: {
    status: 409, code: 'conflict', reason: 'stale_cursor', message: 'cursor is not from the latest perceive of this tab: call perceive again without a cursor', spec: null,
    when: 'perceive with a cursor after the tab was read again or changed by an action (its snapshot is gone)',
  },
  actionTimeout: {
    status: 504, code: 'E_UPSTREAM', reason: 'timeout', message: (action: string, waitingFor: string) => `${action} timed out${waitingFor ? ` waiting for ${waitingFor}` : ''}`, args: ['action', 'waitingFor'],
    spec: null, when: 'an action did not complete in its timeout',
  },
  actionFailed: {
    status: 502, code: 'E_UPSTREAM', reason: 'action_failed', message: (action: string, detail: string) => `${action} failed: ${detail}`, args: ['action', 'detail'], spec: null,
    when: 'the browser reported another failure of an action',
  },
  browserClosed: { status: 503, code: 'unavailable', reason: 'browser_closed', message: 'browser is closed', spec: null, when: 'the session\'s browser has gone away' },
  urlNotAbsolute: { status: 400, code: 'bad_request', reason: 'invalid_url', message: 'url is not an absolute URL', spec: null, when: 'navigate with a relative or malformed url' },
  schemeNotAllowed: {
    status: 400, code: 'bad_request', reason: 'invalid_url', message: (scheme: string) => `scheme ${scheme} is not allowed`, args: ['scheme'], spec: null,
    when: 'navigate to a scheme other than http, https, data or about:blank',
  },
  navigationTimeout: { status: 504, code: 'E_UPSTREAM', reason: 'navigation_timeout', message: (url: string) => `navigation timed out at ${url}`, args: ['url'], spec: null, when: 'a navigation did not finish in its timeout' },
  navigationFailed: {
    status: 502, code: 'E_UPSTREAM', reason: 'NAVIGATION_FAILED', message: (netError: string, url: string) => `navigation failed: ${netError} at ${url}`, args: ['netError', 'url'],
    spec: ['ERR-29', 'EP-43', 'RULE-10'],
    when: 'net::ERR_CONNECTION_REFUSED and kin: nothing listening, wrong port, dead daemon, interface mismatch, or platform egress to a local address',
  },
  reachabilityDenied: {
    status: 403, code: 'E_REACHABILITY_DENIED', reason: ['host_not_declared', 'deny_floor', 'not_configured'], message: (target: string) => `egress denied: ${target}`, args: ['target'],
    spec: ['ERR-28', 'RULE-08', 'INV-06'], when: 'navigation to a host not in the network\'s declaredHosts, or one under the deny floor',
  },
  notConfigured: { status: 409, code: 'conflict', reason: 'not_configured', message: 'session is not configured', spec: null, when: 'a pod call before configure' },
  alreadyConfigured: { status: 409, code: 'conflict', reason: 'already_configured', message: 'session already configured', spec: null, when: 'a second configure of a pod' },
  egressPolicyRejected: {
    status: 500, code: 'internal', reason: 'egress_policy_rejected', message: (detail: string) => `egress policy rejected: ${detail}`, args: ['detail'], spec: null,
    when: 'configure with declared hosts the pod cannot turn into a policy',
  },
  cloakUserAgent: { status: 400, code: 'bad_request', reason: 'cloak_user_agent', message: 'a cloak browser keeps its own user agent', spec: null, when: 'a user agent override on a cloak browser' },
  invalidStorageState: { status: 400, code: 'bad_request', reason: 'invalid_storage_state', message: 'invalid storageState', spec: null, when: 'a warm-resume auth state the browser refuses' },
  podUnreachable: { status: 502, code: 'E_UPSTREAM', reason: 'node_unreachable', message: 'browser node unreachable', spec: null, when: 'the api-server could not reach the session\'s pod' },
  podTimeout: { status: 504, code: 'E_UPSTREAM', reason: 'node_timeout', message: 'browser node timed out', spec: null, when: 'the pod did not answer within the client\'s ceiling' },
  podProtocol: { status: 502, code: 'E_UPSTREAM', reason: 'node_protocol', message: 'browser node sent an unreadable reply', spec: null, when: 'the pod\'s reply was not JSON, or not of the shape its route declares' },
} as const satisfies Record<string, ApiEntry>
