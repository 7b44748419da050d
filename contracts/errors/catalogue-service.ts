// The service's JSON errors ({"error": {"code", "message", "reason"?}}) raised by the
// api-server: REST, MCP tool results (the same body under structuredContent), the
// console's JSON answers. One entry per error; the rule is in rule.ts.
import type { ApiEntry } from './entry.ts'

export const REQUEST_ERRORS = {
  invalidRequest: {
    status: 400, code: 'bad_request', reason: null, message: (detail: string) => `invalid request: ${detail}`, args: ['field: rule'], spec: null,
    when: 'the input breaks a rule of the operation (field and rule named, never the value); also a NUL or lone surrogate anywhere in the input',
  },
  unsupportedMediaType: { status: 415, code: 'unsupported_media_type', reason: null, message: 'unsupported content type', spec: null, when: 'a body in a content type the route does not read' },
  payloadTooLarge: { status: 413, code: 'payload_too_large', reason: null, message: 'request body too large', spec: null, when: 'a body over the size limit (REST, pod API)' },
  methodNotAllowed: {
    status: 405, code: 'method_not_allowed', reason: null, message: (allowed: string) => `method not allowed; use ${allowed}`, args: ['allowed'], spec: null,
    when: 'GET or DELETE on /mcp (stateless: POST only), a wrong method on the pod API or the operator probes',
  },
  noSuchRoute: { status: 404, code: 'not_found', reason: null, message: 'no such route', spec: ['ERR-26', 'AUTH-11'], when: 'an unknown path, including /oauth/register while registration is disabled' },
  tooManyRequests: { status: 429, code: 'rate_limited', reason: null, message: 'too many requests', spec: null, when: 'a framework-level 429' },
  internal: { status: 500, code: 'internal', reason: null, message: 'internal error', spec: null, when: 'an unexpected failure (logged server-side; the body says nothing more)' },
  databaseUnavailable: {
    status: 503, code: 'unavailable', reason: 'database_unavailable', message: 'the database is not answering; retry shortly', retryAfter: 2, spec: null,
    when: 'a query (the Bearer check included) or /readyz got no answer from Postgres in time',
  },
  hostNotAllowed: { status: 403, code: 'forbidden', reason: 'host_not_allowed', message: 'host not allowed', spec: null, when: '/mcp with a Host that is not the base URL\'s (DNS rebinding)' },
  originNotAllowed: { status: 403, code: 'forbidden', reason: 'origin_not_allowed', message: 'origin not allowed', spec: null, when: '/mcp with an Origin that is not allowed' },
} as const satisfies Record<string, ApiEntry>

export const AUTH_ERRORS = {
  bearerFailures: {
    status: 429, code: 'rate_limited', reason: 'too_many_bad_tokens', retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number) => 'too many requests with a token that does not work; retry later', args: ['retryAfterSecs'],
    when: 'NIGHTJAR_BEARER_FAILURE_LIMIT requests from one client address carried a Bearer token that did not resolve (a working token is never refused by it)',
  },
  mcpInitializeThrottled: {
    status: 429, code: 'rate_limited', reason: 'initialize_rate', retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number) => `too many MCP initialize requests with this credential; retry in ${retryAfterSecs} s`, args: ['retryAfterSecs'],
    when: 'NIGHTJAR_MCP_INITIALIZE_LIMIT initialize requests on /mcp with one credential within the window (each may create URL-elicitation state)',
  },
  unauthorized: {
    status: 401, code: 'unauthorized', reason: null, message: 'unauthorized', spec: ['ERR-01', 'ERR-03', 'RULE-29'],
    when: 'no, a wrong, revoked or expired Bearer credential, or a token for another resource (one identical 401; /metrics with its token too)',
  },
  missingScope: {
    status: 403, code: 'forbidden', reason: 'missing_scope', message: (scopes: string) => `missing required scope: ${scopes}`, args: ['scopes'],
    spec: ['ERR-03', 'ERR-04', 'ERR-05', 'AUTH-06', 'AUTH-10', 'RULE-26'], when: 'the credential lacks a scope the operation needs (MCP adds WWW-Authenticate insufficient_scope)',
  },
  scopeNotGrantable: {
    status: 403, code: 'forbidden', reason: 'scope_not_grantable',
    message: (scopes: string) => `missing required scope: ${scopes}; an OAuth sign-in cannot grant it, so use an API key that carries it`, args: ['scopes'],
    spec: ['AUTH-09'], when: 'an OAuth token calls a tool needing a scope OAuth never grants (a tool error, not a challenge the consent page could not satisfy)',
  },
  noEscalation: {
    status: 403, code: 'forbidden', reason: 'no_escalation', message: (scopes: string) => `cannot mint a key with a scope you do not hold: ${scopes}`, args: ['scopes'],
    spec: ['AUTH-07'], when: 'minting a key with a scope the minter does not hold',
  },
  unknownScope: { status: 400, code: 'bad_request', reason: null, message: (scopes: string) => `unknown scope: ${scopes}`, args: ['scopes'], spec: null, when: 'minting a key with a scope that does not exist' },
  emailTaken: { status: 409, code: 'conflict', reason: null, message: 'a user with that email exists', spec: null, when: 'admin bootstrap with an email already registered' },
  orgNameTaken: { status: 409, code: 'conflict', reason: null, message: (name: string) => `an org named ${name} exists`, args: ['name'], spec: null, when: 'admin bootstrap with an org name already taken' },
} as const satisfies Record<string, ApiEntry>

