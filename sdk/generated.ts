// Generated from contracts/operations/index.ts by scripts/gen-sdk.ts — do not edit.

/** What me takes. */
export type MeInput = Record<string, never>
/** What me answers. */
export type MeOutput = {
  orgId: string
  agentId: string
  /** sorted */
  scopes: Array<string>
  principal: {
    kind: "key" | "oauth" | "console"
    /** the agent (or, for the console, the user) acting */
    principalId: string
    /** the key, OAuth grant or console session that authenticated the call */
    credentialId: string
    /** the human-readable name of that key or grant */
    name: string
  }
}

/** What key_create takes. */
export type KeyCreateInput = {
  name: string
  scopes: Array<string>
  agent?: string
}
/** What key_create answers. */
export type KeyCreateOutput = {
  id: string
  name: string
  /** de-duplicated and sorted */
  scopes: Array<string>
  /** the agent the key acts as; null for the org default agent */
  agentId: string | null
  /** the key token (njk_…); shown only in this response, store it now */
  secret: string
}

/** What audit_list takes. */
export type AuditListInput = {
  after?: number
  limit?: number
  action?: string
}
/** What audit_list answers. */
export type AuditListOutput = {
  items: Array<{
    /** a decimal number; pass it as after to read on from here */
    id: string
    orgId: string
    actor: string
    action: string
    targetType?: string
    targetId?: string
    identityId?: string
    credentialId?: string
    grantId?: string
    sessionId?: string
    credentialName?: string
    host?: string
    fieldKind?: string
    reason?: string
    /** a credential fill’s row: the extensions its session loaded (all trusted, or the fill was refused) */
    extensionIds?: Array<string>
    createdAt: string
  }>
  /** the after of the next page; null when this page is not full */
  next: string | null
}

/** What identity_list_assumable takes. */
export type IdentityListAssumableInput = Record<string, never>
/** What identity_list_assumable answers. */
export type IdentityListAssumableOutput = Array<{
  id: string
  name: string
  /** the role of the most restrictive live grant */
  grantRole: "assume" | "manage"
  leaseState: "available" | "in_use"
  openModes: Array<"exclusive" | "fork" | "readonly">
  /** names and placeholders only: never a value or a mask */
  credentialSlots: Array<{
    name: string
    /** {{credential:<name>}} */
    placeholder: string
    /** the credential's origin allowlist narrowed by the grant's allowed origins */
    allowedOrigins: Array<string>
  }>
}>

/** What identity_create takes. */
export type IdentityCreateInput = {
  name: string
  defaultOpenMode?: "exclusive" | "fork" | "readonly"
}
/** What identity_create answers. */
export type IdentityCreateOutput = {
  id: string
  name: string
  defaultOpenMode: "exclusive" | "fork" | "readonly"
  createdAt: string
}

/** What identity_list takes. */
export type IdentityListInput = Record<string, never>
/** What identity_list answers. */
export type IdentityListOutput = Array<{
  id: string
  name: string
  defaultOpenMode: "exclusive" | "fork" | "readonly"
  createdAt: string
  /** never the holder */
  leaseState: "available" | "in_use"
  /** present when the identity has a default upstream proxy: its URL (never the credentials) and whether it authenticates */
  proxy?: {
    /** scheme://host:port */
    url: string
    /** credentials are sealed for it (never shown) */
    authenticated: boolean
  }
}>

/** What identity_delete takes. */
export type IdentityDeleteInput = {
  identityId: string
}
/** What identity_delete answers (204: no content). */
export type IdentityDeleteOutput = void

/** What identity_proxy_put takes. */
export type IdentityProxyPutInput = {
  identityId: string
  /** http://, https:// (TLS to the proxy) or socks5:// host[:port]; no credentials in the URL */
  url: string
  /** write-only: sealed at once, never returned */
  username?: string
  /** write-only: sealed at once, never returned */
  password?: string
}
/** What identity_proxy_put answers. */
export type IdentityProxyPutOutput = {
  /** scheme://host:port */
  url: string
  /** credentials are sealed for it (never shown) */
  authenticated: boolean
}

/** What identity_proxy_delete takes. */
export type IdentityProxyDeleteInput = {
  identityId: string
}
/** What identity_proxy_delete answers (204: no content). */
export type IdentityProxyDeleteOutput = void

/** What credential_create takes. */
export type CredentialCreateInput = {
  identityId: string
  name: string
  placeholder?: string
  /** password (default), or totp: the value is an otpauth://totp/ URI or a base32 seed, and a fill types the current code */
  kind?: "password" | "totp"
  value: string
  originAllowlist: Array<string>
}
/** What credential_create answers. */
export type CredentialCreateOutput = {
  id: string
  identityId: string
  name: string
  /** {{credential:<name>}} */
  placeholder: string
  /** password: the value is typed; totp: the current one-time code is typed */
  kind: "password" | "totp"
  /** bullets, plus the last 4 characters of a password of 8 or more; bullets only for totp */
  maskedValue: string
  originAllowlist: Array<string>
  createdAt: string
  /** null until the first rotation */
  rotatedAt: string | null
}

/** What credential_list takes. */
export type CredentialListInput = {
  identityId: string
}
/** What credential_list answers. */
export type CredentialListOutput = Array<{
  id: string
  identityId: string
  name: string
  /** {{credential:<name>}} */
  placeholder: string
  /** password: the value is typed; totp: the current one-time code is typed */
  kind: "password" | "totp"
  /** bullets, plus the last 4 characters of a password of 8 or more; bullets only for totp */
  maskedValue: string
  originAllowlist: Array<string>
  createdAt: string
  /** null until the first rotation */
  rotatedAt: string | null
}>

/** What credential_rotate takes. */
export type CredentialRotateInput = {
  identityId: string
  credentialId: string
  value: string
}
/** What credential_rotate answers. */
export type CredentialRotateOutput = {
  id: string
  identityId: string
  name: string
  /** {{credential:<name>}} */
  placeholder: string
  /** password: the value is typed; totp: the current one-time code is typed */
  kind: "password" | "totp"
  /** bullets, plus the last 4 characters of a password of 8 or more; bullets only for totp */
  maskedValue: string
  originAllowlist: Array<string>
  createdAt: string
  /** null until the first rotation */
  rotatedAt: string | null
}

/** What credential_delete takes. */
export type CredentialDeleteInput = {
  identityId: string
  credentialId: string
}
/** What credential_delete answers (204: no content). */
export type CredentialDeleteOutput = void

/** What grant_create takes. */
export type GrantCreateInput = {
  identityId: string
  principalAgentId: string
  role: "assume" | "manage"
  expiresAt: string
  allowedOrigins: Array<string>
  propagation: "none" | "same_conversation" | "descendants"
  maxSessionDurationSecs: number | null
  reason: string
  principalUserId?: string | null
  principalOrgRole?: "owner" | "admin" | "member" | null
}
/** What grant_create answers. */
export type GrantCreateOutput = {
  id: string
  identityId: string
  principalAgentId: string
  principalUserId: string | null
  principalOrgRole: "owner" | "admin" | "member" | null
  role: "assume" | "manage"
  expiresAt: string
  allowedOrigins: Array<string>
  propagation: "none" | "same_conversation" | "descendants"
  maxSessionDurationSecs: number | null
  reason: string
  createdByUserId: string | null
  createdAt: string
  revokedAt: string | null
  /** the same as revokedAt (the spec’s name for the soft-revoke field) */
  revoked_at: string | null
  state: "live" | "expired" | "revoked"
}

/** What grant_list takes. */
export type GrantListInput = {
  identityId: string
}
/** What grant_list answers. */
export type GrantListOutput = Array<{
  id: string
  identityId: string
  principalAgentId: string
  principalUserId: string | null
  principalOrgRole: "owner" | "admin" | "member" | null
  role: "assume" | "manage"
  expiresAt: string
  allowedOrigins: Array<string>
  propagation: "none" | "same_conversation" | "descendants"
  maxSessionDurationSecs: number | null
  reason: string
  createdByUserId: string | null
  createdAt: string
  revokedAt: string | null
  /** the same as revokedAt (the spec’s name for the soft-revoke field) */
  revoked_at: string | null
  state: "live" | "expired" | "revoked"
}>

/** What grant_revoke takes. */
export type GrantRevokeInput = {
  identityId: string
  grantId: string
}
/** What grant_revoke answers (204: no content). */
export type GrantRevokeOutput = void

/** What grant_delete takes. */
export type GrantDeleteInput = {
  identityId: string
  grantId: string
}
/** What grant_delete answers (204: no content). */
export type GrantDeleteOutput = void

/** What governance_get takes. */
export type GovernanceGetInput = Record<string, never>
/** What governance_get answers. */
export type GovernanceGetOutput = {
  credential_freetext_fill: boolean
  cloakEnabled: boolean
  /** origins, http(s)://host[:port] */
  declaredAdvisorOrigins: Array<string>
  /** record every session whose start leaves `record` out (a start may still say record: false) */
  recordSessions: boolean
  /** record every session whose start leaves `video` out as video, with the default settings (a start may still say video: false) */
  videoSessions: boolean
  /** the org's bound on every video's length, in seconds; null: the platform's (NIGHTJAR_VIDEO_MAX_MINUTES) alone. The lower of the two applies */
  videoMaxSeconds: number | null
  /** the org's bound on every video's size, in MiB; null: the platform's (NIGHTJAR_VIDEO_MAX_MB) alone. The lower of the two applies */
  videoMaxMiB: number | null
  /** the upstream proxy hosts (host[:port], matched exactly) a session or an identity may name; empty allows no proxy (docs/proxy.md) */
  proxyHosts: Array<string>
}

/** What governance_put takes. */
export type GovernancePutInput = {
  credential_freetext_fill?: boolean
  cloakEnabled?: boolean
  declaredAdvisorOrigins?: Array<string>
  recordSessions?: boolean
  videoSessions?: boolean
  videoMaxSeconds?: number | null
  videoMaxMiB?: number | null
  proxyHosts?: Array<string>
}
/** What governance_put answers. */
export type GovernancePutOutput = {
  credential_freetext_fill: boolean
  cloakEnabled: boolean
  /** origins, http(s)://host[:port] */
  declaredAdvisorOrigins: Array<string>
  /** record every session whose start leaves `record` out (a start may still say record: false) */
  recordSessions: boolean
  /** record every session whose start leaves `video` out as video, with the default settings (a start may still say video: false) */
  videoSessions: boolean
  /** the org's bound on every video's length, in seconds; null: the platform's (NIGHTJAR_VIDEO_MAX_MINUTES) alone. The lower of the two applies */
  videoMaxSeconds: number | null
  /** the org's bound on every video's size, in MiB; null: the platform's (NIGHTJAR_VIDEO_MAX_MB) alone. The lower of the two applies */
  videoMaxMiB: number | null
  /** the upstream proxy hosts (host[:port], matched exactly) a session or an identity may name; empty allows no proxy (docs/proxy.md) */
  proxyHosts: Array<string>
}

/** What credential_request takes. */
export type CredentialRequestInput = {
  /** identity id (nident_…) or name */
  identity: string
  /** the name credential_fill will use; must not exist yet */
  credentialName: string
  /** hosts the credential may be filled on (at least one, at most 20; each at most 253 characters in at most 10 labels) */
  originAllowlist: Array<string>
  /** why it is needed; shown to the person on the console page (no control, invisible or text-direction characters) */
  reason: string
}
/** What credential_request answers. */
export type CredentialRequestOutput = {
  /** the request (ncreq_…): single use, of this org and identity only */
  id: string
  identityId: string
  credentialName: string
  /** the console page where a person of the org enters the secret; give it to a person, never open it yourself */
  url: string
  /** the request is refused after this (NIGHTJAR_ELICITATION_TTL_SECONDS, 10 minutes by default) */
  expiresAt: string
  /** pending: nobody has entered it yet (watch credential_list for the name); completed: the credential exists now; declined/cancelled: the user refused the URL elicitation; expired: nobody entered it in time */
  status: "pending" | "completed" | "declined" | "cancelled" | "expired"
  /** true when the URL was sent to the user by URL elicitation (the call then waited for the answer) */
  elicited: boolean
}

