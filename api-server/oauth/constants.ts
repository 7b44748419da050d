// The numbers and names of Nightjar's OAuth 2.1 server in one place. Lifetimes are
// the spec's (Limits); the rest are documented choices (docs/mcp.md).
import { OAUTH_DEFAULT_SCOPES } from '../auth/scopes.ts'

/** access token (njo_) lifetime: 15 minutes */
export const ACCESS_TOKEN_TTL_SECS = 900
/** refresh token (njr_) lifetime: 30 days, single-use rotation */
export const REFRESH_TOKEN_TTL_SECS = 30 * 24 * 3600
/** an authorization code is single-use and short-lived */
export const CODE_TTL_SECS = 60
/** device authorization (RFC 8628) */
export const DEVICE_CODE_TTL_SECS = 900
export const DEVICE_POLL_INTERVAL_SECS = 5
/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval */
export const DEVICE_SLOW_DOWN_STEP_SECS = 5
/** user codes: 8 characters from an alphabet without 0, O, 1, I (32 symbols, so no modulo bias) */
export const USER_CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ'

/** The pre-registered client of the nightjar CLI and of anyone who prefers not to register. */
export const BUILTIN_CLIENT_ID = 'ncli_nightjar_cli'

/** Dynamic client registration: at most this many attempts per source IP per window. */
export const DCR_RATE_LIMIT = 20
export const DCR_RATE_WINDOW_MS = 60_000

export const GRANT_AUTHORIZATION_CODE = 'authorization_code'
export const GRANT_REFRESH_TOKEN = 'refresh_token'
export const GRANT_DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'
export const SUPPORTED_GRANT_TYPES = [GRANT_AUTHORIZATION_CODE, GRANT_REFRESH_TOKEN, GRANT_DEVICE_CODE] as const

export const OOB_REDIRECT_URI = 'urn:ietf:wg:oauth:2.0:oob'

/**
 * Every OAuth grant carries exactly the default set, whatever was asked (spec: scope
 * rule 4). Clamping ignores the request rather than rejecting it, so a client asking
 * for identities:write still gets a working, narrower token.
 */
export function clampScopes(_requested?: unknown): string[] {
  return [...OAUTH_DEFAULT_SCOPES]
}
export const DEFAULT_SCOPE_STRING = OAUTH_DEFAULT_SCOPES.join(' ')

/** The optional `workspace` parameter names where the agent runs (a repo, a machine). */
export const DEFAULT_WORKSPACE = 'default'
export const WORKSPACE_PATTERN = /^[\w.:@/ -]{1,100}$/