export const SESSION_ERRORS = {
  notFound: {
    status: 404, code: 'not_found', reason: null, message: (kind: string) => `unknown ${kind}`, args: ['kind'], spec: ['ERR-06', 'INV-04'],
    when: 'an id that is unknown or in another org (byte-identical: no existence oracle)',
  },
  sessionNotLive: {
    status: 409, code: 'conflict', reason: 'session_not_live', message: (status: string) => `session is ${status}`, args: ['status'], spec: null,
    when: 'driving a session that is pending or ended (or failed with no reason recorded)',
  },
  sessionFailed: {
    status: 409, code: 'conflict', reason: 'session_not_live', message: (failureReason: string) => `session is failed (${failureReason})`, args: ['failureReason'], spec: null,
    when: 'driving a session that failed: the message names its failureReason (NodeLost, OOMKilled, PodFailed …), so an agent knows why without another call',
  },
  noSessionPlane: { status: 503, code: 'unavailable', reason: 'no_session_plane', message: 'browser sessions are not available in this process', spec: null, when: 'a process started without a session plane' },
  idleTimeoutTooLong: {
    status: 400, code: 'bad_request', reason: 'idle_timeout_too_long', message: (max: number) => `invalid request: idleTimeoutSecs: at most ${max} on this server`, args: ['max'], spec: null,
    when: 'a session asking for a longer idle timeout than the server\'s',
  },
  maxDurationTooLong: {
    status: 400, code: 'bad_request', reason: 'max_duration_too_long', message: (max: number) => `invalid request: maxDurationSecs: at most ${max} on this server`, args: ['max'], spec: null,
    when: 'a session asking for a longer maximum duration than the server\'s',
  },
  identityRequired: { status: 400, code: 'bad_request', reason: 'identity_required', message: 'warmResume and fromVersion need an identity', spec: ['ERR-22', 'RULE-20'], when: 'warmResume or fromVersion without identity' },
  cloakRequired: { status: 400, code: 'bad_request', reason: 'cloak_required', message: 'warmResume needs browserKind cloak', spec: ['RULE-18'], when: 'warmResume on a non-cloak browser' },
  cloakDisabled: { status: 403, code: 'forbidden', reason: 'cloak_disabled', message: 'cloak browsers are not enabled for this org', spec: ['ERR-21', 'RULE-19'], when: 'a cloak session while governance.cloakEnabled is false' },
  originNotDeclared: {
    status: 403, code: 'forbidden', reason: 'origin_not_declared', message: 'the session url is not a declared advisor origin', spec: ['ERR-21', 'RULE-19'],
    when: 'a cloak session whose url is not in governance.declaredAdvisorOrigins',
  },
  networkNotFound: {
    status: 403, code: 'forbidden', reason: 'network_not_found', message: 'network not found', spec: ['ERR-30', 'RULE-07'],
    when: 'session_start naming a network that is not in the key\'s org',
  },
  agentMismatch: { status: 403, code: 'forbidden', reason: 'agent_mismatch', message: "agent must be the credential's own agent", spec: ['RULE-32'], when: 'a session start naming another agent than the credential\'s' },
  noAuthStateVersion: {
    status: 404, code: 'not_found', reason: null, message: 'no captured auth-state version for this identity', spec: ['ERR-23', 'RULE-20'],
    when: 'warm resume of an identity with no captured version (or a fromVersion of another identity)',
  },
  noIdentityToCapture: {
    status: 400, code: 'bad_request', reason: 'no_identity', message: 'session has no bound identity; cannot capture auth-state', spec: ['RULE-17'],
    when: 'authstate_capture on an anonymous session',
  },
  sessionStartFailed: {
    status: 503, code: 'unavailable', reason: 'pod_failed', message: 'the browser pod failed to start', spec: null,
    when: 'the session\'s pod failed or ended before going live (the session view\'s failureReason names the cause)',
  },
  sessionResourceGone: { status: 503, code: 'unavailable', reason: 'resource_gone', message: 'browser session resource disappeared', spec: null, when: 'the BrowserSession resource was deleted while the start waited' },
  sessionStartTimeout: { status: 504, code: 'E_UPSTREAM', reason: 'start_timeout', message: 'browser session did not become live in time', spec: null, when: 'the pod was not live within the start deadline' },
  shuttingDown: { status: 503, code: 'unavailable', reason: 'shutting_down', message: 'shutting down', spec: null, when: 'a start still waiting when the server stops, and /readyz once a shutdown began' },
  orgSessionQuota: {
    status: 429, code: 'rate_limited', reason: 'org_session_quota', retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number, quota: number) => `this org has ${quota} open sessions, its quota; end one first`, args: ['retryAfterSecs', 'quota'],
    when: 'the org already has NIGHTJAR_ORG_MAX_LIVE_SESSIONS open sessions',
  },
  sessionCapacity: {
    status: 429, code: 'rate_limited', reason: 'session_capacity', retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number) => 'the service is at its session capacity; retry later', args: ['retryAfterSecs'], when: 'the deployment is at NIGHTJAR_MAX_LIVE_SESSIONS',
  },
  startQueueFull: {
    status: 429, code: 'rate_limited', reason: 'start_queue_full', retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number) => 'too many session starts are waiting; retry shortly', args: ['retryAfterSecs'], when: 'no launch slot and the start queue is full',
  },
  startQueueTimeout: {
    status: 429, code: 'rate_limited', reason: 'start_queue_timeout', retryAfter: 'arg', spec: null,
    message: (retryAfterSecs: number) => 'no browser could be started in time; retry shortly', args: ['retryAfterSecs'], when: 'a queued start waited NIGHTJAR_START_QUEUE_WAIT_SECONDS',
  },
} as const satisfies Record<string, ApiEntry>