/** What authstate_capture takes. */
export type AuthstateCaptureInput = {
  sessionId: string
}
/** What authstate_capture answers. */
export type AuthstateCaptureOutput = {
  /** version id (niver_…); session_start’s fromVersion */
  id: string
  /** the identity the state belongs to (nident_…) */
  identityId: string
  createdAt: string
  /** the principal who captured it */
  createdBy: string
  /** the hosts the state covers (cookie domains and storage origins’ hosts), sorted; at most 200 */
  origins: Array<string>
}

/** What authstate_list takes. */
export type AuthstateListInput = {
  identityId: string
}
/** What authstate_list answers. */
export type AuthstateListOutput = Array<{
  /** version id (niver_…); session_start’s fromVersion */
  id: string
  /** the identity the state belongs to (nident_…) */
  identityId: string
  createdAt: string
  /** the principal who captured it */
  createdBy: string
  /** the hosts the state covers (cookie domains and storage origins’ hosts), sorted; at most 200 */
  origins: Array<string>
}>

/** What session_start takes. */
export type SessionStartInput = {
  /** identity id (nident_…) or name to bind */
  identity?: string
  /** local, split or platform; omitted uses the agent default */
  egress?: "local" | "split" | "platform"
  /** network name, slug or id, for local or split egress */
  network?: string
  viewport?: {
    width: number
    height: number
  }
  url?: string
  browserKind?: "chromium" | "cloak"
  warmResume?: boolean
  fromVersion?: string
  /** REST/SDK only: empty or the credential’s own agent */
  agent?: string
  /** REST/SDK only: end the session after this long without a driving call (at most the server’s value) */
  idleTimeoutSecs?: number
  /** REST/SDK only: end the session this long after it went live (at most the server’s value) */
  maxDurationSecs?: number
  /** REST/SDK only: record the session (a DOM timeline; GET /v1/sessions/{sessionId}/recording); left out, the org default (governance recordSessions) decides */
  record?: boolean
  /** REST/SDK only: a video of what the page showed (GET /v1/sessions/{sessionId}/video once the session ended); true for the defaults; left out, the org default (governance videoSessions) decides */
  video?: boolean | {
    /** webm (VP9, the default) or mp4 (H.264) */
    format?: "webm" | "mp4"
    /** frames per second (default 5) */
    fps?: number
    /** the video’s width in pixels (default the viewport’s); its height keeps the viewport’s aspect */
    width?: number
  }
  /** REST/SDK only: an upstream proxy every page request goes through (docs/proxy.md); its host must be on the org allowlist (governance proxyHosts). Left out, the bound identity’s default proxy, if any */
  proxy?: {
    /** http://, https:// (TLS to the proxy) or socks5:// host[:port]; no credentials in the URL */
    url: string
    /** write-only: sealed at once, never returned */
    username?: string
    /** write-only: sealed at once, never returned */
    password?: string
  }
  /** REST/SDK only: browser extensions (next_…) the session loads, browserKind chromium only; left out, the bound identity’s default (how an MCP start loads them). A sealed fill runs only while every one is trusted by an org admin (docs/extensions.md) */
  extensions?: Array<string>
  /** how long to wait for the browser to be live before answering with the pending session (default 30 s over MCP; over REST 5 s, or Prefer: wait=N) */
  waitSeconds?: number
}
/** What session_start answers. */
export type SessionStartOutput = {
  /** session id (nsess_…) */
  id: string
  status: "pending" | "live" | "ended" | "failed"
  egress: "local" | "split" | "platform"
  /** id of the network the session tunnels to, if any */
  network: string | null
  /** who opened it: the acting agent, the credential and its name */
  openedBy: {
    principalId: string
    credentialId: string
    name: string
  }
  /** id of the bound identity (nident_…), if any */
  identity: string | null
  /** the agent the session belongs to (a child agent for a spawned session) */
  agentId: string
  browserKind: "chromium" | "cloak"
  /** the url recorded at start (not navigated) */
  url: string | null
  viewport: {
    width: number
    height: number
  } | null
  createdAt: string
  liveAt: string | null
  endedAt: string | null
  /** present on a failed session: why it failed */
  failureReason?: string
  /** present once live: what isolates the session's pages — chromium (Chromium's own sandbox), chromium+gvisor (and gVisor's kernel), gvisor, or none (the operator turned Chromium's sandbox off) */
  sandbox?: "chromium" | "chromium+gvisor" | "gvisor" | "none"
  /** the session ends after this long without a driving call */
  idleTimeoutSecs: number | null
  /** and at the latest this long after it went live */
  maxDurationSecs: number | null
  /** present when the session ended on its own: idle_timeout or max_duration */
  endReason?: string
  /** present while a start waits for a browser: its place in line (1 = next) */
  queuePosition?: number
  /** present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates */
  proxy?: {
    /** scheme://host:port */
    url: string
    /** credentials are sealed for it (never shown) */
    authenticated: boolean
  }
  /** who drives the browser: the agent, or a person who took control in the console (driving tools then answer 409 human_in_control until they hand it back) */
  control: "agent" | "human"
  /** present when the session loads browser extensions (next_…): a sealed fill runs only while every one of them is trusted (docs/extensions.md) */
  extensions?: Array<string>
}

/** What spawn_and_start_session takes. */
export type SpawnAndStartSessionInput = {
  childName: string
  /** identity id (nident_…) or name to bind */
  identity?: string
  /** local, split or platform; omitted uses the agent default */
  egress?: "local" | "split" | "platform"
  /** network name, slug or id, for local or split egress */
  network?: string
  viewport?: {
    width: number
    height: number
  }
}
/** What spawn_and_start_session answers. */
export type SpawnAndStartSessionOutput = {
  /** session id (nsess_…) */
  id: string
  status: "pending" | "live" | "ended" | "failed"
  egress: "local" | "split" | "platform"
  /** id of the network the session tunnels to, if any */
  network: string | null
  /** who opened it: the acting agent, the credential and its name */
  openedBy: {
    principalId: string
    credentialId: string
    name: string
  }
  /** id of the bound identity (nident_…), if any */
  identity: string | null
  /** the agent the session belongs to (a child agent for a spawned session) */
  agentId: string
  browserKind: "chromium" | "cloak"
  /** the url recorded at start (not navigated) */
  url: string | null
  viewport: {
    width: number
    height: number
  } | null
  createdAt: string
  liveAt: string | null
  endedAt: string | null
  /** present on a failed session: why it failed */
  failureReason?: string
  /** present once live: what isolates the session's pages — chromium (Chromium's own sandbox), chromium+gvisor (and gVisor's kernel), gvisor, or none (the operator turned Chromium's sandbox off) */
  sandbox?: "chromium" | "chromium+gvisor" | "gvisor" | "none"
  /** the session ends after this long without a driving call */
  idleTimeoutSecs: number | null
  /** and at the latest this long after it went live */
  maxDurationSecs: number | null
  /** present when the session ended on its own: idle_timeout or max_duration */
  endReason?: string
  /** present while a start waits for a browser: its place in line (1 = next) */
  queuePosition?: number
  /** present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates */
  proxy?: {
    /** scheme://host:port */
    url: string
    /** credentials are sealed for it (never shown) */
    authenticated: boolean
  }
  /** who drives the browser: the agent, or a person who took control in the console (driving tools then answer 409 human_in_control until they hand it back) */
  control: "agent" | "human"
  /** present when the session loads browser extensions (next_…): a sealed fill runs only while every one of them is trusted (docs/extensions.md) */
  extensions?: Array<string>
}

/** What session_get takes. */
export type SessionGetInput = {
  sessionId: string
  /** wait up to this long while the session is pending (default 0: answer at once) */
  waitSeconds?: number
}
/** What session_get answers. */
export type SessionGetOutput = {
  /** session id (nsess_…) */
  id: string
  status: "pending" | "live" | "ended" | "failed"
  egress: "local" | "split" | "platform"
  /** id of the network the session tunnels to, if any */
  network: string | null
  /** who opened it: the acting agent, the credential and its name */
  openedBy: {
    principalId: string
    credentialId: string
    name: string
  }
  /** id of the bound identity (nident_…), if any */
  identity: string | null
  /** the agent the session belongs to (a child agent for a spawned session) */
  agentId: string
  browserKind: "chromium" | "cloak"
  /** the url recorded at start (not navigated) */
  url: string | null
  viewport: {
    width: number
    height: number
  } | null
  createdAt: string
  liveAt: string | null
  endedAt: string | null
  /** present on a failed session: why it failed */
  failureReason?: string
  /** present once live: what isolates the session's pages — chromium (Chromium's own sandbox), chromium+gvisor (and gVisor's kernel), gvisor, or none (the operator turned Chromium's sandbox off) */
  sandbox?: "chromium" | "chromium+gvisor" | "gvisor" | "none"
  /** the session ends after this long without a driving call */
  idleTimeoutSecs: number | null
  /** and at the latest this long after it went live */
  maxDurationSecs: number | null
  /** present when the session ended on its own: idle_timeout or max_duration */
  endReason?: string
  /** present while a start waits for a browser: its place in line (1 = next) */
  queuePosition?: number
  /** present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates */
  proxy?: {
    /** scheme://host:port */
    url: string
    /** credentials are sealed for it (never shown) */
    authenticated: boolean
  }
  /** who drives the browser: the agent, or a person who took control in the console (driving tools then answer 409 human_in_control until they hand it back) */
  control: "agent" | "human"
  /** present when the session loads browser extensions (next_…): a sealed fill runs only while every one of them is trusted (docs/extensions.md) */
  extensions?: Array<string>
}

/** What session_list takes. */
export type SessionListInput = {
  status?: "pending" | "live" | "ended" | "failed"
  limit?: number
}
/** What session_list answers. */
export type SessionListOutput = {
  items: Array<{
    /** session id (nsess_…) */
    id: string
    status: "pending" | "live" | "ended" | "failed"
    egress: "local" | "split" | "platform"
    /** id of the network the session tunnels to, if any */
    network: string | null
    /** who opened it: the acting agent, the credential and its name */
    openedBy: {
      principalId: string
      credentialId: string
      name: string
    }
    /** id of the bound identity (nident_…), if any */
    identity: string | null
    /** the agent the session belongs to (a child agent for a spawned session) */
    agentId: string
    browserKind: "chromium" | "cloak"
    /** the url recorded at start (not navigated) */
    url: string | null
    viewport: {
      width: number
      height: number
    } | null
    createdAt: string
    liveAt: string | null
    endedAt: string | null
    /** present on a failed session: why it failed */
    failureReason?: string
    /** present once live: what isolates the session's pages — chromium (Chromium's own sandbox), chromium+gvisor (and gVisor's kernel), gvisor, or none (the operator turned Chromium's sandbox off) */
    sandbox?: "chromium" | "chromium+gvisor" | "gvisor" | "none"
    /** the session ends after this long without a driving call */
    idleTimeoutSecs: number | null
    /** and at the latest this long after it went live */
    maxDurationSecs: number | null
    /** present when the session ended on its own: idle_timeout or max_duration */
    endReason?: string
    /** present while a start waits for a browser: its place in line (1 = next) */
    queuePosition?: number
    /** present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates */
    proxy?: {
      /** scheme://host:port */
      url: string
      /** credentials are sealed for it (never shown) */
      authenticated: boolean
    }
    /** who drives the browser: the agent, or a person who took control in the console (driving tools then answer 409 human_in_control until they hand it back) */
    control: "agent" | "human"
    /** present when the session loads browser extensions (next_…): a sealed fill runs only while every one of them is trusted (docs/extensions.md) */
    extensions?: Array<string>
  }>
}

