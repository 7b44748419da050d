// OAuth endpoints' errors, RFC 6749 §5.2 form ({error, error_description}); the
// authorization endpoint sends the same pair as redirect parameters. `code` is the
// RFC's error; the description is value-free (never a token, code or verifier).
import type { OAuthEntry } from './entry.ts'

const UNREADABLE = 'the request body could not be read (send application/x-www-form-urlencoded or, for registration, application/json)'

export const OAUTH_ERRORS = {
  // --- request form -------------------------------------------------------------
  oauthParamRepeated: {
    status: 400, code: 'invalid_request', reason: null, message: (name: string) => `parameter ${name} must be given once, as a string`, args: ['name'], spec: null,
    when: 'a parameter sent twice or not as a string (RFC 6749 §3.1)',
  },
  oauthParamMalformed: {
    status: 400, code: 'invalid_request', reason: null, message: (name: string) => `parameter ${name} must not contain NUL or unpaired surrogate characters`, args: ['name'], spec: null,
    when: 'a parameter holding a NUL or a lone surrogate (text no client sends and the database cannot store)',
  },
  oauthParamMissing: { status: 400, code: 'invalid_request', reason: null, message: (name: string) => `missing parameter: ${name}`, args: ['name'], spec: null, when: 'a required parameter is absent' },
  oauthStateTooLong: { status: 400, code: 'invalid_request', reason: null, message: 'state is longer than 1024 characters', spec: null, when: 'authorize with an over-long state' },
  oauthPkceRequired: { status: 400, code: 'invalid_request', reason: null, message: 'a PKCE code_challenge (S256, 43 characters) is required', spec: ['RULE-21'], when: 'authorize without a valid code_challenge' },
  oauthPkceMethod: { status: 400, code: 'invalid_request', reason: null, message: 'code_challenge_method must be S256', spec: ['RULE-21'], when: 'authorize with a method other than S256' },
  oauthWorkspaceInvalid: {
    status: 400, code: 'invalid_request', reason: null, message: 'workspace must be 1-100 letters, digits, spaces or . _ : @ / -', spec: ['RULE-24'], when: 'authorize or device with a malformed workspace',
  },
  oauthBodyUnreadable: { status: 400, code: 'invalid_request', reason: null, message: UNREADABLE, spec: null, when: 'a token or device body that cannot be parsed' },
  oauthBodyTooLarge: { status: 413, code: 'invalid_request', reason: null, message: UNREADABLE, spec: null, when: 'a token or device body over the size limit' },
  registrationBodyUnreadable: { status: 400, code: 'invalid_client_metadata', reason: null, message: UNREADABLE, spec: null, when: 'a registration body that cannot be parsed' },
  registrationBodyTooLarge: { status: 413, code: 'invalid_client_metadata', reason: null, message: UNREADABLE, spec: null, when: 'a registration body over the size limit' },
  oauthResponseType: { status: 400, code: 'unsupported_response_type', reason: null, message: 'response_type must be code', spec: ['RULE-21'], when: 'authorize with a response_type other than code' },
  unsupportedGrantType: {
    status: 400, code: 'unsupported_grant_type', reason: null, spec: null, when: 'a token request with another grant_type',
    message: 'grant_type must be authorization_code, refresh_token or urn:ietf:params:oauth:grant-type:device_code',
  },
  // --- clients ----------------------------------------------------------------------
  oauthUnknownClient: { status: 401, code: 'invalid_client', reason: null, message: 'unknown or revoked client', spec: null, when: 'a token or device request from an unknown or revoked client' },
  clientNoCodeGrant: {
    status: 400, code: 'unauthorized_client', reason: null, message: 'this client is not registered for the authorization_code grant', spec: null, when: 'authorize by a client without that grant',
  },
  clientNoDeviceGrant: {
    status: 400, code: 'unauthorized_client', reason: null, message: 'this client is not registered for the device_code grant', spec: null, when: 'device authorization by a client without that grant',
  },
  oauthUnknownResource: {
    status: 400, code: 'invalid_target', reason: null, message: (canonical: string) => `unknown resource; this server protects ${canonical}`, args: ['canonical'], spec: ['AUTH-02'],
    when: 'a resource indicator that is not this deployment\'s',
  },
  oauthResourceMismatch: { status: 400, code: 'invalid_target', reason: null, message: 'resource does not match the authorization request', spec: null, when: 'a code exchanged for another resource' },
  // --- codes, tokens, grants ----------------------------------------------------------
  codeUnknown: { status: 400, code: 'invalid_grant', reason: null, message: 'unknown authorization code', spec: null, when: 'an unknown authorization code' },
  codeUsed: { status: 400, code: 'invalid_grant', reason: null, message: 'the authorization code was already used', spec: ['RULE-21'], when: 'a replayed code (what it issued is revoked)' },
  codeExpired: { status: 400, code: 'invalid_grant', reason: null, message: 'the authorization code expired', spec: null, when: 'an expired code' },
  codeOtherClient: { status: 400, code: 'invalid_grant', reason: null, message: 'the authorization code was issued to another client', spec: null, when: 'a code exchanged by another client' },
  codeRedirectMismatch: { status: 400, code: 'invalid_grant', reason: null, message: 'redirect_uri does not match the authorization request', spec: null, when: 'a code exchanged with another redirect_uri' },
  codeVerifierMismatch: { status: 400, code: 'invalid_grant', reason: null, message: 'code_verifier does not match the code_challenge', spec: ['RULE-21'], when: 'a PKCE verifier that does not match' },
  grantRevoked: { status: 400, code: 'invalid_grant', reason: null, message: 'the grant was revoked', spec: ['RULE-25'], when: 'a token issued under a revoked grant' },
  refreshTokenInvalid: {
    status: 400, code: 'invalid_grant', reason: null, message: 'the refresh token is invalid, expired or revoked', spec: ['AUTH-03'],
    when: 'every bad refresh token alike: unknown, used (the grant is revoked), revoked, expired, another client\'s',
  },
  deviceCodeUnknown: { status: 400, code: 'invalid_grant', reason: null, message: 'unknown device code', spec: null, when: 'an unknown device code, or another client\'s' },
  deviceCodeRedeemed: { status: 400, code: 'invalid_grant', reason: null, message: 'the device code was already redeemed', spec: null, when: 'a device code polled after its tokens were issued' },
  deviceCodeExpired: { status: 400, code: 'expired_token', reason: null, message: 'the device code expired; start again', spec: ['LIM-03'], when: 'a device code older than 15 minutes' },
  deviceDenied: { status: 400, code: 'access_denied', reason: null, message: 'the request was denied', spec: ['RULE-22'], when: 'the human denied the device request' },
  consentDenied: { status: 400, code: 'access_denied', reason: null, message: 'the user denied the request', spec: ['RULE-21'], when: 'the human denied consent (sent as redirect parameters)' },
  slowDown: {
    status: 400, code: 'slow_down', reason: null, message: (interval: number) => `polling too fast; wait at least ${interval} s between polls`, args: ['interval'], spec: ['LIM-04'],
    when: 'a device poll sooner than the interval (which then grows by 5 s)',
  },
  authorizationPending: {
    status: 400, code: 'authorization_pending', reason: null, message: 'the user has not yet approved this request', spec: ['ERR-27', 'RULE-22'], when: 'a device code polled before approval',
  },
  // --- registration (RFC 7591) --------------------------------------------------------------
  clientMetadataNotObject: { status: 400, code: 'invalid_client_metadata', reason: null, message: 'the body must be a JSON object of client metadata', spec: null, when: 'registration with a body that is not an object' },
  clientAuthMethod: {
    status: 400, code: 'invalid_client_metadata', reason: null, message: 'token_endpoint_auth_method must be none: clients are public and use PKCE', spec: ['ERR-24', 'AUTH-12'],
    when: 'registration with an auth method other than none',
  },
  clientGrantTypes: { status: 400, code: 'invalid_client_metadata', reason: null, message: 'grant_types must be a non-empty array of strings', spec: null, when: 'registration with malformed grant_types' },
  clientGrantTypesUnsupported: {
    status: 400, code: 'invalid_client_metadata', reason: null, message: (grantTypes: string) => `unsupported grant_types: ${grantTypes}`, args: ['grantTypes'], spec: null,
    when: 'registration asking for grant types the server does not issue',
  },
  clientResponseTypes: { status: 400, code: 'invalid_client_metadata', reason: null, message: 'response_types may only contain code', spec: null, when: 'registration with a response type other than code' },
  clientName: { status: 400, code: 'invalid_client_metadata', reason: null, message: 'client_name must be a string of 1-200 characters', spec: null, when: 'registration with a malformed client_name' },
  clientNameHidden: {
    status: 400, code: 'invalid_client_metadata', reason: null, spec: null,
    message: (codePoint: string) => `client_name must not contain control, invisible or text-direction characters (found ${codePoint})`, args: ['codePoint'],
    when: 'registration (or a client metadata document) whose client_name holds a control, format (bidi override, zero-width, …) or invisible character (contracts/person-text.ts)',
  },
  clientNameBlank: {
    status: 400, code: 'invalid_client_metadata', reason: null, spec: null,
    message: 'client_name must contain a visible character (not only spaces or invisible characters)',
    when: 'registration (or a client metadata document) whose client_name shows nothing: only spaces, marks or invisible characters (contracts/person-text.ts)',
  },
  redirectUrisInvalid: { status: 400, code: 'invalid_redirect_uri', reason: null, message: 'redirect_uris must be an array of at most 10 strings', spec: null, when: 'registration with malformed redirect_uris' },
  redirectUriRequired: {
    status: 400, code: 'invalid_redirect_uri', reason: null, message: 'the authorization_code grant needs at least one redirect_uri', spec: null, when: 'registration for the code grant without a redirect URI',
  },
  redirectUriNotLoopback: {
    status: 400, code: 'invalid_redirect_uri', reason: null, spec: ['ERR-25', 'AUTH-13', 'RULE-23'],
    message: 'every redirect_uri must be http://127.0.0.1[:port]/…, http://localhost[:port]/… or urn:ietf:wg:oauth:2.0:oob',
    when: 'registration with a non-loopback, non-oob redirect URI',
  },
  // --- limits and failures ------------------------------------------------------------------------
  registrationThrottled: {
    status: 429, code: 'too_many_requests', reason: null, retryAfter: 'arg', spec: ['AUTH-14'],
    message: (retryAfterSecs: number) => `too many registrations from this address; retry in ${retryAfterSecs} s`, args: ['retryAfterSecs'], when: 'more than 20 registrations a minute from one address',
  },
  deviceThrottled: {
    status: 429, code: 'too_many_requests', reason: null, retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number) => `too many device authorizations from this address; retry in ${retryAfterSecs} s`, args: ['retryAfterSecs'],
    when: 'POST /oauth/device past its per-address limit',
  },
  oauthServerError: { status: 500, code: 'server_error', reason: null, message: 'internal error', spec: null, when: 'an unexpected failure at an OAuth endpoint' },
  revocationFailed: {
    status: 503, code: 'temporarily_unavailable', reason: null, message: 'revocation failed; retry', spec: ['RULE-25'],
    when: 'revocation failed on our side (never hidden behind a 200: the caller would believe the token dead)',
  },
} as const satisfies Record<string, OAuthEntry>