export const PERSONA_ERRORS = {
  noBoundIdentity: { status: 400, code: 'bad_request', reason: 'no_bound_identity', message: 'session has no bound identity; cannot fill a credential', spec: ['ERR-07'], when: 'a fill on an anonymous session' },
  noCredentialNamed: {
    status: 404, code: 'not_found', reason: null, message: (name: string) => `no credential named ${name}`, args: ['name'], spec: ['ERR-08'],
    when: 'a structured fill naming a credential the bound identity does not hold (a name that is not name-shaped shows as "(invalid name)")',
  },
  noCredentialPlaceholder: {
    status: 400, code: 'bad_request', reason: null, message: (placeholder: string) => `no credential ${placeholder}`, args: ['placeholder'], spec: ['ERR-09'],
    when: 'a free-text fill whose placeholder matches no credential',
  },
  grantOriginDenied: {
    status: 403, code: 'forbidden', reason: 'grant_intersection', message: 'grant-origin denied', spec: ['ERR-10', 'INV-07'],
    when: 'the credential allowlist and the grant\'s allowedOrigins are disjoint; the secret is never forwarded',
  },
  freetextDenied: { status: 403, code: 'forbidden', reason: 'freetext_disabled', message: 'free-text fill denied', spec: ['ERR-13', 'RULE-16', 'EV-02'], when: 'a {{credential:…}} marker while the org flag is off' },
  grantNotLive: {
    status: 403, code: 'forbidden', reason: ['grant_expired', 'grant_revoked'], message: 'identity grant not live', spec: ['ERR-14', 'FLD-14'],
    when: 'a bind (or a later fill) under an expired or revoked grant',
  },
  noGrant: { status: 403, code: 'forbidden', reason: 'no_grant', message: 'no grant to assume this identity', spec: ['RULE-15', 'RULE-27'], when: 'a bind without a live assume or manage grant' },
  propagationNone: {
    status: 403, code: 'forbidden', reason: 'propagation_none', message: "grant propagation='none' blocks a spawned-child bind", spec: ['ERR-15', 'FLD-16'],
    when: 'a spawned child binding a persona whose winning grant has propagation none',
  },
  identityInUse: {
    status: 409, code: 'conflict', reason: 'identity_in_use', message: 'identity in use by another session', spec: ['ERR-16', 'LIM-06', 'RULE-13'],
    when: 'the identity\'s lease is held, a second concurrent warm resume included',
  },
  identityLeased: { status: 409, code: 'conflict', reason: 'identity_in_use', message: 'identity in use', spec: ['ERR-17'], when: 'DELETE of an identity that holds a live lease' },
  duplicateIdentityName: { status: 409, code: 'conflict', reason: 'duplicate_name', message: 'an identity with that name exists in this org', spec: ['ERR-18', 'FLD-02'], when: 'a duplicate identity name in an org' },
  duplicateCredentialName: {
    status: 409, code: 'conflict', reason: 'duplicate_name', message: 'a credential with that name exists on this identity', spec: ['FLD-05'], when: 'a duplicate credential name on an identity',
  },
  sessionHasIdentity: { status: 409, code: 'conflict', reason: 'session_has_identity', message: 'session already binds an identity', spec: null, when: 'a second bind on one session' },
  emptyOriginAllowlist: {
    status: 400, code: 'bad_request', reason: null, message: 'origin_allowlist must list at least one origin', spec: ['ERR-19', 'FLD-09', 'LIM-09'],
    when: 'a credential created with an empty allowlist',
  },
  noKms: {
    status: 500, code: 'internal', reason: null, message: 'credential decryption unavailable: no KMS object store configured', spec: ['ERR-20'],
    when: 'NIGHTJAR_KMS_PROVIDER=none: fills and credential writes fail closed',
  },
  sealedValueUnopenable: { status: 500, code: 'internal', reason: null, message: 'sealed value could not be opened', spec: null, when: 'a sealed value fails authentication or is malformed (why stays in the log)' },
  dataKeyUnwrapFailed: { status: 500, code: 'internal', reason: null, message: 'org data key could not be unwrapped', spec: null, when: 'the KMS provider refused to unwrap the org\'s data key' },
  kmsUnavailable: { status: 500, code: 'internal', reason: null, message: 'KMS provider unavailable', spec: null, when: 'the KMS provider could not be reached' },
} as const satisfies Record<string, ApiEntry>

export const NETWORK_ERRORS = {
  networkNameTaken: { status: 409, code: 'conflict', reason: null, message: 'a network with that name exists', spec: null, when: 'a duplicate network name in an org' },
} as const satisfies Record<string, ApiEntry>

export const CONSOLE_ERRORS = {
  signInThrottled: {
    status: 429, code: 'rate_limited', reason: null, retryAfter: 'arg', message: (retryAfterSecs: number) => `too many sign-in attempts; retry in ${retryAfterSecs} s`, args: ['retryAfterSecs'],
    spec: null, when: 'console sign-in past the per-address or per-account limit, for a client that does not ask for HTML',
  },
  userCodeThrottled: {
    status: 429, code: 'rate_limited', reason: null, retryAfter: 'arg', message: (retryAfterSecs: number) => `too many wrong codes; retry in ${retryAfterSecs} s`, args: ['retryAfterSecs'],
    spec: null, when: 'the device verification page past its wrong-code limit, for a client that does not ask for HTML',
  },
} as const satisfies Record<string, ApiEntry>