/** What session_end takes. */
export type SessionEndInput = {
  sessionId: string
}
/** What session_end answers. */
export type SessionEndOutput = {
  /** session id (nsess_…) */
  id: string
  status: "pending" | "live" | "ended" | "failed"
  egress: "local" | "split" | "platform"
  /** id of the network the session tunnels to, if any */
  network: string | null
  /** who opened it: the acting agent, the credential and its name */
  openedBy: {
    principalId: string
    credentialId: string
    name: string
  }
  /** id of the bound identity (nident_…), if any */
  identity: string | null
  /** the agent the session belongs to (a child agent for a spawned session) */
  agentId: string
  browserKind: "chromium" | "cloak"
  /** the url recorded at start (not navigated) */
  url: string | null
  viewport: {
    width: number
    height: number
  } | null
  createdAt: string
  liveAt: string | null
  endedAt: string | null
  /** present on a failed session: why it failed */
  failureReason?: string
  /** present once live: what isolates the session's pages — chromium (Chromium's own sandbox), chromium+gvisor (and gVisor's kernel), gvisor, or none (the operator turned Chromium's sandbox off) */
  sandbox?: "chromium" | "chromium+gvisor" | "gvisor" | "none"
  /** the session ends after this long without a driving call */
  idleTimeoutSecs: number | null
  /** and at the latest this long after it went live */
  maxDurationSecs: number | null
  /** present when the session ended on its own: idle_timeout or max_duration */
  endReason?: string
  /** present while a start waits for a browser: its place in line (1 = next) */
  queuePosition?: number
  /** present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates */
  proxy?: {
    /** scheme://host:port */
    url: string
    /** credentials are sealed for it (never shown) */
    authenticated: boolean
  }
  /** who drives the browser: the agent, or a person who took control in the console (driving tools then answer 409 human_in_control until they hand it back) */
  control: "agent" | "human"
  /** present when the session loads browser extensions (next_…): a sealed fill runs only while every one of them is trusted (docs/extensions.md) */
  extensions?: Array<string>
}

/** What session_journal takes. */
export type SessionJournalInput = {
  sessionId: string
  after?: number
  limit?: number
}
/** What session_journal answers. */
export type SessionJournalOutput = {
  items: Array<{
    /** increasing row id; pass it as `after` to read on from here */
    id: string
    /** the operation, e.g. session_start, navigate, act */
    op: string
    /** what the journal keeps of the call (value-free) */
    detail: Record<string, unknown>
    outcome: "ok" | "error"
    /** present when outcome is error */
    errorCode?: string
    /** present for driving actions */
    durationMs?: number
    at: string
  }>
}

/** What session_cdp takes. */
export type SessionCdpInput = {
  sessionId: string
}
/** What session_cdp answers. */
export type SessionCdpOutput = {
  /** the session (nsess_…) */
  sessionId: string
  /** ws:// or wss:// URL of the session’s CDP endpoint: connect with the same Bearer credential as an Authorization header (Playwright connectOverCDP, Puppeteer connect) */
  url: string
  /** the Chrome DevTools Protocol, filtered: no proxy, download, file or browser-closing commands */
  protocol: "cdp"
  /** http:// or https:// URL of the same endpoint with a short-lived token in its path, for clients that cannot set headers (Puppeteer browserURL, connectOverCDP with an http URL, chrome-remote-interface, agent-browser): it serves /json/version, /json/list and /json/protocol as Chrome does; good for this session’s CDP endpoint only, until httpUrlExpiresAt or the session ends; treat it as a secret */
  httpUrl: string
  /** when httpUrl stops admitting new connections (ISO 8601); connections already open stay */
  httpUrlExpiresAt: string
}

/** What request_human takes. */
export type RequestHumanInput = {
  sessionId: string
  /** what the person should do; shown on the live view (no control, invisible or text-direction characters) */
  reason: string
}
/** What request_human answers. */
export type RequestHumanOutput = {
  /** the session (nsess_…) */
  sessionId: string
  /** the console’s live view of the session: send it to a person of the org; they watch, take control and hand back there */
  url: string
  status: "pending" | "live" | "ended" | "failed"
  /** present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates */
  proxy?: {
    /** scheme://host:port */
    url: string
    /** credentials are sealed for it (never shown) */
    authenticated: boolean
  }
  /** who drives now; poll session_get until control is agent again (driving tools answer 409 human_in_control meanwhile) */
  control: "agent" | "human"
  /** only over MCP with URL elicitation: the live view was sent to the user and the call waited — completed: the person handed control back; declined/cancelled: the user refused; expired: nobody handed back in time */
  elicitation?: "completed" | "declined" | "cancelled" | "expired"
}

