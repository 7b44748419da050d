// The rule for every error the service returns, tested in test/contracts/errors.test.ts:
// a code names its HTTP status in snake_case (except the spec's E_REACHABILITY_DENIED and
// E_UPSTREAM, which 502/504 always are); a reason is snake_case (except SPEC_FIXED_REASONS);
// messages are value-free; OAuth endpoints answer RFC 6749 §5.2 bodies.
// In full: docs/errors.md

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'rate_limited'
  | 'internal'
  | 'unavailable'
  | 'E_REACHABILITY_DENIED'
  | 'E_UPSTREAM'

/** the status (or statuses) each code may carry */
export const CODE_STATUS: Record<ErrorCode, readonly number[]> = {
  bad_request: [400],
  unauthorized: [401],
  forbidden: [403],
  not_found: [404],
  method_not_allowed: [405],
  conflict: [409],
  payload_too_large: [413],
  unsupported_media_type: [415],
  range_not_satisfiable: [416],
  rate_limited: [429],
  internal: [500],
  unavailable: [503],
  E_REACHABILITY_DENIED: [403],
  E_UPSTREAM: [502, 504],
}

/** reason spellings the spec writes down; every other reason is snake_case */
export const SPEC_FIXED_REASONS = ['credential.origin_denied', 'credential.field_denied', 'NAVIGATION_FAILED'] as const

export const REASON_PATTERN = /^[a-z][a-z0-9_]*$/

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_target'
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'unsupported_response_type'
  | 'too_many_requests'
  | 'server_error'
  | 'temporarily_unavailable'

/** the statuses an OAuth error may carry (400 unless listed) */
export const OAUTH_STATUS: Partial<Record<OAuthErrorCode, readonly number[]>> = {
  invalid_client: [401],
  invalid_request: [400, 413],
  invalid_client_metadata: [400, 413],
  too_many_requests: [429],
  server_error: [500],
  temporarily_unavailable: [503],
}

/** Checklist row ids (docs/spec/CHECKLIST.md) */
export type SpecRow = `${'INV' | 'FLD' | 'EP' | 'RULE' | 'AUTH' | 'EV' | 'ERR' | 'LIM'}-${number}`
