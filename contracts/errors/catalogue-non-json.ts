// Errors that are not a JSON body: HTML pages (console, consent, device verification),
// plain-text refusals of a WebSocket upgrade, and the MCP door's JSON-RPC errors.
import type { PageEntry, RpcEntry, UpgradeEntry } from './entry.ts'

const FORM_EXPIRED = 'The form expired or did not come from this site'

export const PAGE_ERRORS = {
  signInFormExpired: {
    status: 403, code: null, reason: null, message: 'The sign-in form expired or did not come from this site. Sign in again.', spec: null,
    when: 'console sign-in without a valid form token or from another origin',
  },
  signInFailed: { status: 401, code: null, reason: null, message: 'Email or password is wrong.', spec: ['AUTH-05'], when: 'console sign-in with a wrong email or password (both alike)' },
  signInThrottledPage: {
    status: 429, code: null, reason: null, retryAfter: 'arg', message: (retryAfterSecs: number) => `Too many sign-in attempts. Try again in ${retryAfterSecs} seconds.`, args: ['retryAfterSecs'],
    spec: null, when: 'console sign-in past its limits, for a browser',
  },
  formTokenInvalid: { status: 403, code: null, reason: null, message: 'Invalid form token; reload the page.', spec: null, when: 'a console form (sign-out, create key) posted without its form token' },
  authorizeFormExpired: { status: 403, code: null, reason: null, message: `${FORM_EXPIRED}; start again.`, spec: null, when: 'the consent form posted without its form token' },
  deviceFormExpired: { status: 403, code: null, reason: null, message: `${FORM_EXPIRED}; enter the code again.`, spec: null, when: 'the device form posted without its form token' },
  invalidUserCode: {
    status: 400, code: null, reason: null, message: 'That code is not valid, has expired or was already used. Check it, or start again in the application.', spec: ['LIM-05'],
    when: 'a wrong, expired or used user code at the verification page',
  },
  userCodeThrottledPage: {
    status: 429, code: null, reason: null, retryAfter: 'arg', message: (retryAfterSecs: number) => `Too many wrong codes. Try again in ${retryAfterSecs} seconds.`, args: ['retryAfterSecs'],
    spec: null, when: 'the verification page past its wrong-code limit, for a browser',
  },
  authorizeNoClientId: { status: 400, code: null, reason: null, message: 'The request names no client_id.', spec: null, when: 'authorize without client_id (no redirect is safe)' },
  authorizeUnknownClient: {
    status: 400, code: null, reason: null, message: 'The application is not registered here (unknown or revoked client_id).', spec: null, when: 'authorize for an unknown or revoked client',
  },
  authorizeNoRedirectUri: { status: 400, code: null, reason: null, message: 'The request names no redirect_uri.', spec: null, when: 'authorize without redirect_uri' },
  authorizeRedirectMismatch: {
    status: 400, code: null, reason: null, message: 'The redirect_uri is not registered for this application.', spec: ['RULE-23'], when: 'authorize with a redirect_uri the client did not register',
  },
  authorizeRequestInvalid: {
    status: 400, code: null, reason: null, message: (description: string) => description, args: ['OAuth error description'], spec: null,
    when: 'an authorize request whose OAuth error cannot be redirected (out-of-band client, or before the redirect_uri is known): the OAuth error\'s description on a page',
  },
  authorizeClientMetadataInvalid: {
    status: 400, code: null, reason: null, message: (why: string) => `The application's client metadata document cannot be used: ${why}.`, args: ['why'], spec: null,
    when: 'authorize with a client_id URL whose metadata document is not https, not public, too slow, too large, not JSON, or does not match (oauth/cimd.ts)',
  },
} as const satisfies Record<string, PageEntry>

export const UPGRADE_ERRORS = {
  joinUnauthorized: {
    status: 401, code: null, reason: null, message: 'unauthorized', headers: { 'www-authenticate': 'Bearer' }, spec: ['ERR-02', 'RULE-11', 'AUTH-04'],
    when: 'the join token is wrong, stale, rotated or revoked',
  },
  joinThrottled: {
    status: 429, code: null, reason: null, retryAfter: 'arg', message: (retryAfterSecs: number) => 'too many failed joins; retry later', args: ['retryAfterSecs'], spec: null,
    when: 'an address past its rejected-join limit (a right token is refused too until the window ends)',
  },
  joinNetworkMissing: { status: 400, code: null, reason: null, message: 'missing network', spec: null, when: 'a join without a network' },
  tunnelUnavailable: { status: 503, code: null, reason: null, message: 'unavailable', spec: null, when: 'the broker is closing, or the join check could not run' },
  egressUnauthorized: { status: 401, code: null, reason: null, message: 'unauthorized', spec: null, when: 'a pod\'s /ws/egress upgrade without its session\'s pod token or a valid target' },
  replicaUnauthorized: { status: 401, code: null, reason: null, message: 'unauthorized', spec: null, when: 'a forwarded tunnel dial (/internal/tunnel) without the replica secret, or on a replica that has none' },
} as const satisfies Record<string, UpgradeEntry>

export const RPC_ERRORS = {
  mcpInvalidParams: {
    status: 400, code: -32602, data: 'bad_request', reason: null, message: (problem: string) => problem, args: ['invalid params: field: rule'], spec: null,
    when: 'MCP params that break the method\'s schema, are by position (an array: MCP names every param), or hold a NUL or lone surrogate (nothing runs)',
  },
  mcpUnknownTool: { status: 404, code: -32602, data: 'not_found', reason: null, message: 'unknown tool', spec: ['RULE-30'], when: 'tools/call of a tool that does not exist' },
  mcpBatchTooLarge: {
    status: 400, code: -32600, data: null, reason: null, message: (max: number) => `batch too large: at most ${max} messages in one request`, args: ['max'], spec: null,
    when: 'a POST carrying more JSON-RPC messages than the cap (none run)',
  },
  mcpEmptyBatch: {
    status: 400, code: -32600, data: null, reason: null, message: 'invalid request: an empty batch', spec: null,
    when: 'a POST whose body is an empty JSON array (JSON-RPC 2.0 §6: an array with at least one value)',
  },
} as const satisfies Record<string, RpcEntry>