/** What navigate takes. */
export type NavigateInput = {
  sessionId: string
  url: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What navigate answers. */
export type NavigateOutput = {
  url: string
  title: string
  status: number | null
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What perceive takes. */
export type PerceiveInput = {
  sessionId: string
  /** advisory; not forwarded */
  full?: boolean
  /** the most characters of snapshot and text in the answer (default 12000) */
  maxChars?: number
  /** the cursor of a truncated answer: reads on from there */
  cursor?: string
  /** only the subtree under this element */
  ref?: string
  /** only the elements whose name or text (not a url) holds these words (any order, case-insensitive; "what is X" asks for X; what defines them ranks first, then the exact phrase), each with the control around it to act on and its sentence; with the headings and landmarks above them when ten or fewer match */
  query?: string
}
/** What perceive answers. */
export type PerceiveOutput = {
  url: string
  title: string
  snapshot: string
  text: string
  /** the page holds more than this answer: call perceive with cursor to read on */
  truncated?: boolean
  /** where the next perceive continues reading (given with truncated) */
  cursor?: string
}

/** What act takes. */
export type ActInput = {
  sessionId: string
  verb: "click" | "type" | "press" | "goto" | "scroll"
  selector?: string
  /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
  ref?: string
  text?: string
  key?: string
  url?: string
  direction?: "up" | "down" | "left" | "right"
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What act answers. */
export type ActOutput = {
  ok: true
  verb: "click" | "type" | "press" | "goto" | "scroll"
  url: string
  title?: string
  status?: number | null
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
} | {
  ok: true
  credentialName: string
  fieldKind: string
  host: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What credential_fill takes. */
export type CredentialFillInput = {
  sessionId: string
  credentialName: string
  selector?: string
  /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
  ref?: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What credential_fill answers. */
export type CredentialFillOutput = {
  ok: true
  credentialName: string
  fieldKind: string
  host: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What screenshot takes. */
export type ScreenshotInput = {
  sessionId: string
  /** only this element (from perceive’s snapshot) */
  ref?: string
  /** only the element this selector names */
  selector?: string
}
/** What screenshot answers. */
export type ScreenshotOutput = {
  /** base64 PNG */
  png: string
}

/** What go_back takes. */
export type GoBackInput = {
  sessionId: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What go_back answers. */
export type GoBackOutput = {
  url: string
  title: string
  status: number | null
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What reload takes. */
export type ReloadInput = {
  sessionId: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What reload answers. */
export type ReloadOutput = {
  url: string
  title: string
  status: number | null
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What wait_for takes. */
export type WaitForInput = {
  sessionId: string
  selector?: string
  /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
  ref?: string
  text?: string
  timeoutMs?: number
}
/** What wait_for answers. */
export type WaitForOutput = {
  ok: true
  url: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What select_option takes. */
export type SelectOptionInput = {
  sessionId: string
  selector?: string
  /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
  ref?: string
  values: Array<string>
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What select_option answers. */
export type SelectOptionOutput = {
  ok: true
  url: string
  selected: Array<string>
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What hover takes. */
export type HoverInput = {
  sessionId: string
  selector?: string
  /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
  ref?: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What hover answers. */
export type HoverOutput = {
  ok: true
  url: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What pdf takes. */
export type PdfInput = {
  sessionId: string
}
/** What pdf answers. */
export type PdfOutput = {
  /** base64 PDF */
  pdf: string
}

/** What console_messages takes. */
export type ConsoleMessagesInput = {
  sessionId: string
}
/** What console_messages answers. */
export type ConsoleMessagesOutput = {
  messages: Array<{
    type: string
    text: string
    time: number
  }>
}

/** What go_forward takes. */
export type GoForwardInput = {
  sessionId: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What go_forward answers. */
export type GoForwardOutput = {
  url: string
  title: string
  status: number | null
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What tab_list takes. */
export type TabListInput = {
  sessionId: string
}
/** What tab_list answers. */
export type TabListOutput = {
  tabs: Array<{
    tabId: string
    url: string
    title: string
    active: boolean
  }>
  activeTabId: string
}

/** What tab_open takes. */
export type TabOpenInput = {
  sessionId: string
  url?: string
}
/** What tab_open answers. */
export type TabOpenOutput = {
  tabs: Array<{
    tabId: string
    url: string
    title: string
    active: boolean
  }>
  activeTabId: string
  /** the new tab */
  tabId: string
  /** HTTP status of the url, null without one */
  status: number | null
}

/** What tab_select takes. */
export type TabSelectInput = {
  sessionId: string
  tabId: string
}
/** What tab_select answers. */
export type TabSelectOutput = {
  tabs: Array<{
    tabId: string
    url: string
    title: string
    active: boolean
  }>
  activeTabId: string
}

/** What tab_close takes. */
export type TabCloseInput = {
  sessionId: string
  tabId?: string
}
/** What tab_close answers. */
export type TabCloseOutput = {
  tabs: Array<{
    tabId: string
    url: string
    title: string
    active: boolean
  }>
  activeTabId: string
  /** the tab asked to close */
  tabId: string
  /** false when the page’s beforeunload dialog was answered “stay” */
  closed: boolean
}

/** What dialog_handle takes. */
export type DialogHandleInput = {
  sessionId: string
  action: "accept" | "dismiss"
  /** the text a prompt returns when accepted (default: the prompt’s own default value, as OK in a browser) */
  promptText?: string
}
/** What dialog_handle answers. */
export type DialogHandleOutput = {
  /** the answer waiting for the next dialog */
  armed: {
    action: "accept" | "dismiss"
  }
  /** the latest dialogs of the session, oldest first */
  dialogs: Array<{
    tabId: string
    type: "alert" | "confirm" | "prompt" | "beforeunload"
    message: string
    defaultValue?: string
    answer: "accepted" | "dismissed"
    /** armed: by dialog_handle; default: no answer was armed */
    answeredBy: "armed" | "default"
    time: number
  }>
}

/** What resize takes. */
export type ResizeInput = {
  sessionId: string
  width: number
  height: number
}
/** What resize answers. */
export type ResizeOutput = {
  ok: true
  url: string
  viewport: {
    width: number
    height: number
  }
}

/** What drag takes. */
export type DragInput = {
  sessionId: string
  /** the element to drag (or fromRef) */
  from?: string
  /** the element to drag, by its ref from perceive (or from) */
  fromRef?: string
  /** the element to drop it on (or toRef) */
  to?: string
  /** the element to drop it on, by its ref from perceive (or to) */
  toRef?: string
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What drag answers. */
export type DragOutput = {
  ok: true
  url: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What mouse_click takes. */
export type MouseClickInput = {
  sessionId: string
  /** viewport x in CSS pixels, from the left edge */
  x: number
  /** viewport y in CSS pixels, from the top edge */
  y: number
  /** default left */
  button?: "left" | "right" | "middle"
  /** 2 for a double click; default 1 */
  clickCount?: number
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What mouse_click answers. */
export type MouseClickOutput = {
  ok: true
  url: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What mouse_move takes. */
export type MouseMoveInput = {
  sessionId: string
  /** viewport x in CSS pixels, from the left edge */
  x: number
  /** viewport y in CSS pixels, from the top edge */
  y: number
  /** intermediate moves; default 1 */
  steps?: number
}
/** What mouse_move answers. */
export type MouseMoveOutput = {
  ok: true
  url: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What mouse_wheel takes. */
export type MouseWheelInput = {
  sessionId: string
  /** viewport x in CSS pixels, from the left edge */
  x?: number
  /** viewport y in CSS pixels, from the top edge */
  y?: number
  /** positive scrolls right; default 0 */
  deltaX?: number
  /** positive scrolls down; default 0 */
  deltaY?: number
}
/** What mouse_wheel answers. */
export type MouseWheelOutput = {
  ok: true
  url: string
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What fill_form takes. */
export type FillFormInput = {
  sessionId: string
  fields: Array<{
    selector?: string
    /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
    ref?: string
    /** text inputs and textareas: a string; checkboxes: true or false; radios: true; selects: an option value or label, or several for a multiple select */
    value: string | boolean | Array<string>
  }>
  /** false: leave out `changes`, what the action changed on the page (`+` added and `~` changed elements with their refs, `removed: … (was e9)` for ones gone; a new page: the whole of it when small, else what it is), which the answer carries by default */
  changes?: boolean
}
/** What fill_form answers. */
export type FillFormOutput = {
  ok: true
  url: string
  fields: Array<{
    selector?: string
    ref?: string
    kind: "text" | "checkbox" | "radio" | "select"
  }>
  /** what the action changed on the page: `+` added and `~` changed elements with their refs, `removed: role "name" (was e9)` for ones gone, whose refs no longer act (a new page: the whole of it when small, else its counts, landmarks and top headings) */
  changes?: string
}

/** What file_put takes. */
export type FilePutInput = {
  sessionId: string
  name: string
  contentBase64: string
  /** default: from the name’s extension, else application/octet-stream */
  mimeType?: string
}
/** What file_put answers. */
export type FilePutOutput = {
  id: string
  name: string
  /** bytes; for a refused download the size it had or announced; null while unknown */
  size: number | null
  mimeType: string
  /** upload: put over the API; download: a page downloaded it */
  source: "upload" | "download"
  state: "in_progress" | "complete" | "refused" | "failed"
  /** why a download was refused (too_large, too_many_files) or failed */
  reason?: string
  /** epoch milliseconds: when it was put, or when the download began */
  time: number
}

/** What file_upload takes. */
export type FileUploadInput = {
  sessionId: string
  selector?: string
  /** the element’s ref from perceive’s snapshot ([ref=e12] → "e12"); give ref or selector, not both */
  ref?: string
  files: Array<string>
}
/** What file_upload answers. */
export type FileUploadOutput = {
  ok: true
  url: string
  files: Array<{
    id: string
    name: string
    /** bytes; for a refused download the size it had or announced; null while unknown */
    size: number | null
    mimeType: string
    /** upload: put over the API; download: a page downloaded it */
    source: "upload" | "download"
    state: "in_progress" | "complete" | "refused" | "failed"
    /** why a download was refused (too_large, too_many_files) or failed */
    reason?: string
    /** epoch milliseconds: when it was put, or when the download began */
    time: number
  }>
}

/** What file_list takes. */
export type FileListInput = {
  sessionId: string
}
/** What file_list answers. */
export type FileListOutput = {
  files: Array<{
    id: string
    name: string
    /** bytes; for a refused download the size it had or announced; null while unknown */
    size: number | null
    mimeType: string
    /** upload: put over the API; download: a page downloaded it */
    source: "upload" | "download"
    state: "in_progress" | "complete" | "refused" | "failed"
    /** why a download was refused (too_large, too_many_files) or failed */
    reason?: string
    /** epoch milliseconds: when it was put, or when the download began */
    time: number
  }>
}

/** What file_read takes. */
export type FileReadInput = {
  sessionId: string
  /** a file id (nfile_…) or a file’s name (the most recent file of that name) */
  fileId: string
  /** first byte to read (default 0) */
  offset?: number
  /** bytes to read (default and most 5242880) */
  length?: number
}
/** What file_read answers. */
export type FileReadOutput = {
  file: {
    id: string
    name: string
    /** bytes; for a refused download the size it had or announced; null while unknown */
    size: number | null
    mimeType: string
    /** upload: put over the API; download: a page downloaded it */
    source: "upload" | "download"
    state: "in_progress" | "complete" | "refused" | "failed"
    /** why a download was refused (too_large, too_many_files) or failed */
    reason?: string
    /** epoch milliseconds: when it was put, or when the download began */
    time: number
  }
  offset: number
  /** bytes returned */
  bytes: number
  /** true when the part returned ends the file */
  eof: boolean
  /** base64 of the bytes read */
  contentBase64: string
}

/** What network_requests takes. */
export type NetworkRequestsInput = {
  sessionId: string
  /** only requests whose (query-less) url contains this */
  urlContains?: string
  /** only this method (GET, POST …) */
  method?: string
  /** only this resource type (document, fetch, xhr, image …) */
  resourceType?: string
  /** the newest this many that match; default 500 */
  limit?: number
}
/** What network_requests answers. */
export type NetworkRequestsOutput = {
  /** oldest first */
  requests: Array<{
    method: string
    /** scheme, host and path: never the query, the fragment or userinfo (data: URLs read "data:") */
    url: string
    /** the response status; null when the request failed or has no response yet */
    status: number | null
    /** document, stylesheet, image, media, font, script, xhr, fetch, websocket, other … */
    resourceType: string
    /** epoch milliseconds */
    startedAt: number
    /** until the response finished or the request failed; null while in flight (a response body the page never reads stays in flight) */
    durationMs: number | null
    /** the network error (net::ERR_…) of a failed request */
    failure: string | null
  }>
  total: number
  dropped: number
}

/** What evaluate takes. */
export type EvaluateInput = {
  sessionId: string
  /** an expression (document.title) or a function body (const a = 1; return a + 1) */
  expression: string
  /** default 10000; a script still running then is terminated */
  timeoutMs?: number
}
/** What evaluate answers. */
export type EvaluateOutput = {
  /** the JSON value the code returned (null for undefined) */
  value: unknown
  /** what it was before JSON */
  type: "undefined" | "null" | "boolean" | "number" | "string" | "array" | "object"
}

/** What network_list takes. */
export type NetworkListInput = Record<string, never>
/** What network_list answers. */
export type NetworkListOutput = Array<{
  /** nnet_… */
  id: string
  name: string
  /** daemons known to the network, connected or not */
  daemonCount: number
  /** daemons reachable now */
  onlineDaemonCount: number
  /** canonical host[:port] entries */
  declaredHosts: Array<string>
}>

/** What network_create takes. */
export type NetworkCreateInput = {
  name: string
}
/** What network_create answers. */
export type NetworkCreateOutput = {
  network: {
    /** nnet_… */
    id: string
    name: string
    /** daemons known to the network, connected or not */
    daemonCount: number
    /** daemons reachable now */
    onlineDaemonCount: number
  }
  token: {
    tokenId: string
    /** the join token (njt_…) a daemon joins with; shown only in this response, store it now */
    secret: string
  }
}

/** What network_update takes. */
export type NetworkUpdateInput = {
  networkId: string
  declaredHosts: Array<string>
}
/** What network_update answers. */
export type NetworkUpdateOutput = {
  /** nnet_… */
  id: string
  name: string
  /** daemons known to the network, connected or not */
  daemonCount: number
  /** daemons reachable now */
  onlineDaemonCount: number
  /** canonical host[:port] entries */
  declaredHosts: Array<string>
}

/** What network_rotate_token takes. */
export type NetworkRotateTokenInput = {
  networkId: string
}
/** What network_rotate_token answers. */
export type NetworkRotateTokenOutput = {
  network: {
    /** nnet_… */
    id: string
    name: string
    /** daemons known to the network, connected or not */
    daemonCount: number
    /** daemons reachable now */
    onlineDaemonCount: number
    /** canonical host[:port] entries */
    declaredHosts: Array<string>
  }
  token: {
    tokenId: string
    /** the join token (njt_…) a daemon joins with; shown only in this response, store it now */
    secret: string
  }
}

/** What network_delete takes. */
export type NetworkDeleteInput = {
  networkId: string
}
/** What network_delete answers (204: no content). */
export type NetworkDeleteOutput = void

/** What network_daemons takes. */
export type NetworkDaemonsInput = {
  networkId: string
}
/** What network_daemons answers. */
export type NetworkDaemonsOutput = Array<{
  id: string
  host: string
  version: string
  connectedSince: string
  /** true while connected */
  reachable: boolean
}>

/** What local_reach_ensure takes. */
export type LocalReachEnsureInput = {
  /** host[:port] or http(s) URL on the developer machine, e.g. localhost:3000 */
  target: string
  /** network name (default "local"; with a reach grant, the network granted) */
  network?: string
}
/** What local_reach_ensure answers. */
export type LocalReachEnsureOutput = {
  network: {
    /** nnet_… */
    id: string
    name: string
    /** daemons known to the network, connected or not */
    daemonCount: number
    /** daemons reachable now */
    onlineDaemonCount: number
    /** canonical host[:port] entries */
    declaredHosts: Array<string>
  }
  /** the target as the declared host entry (host[:port]) */
  declared: string
  /** true when the network was created by this call */
  created: boolean
  /** only when the network was created by this call: its join token, shown once */
  token?: {
    tokenId: string
    /** the join token (njt_…) a daemon joins with; shown only in this response, store it now */
    secret: string
  }
}

/** What network_reach_grant_create takes. */
export type NetworkReachGrantCreateInput = {
  /** the agent (nagt_…; an OAuth login’s agent is in its GET /v1/me) */
  agentId: string
  /** the network it may reach; omit to let the agent create its own */
  networkId?: string
}
/** What network_reach_grant_create answers. */
export type NetworkReachGrantCreateOutput = {
  /** nrch_… */
  id: string
  /** the agent that may call local_reach_ensure with it */
  agentId: string
  /** network: reach on one existing network; seed: the agent may create one network of its own (its first local_reach_ensure names it) and reach it */
  kind: "network" | "seed"
  /** the backing network; null for a seed grant whose network is not created yet (or was deleted: the next local_reach_ensure creates it again) */
  networkId: string | null
  /** live: local_reach_ensure may use it; revoked; ended: its network was deleted (network grants) */
  state: "live" | "revoked" | "ended"
  /** who granted it: the console user, or the agent behind the key */
  createdBy: string
  createdAt: string
  revokedAt: string | null
}

/** What network_reach_grant_list takes. */
export type NetworkReachGrantListInput = {
  /** only this agent’s grants */
  agentId?: string
}
/** What network_reach_grant_list answers. */
export type NetworkReachGrantListOutput = Array<{
  /** nrch_… */
  id: string
  /** the agent that may call local_reach_ensure with it */
  agentId: string
  /** network: reach on one existing network; seed: the agent may create one network of its own (its first local_reach_ensure names it) and reach it */
  kind: "network" | "seed"
  /** the backing network; null for a seed grant whose network is not created yet (or was deleted: the next local_reach_ensure creates it again) */
  networkId: string | null
  /** live: local_reach_ensure may use it; revoked; ended: its network was deleted (network grants) */
  state: "live" | "revoked" | "ended"
  /** who granted it: the console user, or the agent behind the key */
  createdBy: string
  createdAt: string
  revokedAt: string | null
}>

/** What network_reach_grant_revoke takes. */
export type NetworkReachGrantRevokeInput = {
  grantId: string
}
/** What network_reach_grant_revoke answers (204: no content). */
export type NetworkReachGrantRevokeOutput = void

/** What session_recording_get takes. */
export type SessionRecordingGetInput = {
  sessionId: string
}
/** What session_recording_get answers. */
export type SessionRecordingGetOutput = {
  /** the session (nsess_…) */
  sessionId: string
  /** rrweb events (https://github.com/rrweb-io/rrweb), replayable with its Replayer */
  format: "rrweb"
  startedAt: string
  /** null while the session still records */
  endedAt: string | null
  /** JSON bytes stored */
  bytes: number
  events: number
  /** events the browser pod dropped because nobody read them in time */
  dropped: number
  /** where to download the timeline (GET, same credential) */
  eventsUrl: string
  /** the console page that replays it */
  consoleUrl: string
}

/** What session_recording_events takes. */
export type SessionRecordingEventsInput = {
  sessionId: string
}
/** What session_recording_events answers. */
export type SessionRecordingEventsOutput = {
  sessionId: string
  format: "rrweb"
  /** rrweb events in recorded order; every input value is masked */
  events: Array<Record<string, unknown>>
}

/** What webhook_create takes. */
export type WebhookCreateInput = {
  /** https URL the events are POSTed to; it must reach a public address (the deny floor applies, after DNS too, and redirects are not followed) */
  url: string
  /** the events to deliver */
  events: Array<"session.live" | "session.ended" | "session.failed" | "human.requested" | "credential_request.created" | "credential_request.answered" | "webhook.disabled">
  /** what it is for, shown in the console (no control, invisible or text-direction characters) */
  description?: string
}
/** What webhook_create answers. */
export type WebhookCreateOutput = {
  webhook: {
    /** nwhk_… */
    id: string
    url: string
    events: Array<"session.live" | "session.ended" | "session.failed" | "human.requested" | "credential_request.created" | "credential_request.answered" | "webhook.disabled">
    description: string
    createdAt: string
    /** the console user or the agent behind the key */
    createdBy: string
    /** null while deliveries go out; set when it was disabled after failing: nothing is attempted or queued for it until webhook_enable */
    disabled: {
      since: string
      reason: "consecutive_failures"
      /** failed attempts in a row when it was disabled */
      failures: number
      /** the first failed attempt of that run */
      failingSince: string
    } | null
    /** until when the secret the last rotation replaced still signs beside the current one (two v1 signatures); null when only the current one signs */
    previousSecretExpiresAt: string | null
  }
  /** the signing secret (whsec_…, Standard Webhooks): shown only in this response, store it now */
  secret: string
}

/** What webhook_list takes. */
export type WebhookListInput = Record<string, never>
/** What webhook_list answers. */
export type WebhookListOutput = Array<{
  /** nwhk_… */
  id: string
  url: string
  events: Array<"session.live" | "session.ended" | "session.failed" | "human.requested" | "credential_request.created" | "credential_request.answered" | "webhook.disabled">
  description: string
  createdAt: string
  /** the console user or the agent behind the key */
  createdBy: string
  /** null while deliveries go out; set when it was disabled after failing: nothing is attempted or queued for it until webhook_enable */
  disabled: {
    since: string
    reason: "consecutive_failures"
    /** failed attempts in a row when it was disabled */
    failures: number
    /** the first failed attempt of that run */
    failingSince: string
  } | null
  /** until when the secret the last rotation replaced still signs beside the current one (two v1 signatures); null when only the current one signs */
  previousSecretExpiresAt: string | null
}>

/** What webhook_delete takes. */
export type WebhookDeleteInput = {
  webhookId: string
}
/** What webhook_delete answers (204: no content). */
export type WebhookDeleteOutput = void

/** What webhook_rotate_secret takes. */
export type WebhookRotateSecretInput = {
  webhookId: string
  /** how long the replaced secret keeps signing beside the new one, so receivers can switch without rejecting a delivery: 0 to 604800 seconds, 86400 unless given; 0 stops it at once (a secret that leaked) */
  overlapSeconds?: number
}
/** What webhook_rotate_secret answers. */
export type WebhookRotateSecretOutput = {
  webhook: {
    /** nwhk_… */
    id: string
    url: string
    events: Array<"session.live" | "session.ended" | "session.failed" | "human.requested" | "credential_request.created" | "credential_request.answered" | "webhook.disabled">
    description: string
    createdAt: string
    /** the console user or the agent behind the key */
    createdBy: string
    /** null while deliveries go out; set when it was disabled after failing: nothing is attempted or queued for it until webhook_enable */
    disabled: {
      since: string
      reason: "consecutive_failures"
      /** failed attempts in a row when it was disabled */
      failures: number
      /** the first failed attempt of that run */
      failingSince: string
    } | null
    /** until when the secret the last rotation replaced still signs beside the current one (two v1 signatures); null when only the current one signs */
    previousSecretExpiresAt: string | null
  }
  /** the signing secret (whsec_…, Standard Webhooks): shown only in this response, store it now */
  secret: string
}

/** What webhook_deliveries takes. */
export type WebhookDeliveriesInput = {
  webhookId: string
  /** the next of the previous page */
  before?: string
  limit?: number
}
/** What webhook_deliveries answers. */
export type WebhookDeliveriesOutput = {
  items: Array<{
    /** the delivery (nwdl_…) */
    id: string
    webhookId: string
    /** the webhook-id header (nevt_…): the same on every attempt, and for every endpoint the event went to */
    eventId: string
    eventType: "session.live" | "session.ended" | "session.failed" | "human.requested" | "credential_request.created" | "credential_request.answered" | "webhook.disabled"
    /** pending: not yet answered with a 2xx, another attempt is due; delivered; failed: the retry schedule ran out */
    state: "pending" | "delivered" | "failed"
    /** every attempt so far, oldest first */
    attempts: Array<{
      at: string
      /** the receiver’s HTTP status; null when no answer came */
      responseStatus: number | null
      /** why the attempt failed when there was no 2xx: timeout, connection_failed, address_refused, redirect_not_followed, http_error, secret_unavailable */
      error: string | null
      durationMs: number
    }>
    /** when the next attempt is due (pending only) */
    nextAttemptAt: string | null
    createdAt: string
    deliveredAt: string | null
  }>
  /** the before of the next (older) page; null when this page is not full */
  next: string | null
}

/** What webhook_enable takes. */
export type WebhookEnableInput = {
  webhookId: string
}
/** What webhook_enable answers. */
export type WebhookEnableOutput = {
  /** nwhk_… */
  id: string
  url: string
  events: Array<"session.live" | "session.ended" | "session.failed" | "human.requested" | "credential_request.created" | "credential_request.answered" | "webhook.disabled">
  description: string
  createdAt: string
  /** the console user or the agent behind the key */
  createdBy: string
  /** null while deliveries go out; set when it was disabled after failing: nothing is attempted or queued for it until webhook_enable */
  disabled: {
    since: string
    reason: "consecutive_failures"
    /** failed attempts in a row when it was disabled */
    failures: number
    /** the first failed attempt of that run */
    failingSince: string
  } | null
  /** until when the secret the last rotation replaced still signs beside the current one (two v1 signatures); null when only the current one signs */
  previousSecretExpiresAt: string | null
}

/** What extension_upload takes. */
export type ExtensionUploadInput = {
  /** the zip, base64 */
  zipBase64: string
}
/** What extension_upload answers. */
export type ExtensionUploadOutput = {
  /** next_… */
  id: string
  /** the manifest’s name */
  name: string
  /** the manifest’s version */
  version: string
  description: string | null
  /** hex SHA-256 of the zip as uploaded: what a trust decision is about (a new upload is a new id, untrusted) */
  sha256: string
  /** the zip’s size */
  bytes: number
  /** the manifest’s permissions (tabs, storage, webRequest …) */
  permissions: Array<string>
  optionalPermissions: Array<string>
  /** the manifest’s host_permissions: where its background may read and send */
  hostPermissions: Array<string>
  contentScripts: Array<{
    /** the pages its scripts run in: they read every field of those pages */
    matches: Array<string>
    js: Array<string>
    css: Array<string>
    allFrames: boolean
  }>
  /** its background service worker’s file, if any */
  serviceWorker: string | null
  /** an org admin trusts it: a sealed fill may run in a session that loads it (and only trusted ones) */
  trusted: boolean
  trustDecidedBy: string | null
  trustDecidedAt: string | null
  trustReason: string | null
  createdBy: string
  createdAt: string
}

/** What extension_list takes. */
export type ExtensionListInput = Record<string, never>
/** What extension_list answers. */
export type ExtensionListOutput = {
  items: Array<{
    /** next_… */
    id: string
    /** the manifest’s name */
    name: string
    /** the manifest’s version */
    version: string
    description: string | null
    /** hex SHA-256 of the zip as uploaded: what a trust decision is about (a new upload is a new id, untrusted) */
    sha256: string
    /** the zip’s size */
    bytes: number
    /** the manifest’s permissions (tabs, storage, webRequest …) */
    permissions: Array<string>
    optionalPermissions: Array<string>
    /** the manifest’s host_permissions: where its background may read and send */
    hostPermissions: Array<string>
    contentScripts: Array<{
      /** the pages its scripts run in: they read every field of those pages */
      matches: Array<string>
      js: Array<string>
      css: Array<string>
      allFrames: boolean
    }>
    /** its background service worker’s file, if any */
    serviceWorker: string | null
    /** an org admin trusts it: a sealed fill may run in a session that loads it (and only trusted ones) */
    trusted: boolean
    trustDecidedBy: string | null
    trustDecidedAt: string | null
    trustReason: string | null
    createdBy: string
    createdAt: string
  }>
}

/** What extension_get takes. */
export type ExtensionGetInput = {
  extensionId: string
}
/** What extension_get answers. */
export type ExtensionGetOutput = {
  /** next_… */
  id: string
  /** the manifest’s name */
  name: string
  /** the manifest’s version */
  version: string
  description: string | null
  /** hex SHA-256 of the zip as uploaded: what a trust decision is about (a new upload is a new id, untrusted) */
  sha256: string
  /** the zip’s size */
  bytes: number
  /** the manifest’s permissions (tabs, storage, webRequest …) */
  permissions: Array<string>
  optionalPermissions: Array<string>
  /** the manifest’s host_permissions: where its background may read and send */
  hostPermissions: Array<string>
  contentScripts: Array<{
    /** the pages its scripts run in: they read every field of those pages */
    matches: Array<string>
    js: Array<string>
    css: Array<string>
    allFrames: boolean
  }>
  /** its background service worker’s file, if any */
  serviceWorker: string | null
  /** an org admin trusts it: a sealed fill may run in a session that loads it (and only trusted ones) */
  trusted: boolean
  trustDecidedBy: string | null
  trustDecidedAt: string | null
  trustReason: string | null
  createdBy: string
  createdAt: string
}

/** What extension_trust takes. */
export type ExtensionTrustInput = {
  extensionId: string
  trusted: boolean
  /** why, for the audit trail and the list */
  reason?: string
}
/** What extension_trust answers. */
export type ExtensionTrustOutput = {
  /** next_… */
  id: string
  /** the manifest’s name */
  name: string
  /** the manifest’s version */
  version: string
  description: string | null
  /** hex SHA-256 of the zip as uploaded: what a trust decision is about (a new upload is a new id, untrusted) */
  sha256: string
  /** the zip’s size */
  bytes: number
  /** the manifest’s permissions (tabs, storage, webRequest …) */
  permissions: Array<string>
  optionalPermissions: Array<string>
  /** the manifest’s host_permissions: where its background may read and send */
  hostPermissions: Array<string>
  contentScripts: Array<{
    /** the pages its scripts run in: they read every field of those pages */
    matches: Array<string>
    js: Array<string>
    css: Array<string>
    allFrames: boolean
  }>
  /** its background service worker’s file, if any */
  serviceWorker: string | null
  /** an org admin trusts it: a sealed fill may run in a session that loads it (and only trusted ones) */
  trusted: boolean
  trustDecidedBy: string | null
  trustDecidedAt: string | null
  trustReason: string | null
  createdBy: string
  createdAt: string
}

/** What extension_delete takes. */
export type ExtensionDeleteInput = {
  extensionId: string
}
/** What extension_delete answers (204: no content). */
export type ExtensionDeleteOutput = void

/** What identity_extensions_put takes. */
export type IdentityExtensionsPutInput = {
  identityId: string
  extensions: Array<string>
}
/** What identity_extensions_put answers. */
export type IdentityExtensionsPutOutput = {
  identityId: string
  extensions: Array<string>
}

/** Every operation's input and output, by name (the MCP tool name). */
export interface Operations {
  me: { input: MeInput; output: MeOutput }
  key_create: { input: KeyCreateInput; output: KeyCreateOutput }
  audit_list: { input: AuditListInput; output: AuditListOutput }
  identity_list_assumable: { input: IdentityListAssumableInput; output: IdentityListAssumableOutput }
  identity_create: { input: IdentityCreateInput; output: IdentityCreateOutput }
  identity_list: { input: IdentityListInput; output: IdentityListOutput }
  identity_delete: { input: IdentityDeleteInput; output: IdentityDeleteOutput }
  identity_proxy_put: { input: IdentityProxyPutInput; output: IdentityProxyPutOutput }
  identity_proxy_delete: { input: IdentityProxyDeleteInput; output: IdentityProxyDeleteOutput }
  credential_create: { input: CredentialCreateInput; output: CredentialCreateOutput }
  credential_list: { input: CredentialListInput; output: CredentialListOutput }
  credential_rotate: { input: CredentialRotateInput; output: CredentialRotateOutput }
  credential_delete: { input: CredentialDeleteInput; output: CredentialDeleteOutput }
  grant_create: { input: GrantCreateInput; output: GrantCreateOutput }
  grant_list: { input: GrantListInput; output: GrantListOutput }
  grant_revoke: { input: GrantRevokeInput; output: GrantRevokeOutput }
  grant_delete: { input: GrantDeleteInput; output: GrantDeleteOutput }
  governance_get: { input: GovernanceGetInput; output: GovernanceGetOutput }
  governance_put: { input: GovernancePutInput; output: GovernancePutOutput }
  credential_request: { input: CredentialRequestInput; output: CredentialRequestOutput }
  authstate_capture: { input: AuthstateCaptureInput; output: AuthstateCaptureOutput }
  authstate_list: { input: AuthstateListInput; output: AuthstateListOutput }
  session_start: { input: SessionStartInput; output: SessionStartOutput }
  spawn_and_start_session: { input: SpawnAndStartSessionInput; output: SpawnAndStartSessionOutput }
  session_get: { input: SessionGetInput; output: SessionGetOutput }
  session_list: { input: SessionListInput; output: SessionListOutput }
  session_end: { input: SessionEndInput; output: SessionEndOutput }
  session_journal: { input: SessionJournalInput; output: SessionJournalOutput }
  session_cdp: { input: SessionCdpInput; output: SessionCdpOutput }
  request_human: { input: RequestHumanInput; output: RequestHumanOutput }
  navigate: { input: NavigateInput; output: NavigateOutput }
  perceive: { input: PerceiveInput; output: PerceiveOutput }
  act: { input: ActInput; output: ActOutput }
  credential_fill: { input: CredentialFillInput; output: CredentialFillOutput }
  screenshot: { input: ScreenshotInput; output: ScreenshotOutput }
  go_back: { input: GoBackInput; output: GoBackOutput }
  reload: { input: ReloadInput; output: ReloadOutput }
  wait_for: { input: WaitForInput; output: WaitForOutput }
  select_option: { input: SelectOptionInput; output: SelectOptionOutput }
  hover: { input: HoverInput; output: HoverOutput }
  pdf: { input: PdfInput; output: PdfOutput }
  console_messages: { input: ConsoleMessagesInput; output: ConsoleMessagesOutput }
  go_forward: { input: GoForwardInput; output: GoForwardOutput }
  tab_list: { input: TabListInput; output: TabListOutput }
  tab_open: { input: TabOpenInput; output: TabOpenOutput }
  tab_select: { input: TabSelectInput; output: TabSelectOutput }
  tab_close: { input: TabCloseInput; output: TabCloseOutput }
  dialog_handle: { input: DialogHandleInput; output: DialogHandleOutput }
  resize: { input: ResizeInput; output: ResizeOutput }
  drag: { input: DragInput; output: DragOutput }
  mouse_click: { input: MouseClickInput; output: MouseClickOutput }
  mouse_move: { input: MouseMoveInput; output: MouseMoveOutput }
  mouse_wheel: { input: MouseWheelInput; output: MouseWheelOutput }
  fill_form: { input: FillFormInput; output: FillFormOutput }
  file_put: { input: FilePutInput; output: FilePutOutput }
  file_upload: { input: FileUploadInput; output: FileUploadOutput }
  file_list: { input: FileListInput; output: FileListOutput }
  file_read: { input: FileReadInput; output: FileReadOutput }
  network_requests: { input: NetworkRequestsInput; output: NetworkRequestsOutput }
  evaluate: { input: EvaluateInput; output: EvaluateOutput }
  network_list: { input: NetworkListInput; output: NetworkListOutput }
  network_create: { input: NetworkCreateInput; output: NetworkCreateOutput }
  network_update: { input: NetworkUpdateInput; output: NetworkUpdateOutput }
  network_rotate_token: { input: NetworkRotateTokenInput; output: NetworkRotateTokenOutput }
  network_delete: { input: NetworkDeleteInput; output: NetworkDeleteOutput }
  network_daemons: { input: NetworkDaemonsInput; output: NetworkDaemonsOutput }
  local_reach_ensure: { input: LocalReachEnsureInput; output: LocalReachEnsureOutput }
  network_reach_grant_create: { input: NetworkReachGrantCreateInput; output: NetworkReachGrantCreateOutput }
  network_reach_grant_list: { input: NetworkReachGrantListInput; output: NetworkReachGrantListOutput }
  network_reach_grant_revoke: { input: NetworkReachGrantRevokeInput; output: NetworkReachGrantRevokeOutput }
  session_recording_get: { input: SessionRecordingGetInput; output: SessionRecordingGetOutput }
  session_recording_events: { input: SessionRecordingEventsInput; output: SessionRecordingEventsOutput }
  webhook_create: { input: WebhookCreateInput; output: WebhookCreateOutput }
  webhook_list: { input: WebhookListInput; output: WebhookListOutput }
  webhook_delete: { input: WebhookDeleteInput; output: WebhookDeleteOutput }
  webhook_rotate_secret: { input: WebhookRotateSecretInput; output: WebhookRotateSecretOutput }
  webhook_deliveries: { input: WebhookDeliveriesInput; output: WebhookDeliveriesOutput }
  webhook_enable: { input: WebhookEnableInput; output: WebhookEnableOutput }
  extension_upload: { input: ExtensionUploadInput; output: ExtensionUploadOutput }
  extension_list: { input: ExtensionListInput; output: ExtensionListOutput }
  extension_get: { input: ExtensionGetInput; output: ExtensionGetOutput }
  extension_trust: { input: ExtensionTrustInput; output: ExtensionTrustOutput }
  extension_delete: { input: ExtensionDeleteInput; output: ExtensionDeleteOutput }
  identity_extensions_put: { input: IdentityExtensionsPutInput; output: IdentityExtensionsPutOutput }
}

type In<N extends keyof Operations> = Operations[N]['input']

/** How the generated methods reach the server (Nightjar.call). */
export type Call = <N extends keyof Operations>(name: N, input: Operations[N]['input']) => Promise<Operations[N]['output']>

/** The REST route of every operation. */
export const routes = {
  me: { method: 'GET', path: '/v1/me' },
  key_create: { method: 'POST', path: '/v1/keys' },
  audit_list: { method: 'GET', path: '/v1/audit' },
  identity_list_assumable: { method: 'GET', path: '/v1/identities/assumable' },
  identity_create: { method: 'POST', path: '/v1/identities' },
  identity_list: { method: 'GET', path: '/v1/identities' },
  identity_delete: { method: 'DELETE', path: '/v1/identities/:identityId' },
  identity_proxy_put: { method: 'PUT', path: '/v1/identities/:identityId/proxy' },
  identity_proxy_delete: { method: 'DELETE', path: '/v1/identities/:identityId/proxy' },
  credential_create: { method: 'POST', path: '/v1/identities/:identityId/credentials' },
  credential_list: { method: 'GET', path: '/v1/identities/:identityId/credentials' },
  credential_rotate: { method: 'POST', path: '/v1/identities/:identityId/credentials/:credentialId/rotate' },
  credential_delete: { method: 'DELETE', path: '/v1/identities/:identityId/credentials/:credentialId' },
  grant_create: { method: 'POST', path: '/v1/identities/:identityId/grants' },
  grant_list: { method: 'GET', path: '/v1/identities/:identityId/grants' },
  grant_revoke: { method: 'POST', path: '/v1/identities/:identityId/grants/:grantId/revoke' },
  grant_delete: { method: 'DELETE', path: '/v1/identities/:identityId/grants/:grantId' },
  governance_get: { method: 'GET', path: '/v1/governance' },
  governance_put: { method: 'PUT', path: '/v1/governance' },
  credential_request: { method: 'POST', path: '/v1/credential-requests' },
  authstate_capture: { method: 'POST', path: '/v1/sessions/:sessionId/authstate' },
  authstate_list: { method: 'GET', path: '/v1/identities/:identityId/authstates' },
  session_start: { method: 'POST', path: '/v1/sessions' },
  spawn_and_start_session: { method: 'POST', path: '/v1/sessions/spawn' },
  session_get: { method: 'GET', path: '/v1/sessions/:sessionId' },
  session_list: { method: 'GET', path: '/v1/sessions' },
  session_end: { method: 'DELETE', path: '/v1/sessions/:sessionId' },
  session_journal: { method: 'GET', path: '/v1/sessions/:sessionId/journal' },
  session_cdp: { method: 'GET', path: '/v1/sessions/:sessionId/cdp' },
  request_human: { method: 'POST', path: '/v1/sessions/:sessionId/request-human' },
  navigate: { method: 'POST', path: '/v1/sessions/:sessionId/navigate' },
  perceive: { method: 'POST', path: '/v1/sessions/:sessionId/perceive' },
  act: { method: 'POST', path: '/v1/sessions/:sessionId/act' },
  credential_fill: { method: 'POST', path: '/v1/sessions/:sessionId/fill-credential' },
  screenshot: { method: 'POST', path: '/v1/sessions/:sessionId/screenshot' },
  go_back: { method: 'POST', path: '/v1/sessions/:sessionId/go-back' },
  reload: { method: 'POST', path: '/v1/sessions/:sessionId/reload' },
  wait_for: { method: 'POST', path: '/v1/sessions/:sessionId/wait-for' },
  select_option: { method: 'POST', path: '/v1/sessions/:sessionId/select-option' },
  hover: { method: 'POST', path: '/v1/sessions/:sessionId/hover' },
  pdf: { method: 'POST', path: '/v1/sessions/:sessionId/pdf' },
  console_messages: { method: 'GET', path: '/v1/sessions/:sessionId/console' },
  go_forward: { method: 'POST', path: '/v1/sessions/:sessionId/go-forward' },
  tab_list: { method: 'GET', path: '/v1/sessions/:sessionId/tabs' },
  tab_open: { method: 'POST', path: '/v1/sessions/:sessionId/tabs/open' },
  tab_select: { method: 'POST', path: '/v1/sessions/:sessionId/tabs/select' },
  tab_close: { method: 'POST', path: '/v1/sessions/:sessionId/tabs/close' },
  dialog_handle: { method: 'POST', path: '/v1/sessions/:sessionId/dialog' },
  resize: { method: 'POST', path: '/v1/sessions/:sessionId/resize' },
  drag: { method: 'POST', path: '/v1/sessions/:sessionId/drag' },
  mouse_click: { method: 'POST', path: '/v1/sessions/:sessionId/mouse-click' },
  mouse_move: { method: 'POST', path: '/v1/sessions/:sessionId/mouse-move' },
  mouse_wheel: { method: 'POST', path: '/v1/sessions/:sessionId/mouse-wheel' },
  fill_form: { method: 'POST', path: '/v1/sessions/:sessionId/fill-form' },
  file_put: { method: 'POST', path: '/v1/sessions/:sessionId/files' },
  file_upload: { method: 'POST', path: '/v1/sessions/:sessionId/file-upload' },
  file_list: { method: 'GET', path: '/v1/sessions/:sessionId/files' },
  file_read: { method: 'GET', path: '/v1/sessions/:sessionId/files/:fileId' },
  network_requests: { method: 'GET', path: '/v1/sessions/:sessionId/network' },
  evaluate: { method: 'POST', path: '/v1/sessions/:sessionId/evaluate' },
  network_list: { method: 'GET', path: '/v1/networks' },
  network_create: { method: 'POST', path: '/v1/networks' },
  network_update: { method: 'PATCH', path: '/v1/networks/:networkId' },
  network_rotate_token: { method: 'POST', path: '/v1/networks/:networkId/rotate-token' },
  network_delete: { method: 'DELETE', path: '/v1/networks/:networkId' },
  network_daemons: { method: 'GET', path: '/v1/networks/:networkId/daemons' },
  local_reach_ensure: { method: 'POST', path: '/v1/local-reach/ensure' },
  network_reach_grant_create: { method: 'POST', path: '/v1/local-reach/grants' },
  network_reach_grant_list: { method: 'GET', path: '/v1/local-reach/grants' },
  network_reach_grant_revoke: { method: 'POST', path: '/v1/local-reach/grants/:grantId/revoke' },
  session_recording_get: { method: 'GET', path: '/v1/sessions/:sessionId/recording' },
  session_recording_events: { method: 'GET', path: '/v1/sessions/:sessionId/recording/events' },
  webhook_create: { method: 'POST', path: '/v1/webhooks' },
  webhook_list: { method: 'GET', path: '/v1/webhooks' },
  webhook_delete: { method: 'DELETE', path: '/v1/webhooks/:webhookId' },
  webhook_rotate_secret: { method: 'POST', path: '/v1/webhooks/:webhookId/rotate-secret' },
  webhook_deliveries: { method: 'GET', path: '/v1/webhooks/:webhookId/deliveries' },
  webhook_enable: { method: 'POST', path: '/v1/webhooks/:webhookId/enable' },
  extension_upload: { method: 'POST', path: '/v1/extensions' },
  extension_list: { method: 'GET', path: '/v1/extensions' },
  extension_get: { method: 'GET', path: '/v1/extensions/:extensionId' },
  extension_trust: { method: 'PUT', path: '/v1/extensions/:extensionId/trust' },
  extension_delete: { method: 'DELETE', path: '/v1/extensions/:extensionId' },
  identity_extensions_put: { method: 'PUT', path: '/v1/identities/:identityId/extensions' },
} as const

/** One method per operation, grouped by domain. */
export function methods(call: Call) {
  return {
    me: {
      /** Who the calling credential is: its org, agent and scopes */
      get: () => call('me', {}),
    },
    keys: {
      /** Mint an API key; a key never gets a scope its minter lacks */
      create: (input: In<'key_create'>) => call('key_create', input),
    },
    audit: {
      /** The org audit trail, oldest first, paged by id */
      list: (input: In<'audit_list'> = {}) => call('audit_list', input),
    },
    identities: {
      /** List identities the calling agent holds a live assume or manage grant on, with credential slots (no values) and lease state */
      assumable: () => call('identity_list_assumable', {}),
      /** Create an identity (persona) in the org; names are unique per org */
      create: (input: In<'identity_create'>) => call('identity_create', input),
      /** List the org identities with their lease state (never the holder) */
      list: () => call('identity_list', {}),
      /** Delete an identity with its credentials and grants; refused (409) while a session holds its lease */
      delete: (identityId: In<'identity_delete'>['identityId']) => call('identity_delete', { identityId }),
      /** Set an identity's default upstream proxy, used by a session bound to it that names no proxy of its own; its host must be on the org allowlist (governance proxyHosts) and its credentials are sealed, never returned */
      proxyPut: (identityId: In<'identity_proxy_put'>['identityId'], input: Omit<In<'identity_proxy_put'>, 'identityId'>) => call('identity_proxy_put', { ...input, identityId }),
      /** Remove an identity's default upstream proxy and its sealed credentials (sessions already open keep theirs) */
      proxyDelete: (identityId: In<'identity_proxy_delete'>['identityId']) => call('identity_proxy_delete', { identityId }),
      /** Set the extensions a session bound to this identity loads when its start names none — the way an MCP session_start (whose inputs are fixed) loads extensions. An empty list clears it */
      extensionsPut: (identityId: In<'identity_extensions_put'>['identityId'], input: Omit<In<'identity_extensions_put'>, 'identityId'>) => call('identity_extensions_put', { ...input, identityId }),
    },
    credentials: {
      /** Add a sealed credential to an identity; the value is write-only and only a mask is returned */
      create: (identityId: In<'credential_create'>['identityId'], input: Omit<In<'credential_create'>, 'identityId'>) => call('credential_create', { ...input, identityId }),
      /** List an identity's credentials: names, placeholders, origins and masks only */
      list: (identityId: In<'credential_list'>['identityId']) => call('credential_list', { identityId }),
      /** Replace a credential value (re-sealed); its name, kind and origin allowlist are unchanged */
      rotate: (identityId: In<'credential_rotate'>['identityId'], credentialId: In<'credential_rotate'>['credentialId'], input: Omit<In<'credential_rotate'>, 'identityId' | 'credentialId'>) => call('credential_rotate', { ...input, identityId, credentialId }),
      /** Delete a credential from an identity */
      delete: (identityId: In<'credential_delete'>['identityId'], credentialId: In<'credential_delete'>['credentialId']) => call('credential_delete', { identityId, credentialId }),
      /** Ask a person to enter a credential this identity lacks (a password, or an otpauth:// URI for one-time codes), for credential_fill to use. The secret is entered on a console page and never reaches you. A client with URL elicitation is sent the page and the call returns when the credential is saved (or refused, or expired); otherwise the result carries the URL to hand to a person, and credential_list shows the credential once it exists */
      request: (input: In<'credential_request'>) => call('credential_request', input),
    },
    grants: {
      /** Grant an agent the right to assume or manage an identity until expiresAt */
      create: (identityId: In<'grant_create'>['identityId'], input: Omit<In<'grant_create'>, 'identityId'>) => call('grant_create', { ...input, identityId }),
      /** List who may assume or manage an identity, with each grant state (live, expired, revoked) */
      list: (identityId: In<'grant_list'>['identityId']) => call('grant_list', { identityId }),
      /** Soft-revoke a grant (idempotent): future binds fail; a lease already held is kept until its session ends */
      revoke: (identityId: In<'grant_revoke'>['identityId'], grantId: In<'grant_revoke'>['grantId']) => call('grant_revoke', { identityId, grantId }),
      /** Hard-delete a grant: removes the row and its audit trail */
      delete: (identityId: In<'grant_delete'>['identityId'], grantId: In<'grant_delete'>['grantId']) => call('grant_delete', { identityId, grantId }),
    },
    governance: {
      /** Read the org governance flags */
      get: () => call('governance_get', {}),
      /** Update the org governance flags; fields left out keep their value */
      put: (input: In<'governance_put'> = {}) => call('governance_put', input),
    },
    authstates: {
      /** Capture a live session's cookies and storage as a new sealed auth-state version of its bound identity (admin action; never automatic) */
      capture: (sessionId: In<'authstate_capture'>['sessionId']) => call('authstate_capture', { sessionId }),
      /** List an identity's captured auth-state versions, newest first: id, createdAt, createdBy and the hosts covered */
      list: (identityId: In<'authstate_list'>['identityId']) => call('authstate_list', { identityId }),
    },
    sessions: {
      /** Open a browser session, optionally binding a persona; url is recorded but not navigated. Answers live, or pending when the browser is not live within waitSeconds (default 30 s): the start goes on, and session_get with waitSeconds waits for it */
      create: (input: In<'session_start'> = {}) => call('session_start', input),
      /** Open a session as a named child of the calling agent (a distinct child principal with a provenance edge) */
      spawn: (input: In<'spawn_and_start_session'>) => call('spawn_and_start_session', input),
      /** One session of the caller’s org; with waitSeconds, waits up to that long for a pending session to go live (or fail) */
      get: (sessionId: In<'session_get'>['sessionId'], input: Omit<In<'session_get'>, 'sessionId'> = {}) => call('session_get', { ...input, sessionId }),
      /** Sessions of the caller’s org, newest first */
      list: (input: In<'session_list'> = {}) => call('session_list', input),
      /** End a session and release its persona lease; idempotent */
      end: (sessionId: In<'session_end'>['sessionId']) => call('session_end', { sessionId }),
      /** The value-free journal of a session’s operations */
      journal: (sessionId: In<'session_journal'>['sessionId'], input: Omit<In<'session_journal'>, 'sessionId'> = {}) => call('session_journal', { ...input, sessionId }),
      /** Where to connect a CDP client (Playwright connectOverCDP, Puppeteer) to a live session, with this same Bearer credential; not on a session with a bound identity */
      cdp: (sessionId: In<'session_cdp'>['sessionId']) => call('session_cdp', { sessionId }),
      /** Ask a person for help (a CAPTCHA, a second factor, a judgement call): returns the console URL where someone of the org watches the session live and can take control. While they hold it, driving tools answer 409 human_in_control; session_get shows control: agent again once they hand back. A client with URL elicitation is sent the live view and the call returns once control is handed back */
      requestHuman: (sessionId: In<'request_human'>['sessionId'], input: Omit<In<'request_human'>, 'sessionId'>) => call('request_human', { ...input, sessionId }),
      /** Navigate the session’s page; returns the resolved url after redirects, and in `changes` the new page: the whole of it with its refs when it is small (a form, a menu), else what it is in a few hundred characters (counts of its links, buttons, fields and headings; its landmarks and top headings with refs). perceive then reads the page without loading it again; perceive with query finds elements by their words */
      navigate: (sessionId: In<'navigate'>['sessionId'], url: In<'navigate'>['url'], input: Omit<In<'navigate'>, 'sessionId' | 'url'> = {}) => call('navigate', { ...input, sessionId, url }),
      /** Read the page: url, title, accessibility snapshot, and as text only the visible lines carrying words the snapshot does not already say (usually none: the snapshot holds the page’s words; password values never appear). Every element carries [ref=e12] (inside an iframe [ref=f1e3]): pass the ref to act, hover, select_option, drag, fill_form, file_upload, wait_for or credential_fill instead of a selector; a ref holds until its document navigates. Text the page wrote (names, values, text runs) is always in double quotes with YAML escapes (\" \\ \n \xNN), one element a line, and a [ref= inside it is written \x5bref=: only a [ref=…] outside quotes is a ref. At most maxChars characters (default 12000): the outline of landmarks and headings and what the viewport shows come first; when truncated is true, call again with the cursor given to read on until the whole page has been read, every element once. ref returns the subtree under one element; query returns only the elements whose name or text holds the words, each inside the link, button or other control that holds it (the ref to act on), text with its whole sentence or small paragraph, with the headings and landmarks above them; the heading, term or signature that defines the words comes first with the paragraphs under it (a question such as "what is X" asks for X) — or, when more than ten elements match, the matches alone, each once: the definition, then those holding the words as one phrase, controls first within */
      perceive: (sessionId: In<'perceive'>['sessionId'], input: Omit<In<'perceive'>, 'sessionId'> = {}) => call('perceive', { ...input, sessionId }),
      /** One page action: click, type, press, goto or scroll. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one (type and press without either go to the focused element). The answer's changes say what the action changed, with refs */
      act: (sessionId: In<'act'>['sessionId'], input: Omit<In<'act'>, 'sessionId'>) => call('act', { ...input, sessionId }),
      /** Securely type a persona credential into a field; the secret is never returned or shown. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one; a field inside an iframe is judged by the iframe’s own origin */
      fillCredential: (sessionId: In<'credential_fill'>['sessionId'], credentialName: In<'credential_fill'>['credentialName'], selector: In<'credential_fill'>['selector'], input: Omit<In<'credential_fill'>, 'sessionId' | 'credentialName' | 'selector'> = {}) => call('credential_fill', { ...input, sessionId, credentialName, selector }),
      /** PNG of the page’s viewport; with ref (from perceive, frames included) or selector, of that one element only (scrolled into view). Filled fields render masked */
      screenshot: (sessionId: In<'screenshot'>['sessionId'], input: Omit<In<'screenshot'>, 'sessionId'> = {}) => call('screenshot', { ...input, sessionId }),
      /** Go back in the page history */
      goBack: (sessionId: In<'go_back'>['sessionId'], input: Omit<In<'go_back'>, 'sessionId'> = {}) => call('go_back', { ...input, sessionId }),
      /** Reload the page */
      reload: (sessionId: In<'reload'>['sessionId'], input: Omit<In<'reload'>, 'sessionId'> = {}) => call('reload', { ...input, sessionId }),
      /** Wait until an element (by ref or selector) or a text appears (exactly one of the three) */
      waitFor: (sessionId: In<'wait_for'>['sessionId'], input: Omit<In<'wait_for'>, 'sessionId'>) => call('wait_for', { ...input, sessionId }),
      /** Select options of a <select>. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one */
      selectOption: (sessionId: In<'select_option'>['sessionId'], input: Omit<In<'select_option'>, 'sessionId'>) => call('select_option', { ...input, sessionId }),
      /** Hover over an element. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one */
      hover: (sessionId: In<'hover'>['sessionId'], input: Omit<In<'hover'>, 'sessionId'>) => call('hover', { ...input, sessionId }),
      /** PDF of the page. Refused (403 pdf_after_fill) once a credential was filled in this session: a PDF carries page text, where a filled secret could be echoed; use screenshot instead */
      pdf: (sessionId: In<'pdf'>['sessionId']) => call('pdf', { sessionId }),
      /** Console messages the page logged */
      consoleMessages: (sessionId: In<'console_messages'>['sessionId']) => call('console_messages', { sessionId }),
      /** Go forward in the active tab’s history */
      goForward: (sessionId: In<'go_forward'>['sessionId'], input: Omit<In<'go_forward'>, 'sessionId'> = {}) => call('go_forward', { ...input, sessionId }),
      /** List the session’s tabs (id, url, title, which is active). New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabList: (sessionId: In<'tab_list'>['sessionId']) => call('tab_list', { sessionId }),
      /** Open a new tab, optionally at a url, and make it the active tab. New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabOpen: (sessionId: In<'tab_open'>['sessionId'], input: Omit<In<'tab_open'>, 'sessionId'> = {}) => call('tab_open', { ...input, sessionId }),
      /** Make a tab the active tab (the one every other tool drives) and bring it to the front. New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabSelect: (sessionId: In<'tab_select'>['sessionId'], input: Omit<In<'tab_select'>, 'sessionId'>) => call('tab_select', { ...input, sessionId }),
      /** Close a tab (default: the active one). The page’s beforeunload handler runs: its dialog is answered like any other (see dialog_handle; by default the page may leave), and a “stay” answer keeps the tab open (closed: false). New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabClose: (sessionId: In<'tab_close'>['sessionId'], input: Omit<In<'tab_close'>, 'sessionId'> = {}) => call('tab_close', { ...input, sessionId }),
      /** Set the answer to the next JavaScript dialog (alert, confirm, prompt, beforeunload) in any tab: accept (with promptText for a prompt) or dismiss. Dialogs never block the page or a tool call: each one is answered the moment it opens, with the armed answer if this tool set one (used once), otherwise by default: alert closed, confirm and prompt dismissed (false / null), beforeunload accepted (the page may leave). So call this BEFORE the action that opens the dialog. Every dialog is reported with how it was answered: in this tool’s result (the latest dialogs) and as a console message of type "dialog" (console_messages). */
      dialogHandle: (sessionId: In<'dialog_handle'>['sessionId'], input: Omit<In<'dialog_handle'>, 'sessionId'>) => call('dialog_handle', { ...input, sessionId }),
      /** Set the viewport size of every tab, open now or later */
      resize: (sessionId: In<'resize'>['sessionId'], input: Omit<In<'resize'>, 'sessionId'>) => call('resize', { ...input, sessionId }),
      /** Drag one element onto another (press on the first, move, release on the second; HTML5 drag and drop included). Name each by ref (fromRef, toRef: from perceive’s snapshot) or by selector (from, to) */
      drag: (sessionId: In<'drag'>['sessionId'], input: Omit<In<'drag'>, 'sessionId'>) => call('drag', { ...input, sessionId }),
      /** Click at viewport coordinates (for agents that read a screenshot): optional button and click count */
      mouseClick: (sessionId: In<'mouse_click'>['sessionId'], input: Omit<In<'mouse_click'>, 'sessionId'>) => call('mouse_click', { ...input, sessionId }),
      /** Move the mouse to viewport coordinates (hover effects, pointer tracking) */
      mouseMove: (sessionId: In<'mouse_move'>['sessionId'], input: Omit<In<'mouse_move'>, 'sessionId'>) => call('mouse_move', { ...input, sessionId }),
      /** Turn the mouse wheel at a point (x and y; without them, where the mouse is): deltaX and deltaY in pixels scroll whatever is under it */
      mouseWheel: (sessionId: In<'mouse_wheel'>['sessionId'], input: Omit<In<'mouse_wheel'>, 'sessionId'>) => call('mouse_wheel', { ...input, sessionId }),
      /** Fill several form fields at once (at most 50): text inputs, textareas, checkboxes, radios and selects; every field is checked before any is filled. Each field is named by ref (from perceive’s snapshot) or by selector, exactly one */
      fillForm: (sessionId: In<'fill_form'>['sessionId'], input: Omit<In<'fill_form'>, 'sessionId'>) => call('fill_form', { ...input, sessionId }),
      /** Put a file into the session (content in base64) for file_upload to set into a page’s file input; at most 20 files per session, 10 MiB each. REST only (the body may be up to 15 MiB) */
      filePut: (sessionId: In<'file_put'>['sessionId'], input: Omit<In<'file_put'>, 'sessionId'>) => call('file_put', { ...input, sessionId }),
      /** Set files of the session (put with file_put, or downloaded) into an <input type=file>, by id or name; several need an input with the multiple attribute. The page sees each file’s name, size and type; at most 20 files per session, 10 MiB each. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one */
      fileUpload: (sessionId: In<'file_upload'>['sessionId'], input: Omit<In<'file_upload'>, 'sessionId'>) => call('file_upload', { ...input, sessionId }),
      /** The session’s files: those put into it and those its pages downloaded (a download over the limits is listed as refused, with its reason); at most 20 files per session, 10 MiB each */
      fileList: (sessionId: In<'file_list'>['sessionId']) => call('file_list', { sessionId }),
      /** Read a session file’s bytes (a download exactly as the page received it): at most 5 MiB per call, from offset; eof says whether more follows */
      fileRead: (sessionId: In<'file_read'>['sessionId'], fileId: In<'file_read'>['fileId'], input: Omit<In<'file_read'>, 'sessionId' | 'fileId'> = {}) => call('file_read', { ...input, sessionId, fileId }),
      /** Run JavaScript in the page and return its JSON result: an expression, or a function body that returns a value (await allowed). Refused on a session with a bound identity */
      evaluate: (sessionId: In<'evaluate'>['sessionId'], input: Omit<In<'evaluate'>, 'sessionId'>) => call('evaluate', { ...input, sessionId }),
      /** A recorded session’s recording: when, how large, where to download and replay it */
      recordingGet: (sessionId: In<'session_recording_get'>['sessionId']) => call('session_recording_get', { sessionId }),
      /** Download a recorded session’s timeline (rrweb events, JSON); a live session’s is read up to now */
      recordingEvents: (sessionId: In<'session_recording_events'>['sessionId']) => call('session_recording_events', { sessionId }),
    },
    networks: {
      /** The requests the session’s pages made (the newest 500 are kept): method, URL without its query, status, resource type and timing — never a header or a body */
      requests: (sessionId: In<'network_requests'>['sessionId'], input: Omit<In<'network_requests'>, 'sessionId'> = {}) => call('network_requests', { ...input, sessionId }),
      /** Networks of the org (empty array if none) */
      list: () => call('network_list', {}),
      /** Create a network; its join token secret is returned once */
      create: (input: In<'network_create'>) => call('network_create', input),
      /** Replace the declared hosts (host, IPv4, [IPv6] or ::1, optionally :port); live sessions keep their launch-time list */
      update: (networkId: In<'network_update'>['networkId'], input: Omit<In<'network_update'>, 'networkId'>) => call('network_update', { ...input, networkId }),
      /** Issue a fresh join token; the old one stops working and joined daemons must rejoin */
      rotateToken: (networkId: In<'network_rotate_token'>['networkId']) => call('network_rotate_token', { networkId }),
      /** Delete a network; its tokens stop working and its daemons are dropped */
      delete: (networkId: In<'network_delete'>['networkId']) => call('network_delete', { networkId }),
      /** Daemons of a network (reachable true while connected; empty when none is attached) */
      daemons: (networkId: In<'network_daemons'>['networkId']) => call('network_daemons', { networkId }),
      /** Make a local target reachable: creates or reuses the backing network and declares the target. Needs networks:write, or a reach grant for the calling agent (an OAuth login never holds networks:write): a grant to a network lets the agent declare targets on that network; a seed grant lets it create its own network once (named by network, default "local") */
      ensureLocalReach: (input: In<'local_reach_ensure'>) => call('local_reach_ensure', input),
      /** Grant an agent local reach without networks:write: to an existing network (networkId), or, without networkId, the right to create one network of its own with local_reach_ensure */
      reachGrantCreate: (input: In<'network_reach_grant_create'>) => call('network_reach_grant_create', input),
      /** Reach grants of the org, oldest first, each with its state (live, revoked, ended) */
      reachGrantList: (input: In<'network_reach_grant_list'> = {}) => call('network_reach_grant_list', input),
      /** Revoke a reach grant (idempotent): local_reach_ensure stops working with it; networks, declared hosts and daemons stay as they are */
      reachGrantRevoke: (grantId: In<'network_reach_grant_revoke'>['grantId']) => call('network_reach_grant_revoke', { grantId }),
    },
    webhooks: {
      /** Register a webhook endpoint for some events; its signing secret is returned once */
      create: (input: In<'webhook_create'>) => call('webhook_create', input),
      /** The org’s webhook endpoints, oldest first (never their secrets) */
      list: () => call('webhook_list', {}),
      /** Delete a webhook endpoint: nothing more is sent to it, and its delivery log goes with it */
      delete: (webhookId: In<'webhook_delete'>['webhookId']) => call('webhook_delete', { webhookId }),
      /** Issue a new signing secret (returned once). Deliveries from now on, retries included, are signed with it and, for overlapSeconds (a day unless given), with the secret it replaces too, then with it only */
      rotateSecret: (webhookId: In<'webhook_rotate_secret'>['webhookId'], input: Omit<In<'webhook_rotate_secret'>, 'webhookId'> = {}) => call('webhook_rotate_secret', { ...input, webhookId }),
      /** The delivery log of one endpoint, newest first: each event sent, its state and every attempt’s response status */
      deliveries: (webhookId: In<'webhook_deliveries'>['webhookId'], input: Omit<In<'webhook_deliveries'>, 'webhookId'> = {}) => call('webhook_deliveries', { ...input, webhookId }),
      /** Enable an endpoint disabled after failing: its pending deliveries are attempted again, and new events are queued for it */
      enable: (webhookId: In<'webhook_enable'>['webhookId']) => call('webhook_enable', { webhookId }),
    },
    extensions: {
      /** Upload a browser extension: a zip (base64) of an unpacked Manifest V3 extension, manifest.json at its top; at most 4 MiB zipped, 8 MiB unpacked. It starts untrusted */
      upload: (input: In<'extension_upload'>) => call('extension_upload', input),
      /** The org’s extensions, oldest first, with what each declares and whether it is trusted */
      list: () => call('extension_list', {}),
      /** One extension of the org: what it declares and whether it is trusted */
      get: (extensionId: In<'extension_get'>['extensionId']) => call('extension_get', { extensionId }),
      /** Trust an extension or withdraw trust (org admins; audited). Sealed fills run only in sessions whose every extension is trusted at the moment of the fill */
      trust: (extensionId: In<'extension_trust'>['extensionId'], input: Omit<In<'extension_trust'>, 'extensionId'>) => call('extension_trust', { ...input, extensionId }),
      /** Delete an extension (org admins; audited). Sessions already running keep it loaded, and a sealed fill there is refused from now on */
      delete: (extensionId: In<'extension_delete'>['extensionId']) => call('extension_delete', { extensionId }),
    },
  }
}
