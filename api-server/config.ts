// Every knob is a NIGHTJAR_* environment variable, validated once at start.
// A bad value stops start-up with one line naming the variable.
import proxyaddr from 'proxy-addr'
import { ConfigError } from '../contracts/config-error.ts'
import { parsePlatformProxies } from '../contracts/proxy.ts'
import { isIPv6 } from 'node:net'
import { availableParallelism, totalmem } from 'node:os'
import { resolve } from 'node:path'
import { z } from 'zod'

// Defaults of every abuse limit (docs/abuse-limits.md), overridden by the NIGHTJAR_* variables
// below; limits/ enforces them. Here, not in limits/, because configuration is the lower layer.
export const LIMIT_DEFAULTS = {
  /** console sign-in: this many failures in a row lock the account (the first lock) */
  loginLockoutThreshold: 5,
  /** the first lock; doubles with each further failure */
  loginLockoutBaseSecs: 30,
  /** the longest lock */
  loginLockoutMaxSecs: 900,
  /** console sign-in: failed attempts per client address per window */
  loginIpLimit: 30,
  loginIpWindowSecs: 900,
  /** POST /oauth/device per client address per window */
  deviceLimit: 20,
  deviceWindowSecs: 60,
  /** wrong user codes at the verification page, per account and per address, per window */
  userCodeLimit: 10,
  userCodeWindowSecs: 300,
  /** rejected join tokens at /ws/control per client address per window */
  joinFailureLimit: 20,
  joinFailureWindowSecs: 300,
  /** rejected join tokens for one network (from any address) per the same window; then 429 instead of 401 */
  joinNetworkFailureLimit: 100,
  /** requests whose Bearer token does not resolve, per client address per window (then 429 instead of 401) */
  bearerFailureLimit: 100,
  bearerFailureWindowSecs: 60,
  /** MCP initialize requests per credential per window (each may create URL-elicitation state); then 429 */
  mcpInitializeLimit: 60,
  mcpInitializeWindowSecs: 60,
} as const

export type LimitSettings = { -readonly [K in keyof typeof LIMIT_DEFAULTS]: number }


const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')
const port = z.coerce.number().int().min(0).max(65535)

const schema = z.object({
  NIGHTJAR_HOST: z.string().min(1).default('127.0.0.1'),
  NIGHTJAR_PORT: port.default(8080),
  NIGHTJAR_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  NIGHTJAR_CONSOLE_PATH: z.string().regex(/^\/[a-z0-9/_-]*$/).default('/console'),
  NIGHTJAR_DATA_DIR: z.string().min(1).default('./.nightjar'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  NIGHTJAR_PG_PORT: port.default(54329),
  NIGHTJAR_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NIGHTJAR_COOKIE_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  NIGHTJAR_KMS_PROVIDER: z.enum(['local', 'aws', 'none']).default('local'),
  NIGHTJAR_KMS_KEY_FILE: z.string().optional(),
  NIGHTJAR_KMS_KEY_ID: z.string().optional(),
  NIGHTJAR_KMS_REGION: z.string().optional(),
  NIGHTJAR_KMS_ENDPOINT: z.url().optional(),
  NIGHTJAR_OAUTH_DCR_ENABLED: bool.default(true),
  // client metadata documents (oauth/cimd.ts): hosts whose private addresses may be fetched; extra CA
  NIGHTJAR_CIMD_ALLOWED_HOSTS: z.string().default(''),
  NIGHTJAR_CIMD_CA_FILE: z.string().min(1).optional(),
  // credential_request and URL elicitation: how long a request stays open
  NIGHTJAR_ELICITATION_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(600),
  NIGHTJAR_WARM_POOL_SIZE: z.coerce.number().int().min(0).max(64).default(2),
  NIGHTJAR_WARM_POOL_MAX: z.coerce.number().int().min(0).max(256).optional(),
  NIGHTJAR_WARM_POOL_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  NIGHTJAR_WARM_POOL_LAUNCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  NIGHTJAR_CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  // Chromium's own sandbox in every browser pod; none only as an explicit choice (docs/security.md)
  NIGHTJAR_BROWSER_SANDBOX: z.enum(['chromium', 'none']).default('chromium'),
  NIGHTJAR_POD_UID_BASE: z.coerce.number().int().min(1000).max(4_294_000_000).optional(),
  NIGHTJAR_HOST_ALIASES: z
    .string()
    .transform((s, ctx) => {
      try {
        const v = JSON.parse(s)
        if (v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')) return v as Record<string, string>
      } catch { /* not JSON: the issue below says what is wanted */ }
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of host name to IP address' })
      return z.NEVER
    })
    .optional(),
  NIGHTJAR_DENY_CIDRS: z.string().optional(),
  // the platform's own proxies (host:port): the only session proxies that may be internal (docs/proxy.md)
  NIGHTJAR_PLATFORM_PROXIES: z.string().default('').transform((s, ctx) => {
    const list = parsePlatformProxies(s)
    if (typeof list === 'string') { ctx.addIssue({ code: 'custom', message: list }); return z.NEVER }
    return list
  }),
  // webhooks (webhooks/): hosts that may be loopback or private (and use http); the retry schedule
  NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: z.string().default(''),
  NIGHTJAR_WEBHOOK_RETRY_SECONDS: z.string().regex(/^\s*\d{1,6}(\s*,\s*\d{1,6}){0,19}\s*$/, 'must be up to 20 comma-separated whole seconds (e.g. 5,300,1800)')
    .default('5,300,1800,7200,18000,36000,36000'),
  // webhooks: endpoints per org; attempts in flight per replica, per org and per answering endpoint; auto-disable
  NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG: z.coerce.number().int().min(1).max(1000).default(20),
  NIGHTJAR_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  NIGHTJAR_WEBHOOK_ORG_CONCURRENCY: z.coerce.number().int().min(2).max(1000).default(16),
  NIGHTJAR_WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  NIGHTJAR_WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(1).max(100_000).default(20),
  NIGHTJAR_WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce.number().int().min(0).max(90 * 86_400).default(86_400),
  NIGHTJAR_RUNTIME: z.enum(['embedded', 'kubernetes']).default('embedded'),
  NIGHTJAR_WATCH_NAMESPACE: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name').optional(),
  // extra Origins (and their hosts) that /mcp accepts besides the base URL's (mcp/origin.ts)
  NIGHTJAR_MCP_ALLOWED_ORIGINS: z
    .string()
    .transform((s, ctx) => {
      const list = s.split(',').map((x) => x.trim()).filter(Boolean)
      for (const o of list) {
        let ok = false
        try { const u = new URL(o); ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o.replace(/\/+$/, '') } catch { /* not a URL: not ok */ }
        if (!ok) { ctx.addIssue({ code: 'custom', message: 'must be comma-separated http(s) origins (scheme://host[:port])' }); return z.NEVER }
      }
      return list
    })
    .optional(),
  // abuse limits of the console, OAuth and daemon join surfaces (limits/, docs/abuse-limits.md)
  NIGHTJAR_LOGIN_LOCKOUT_THRESHOLD: z.coerce.number().int().min(1).max(1000).default(LIMIT_DEFAULTS.loginLockoutThreshold),
  NIGHTJAR_LOGIN_LOCKOUT_BASE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.loginLockoutBaseSecs),
  NIGHTJAR_LOGIN_LOCKOUT_MAX_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.loginLockoutMaxSecs),
  NIGHTJAR_LOGIN_IP_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.loginIpLimit),
  NIGHTJAR_LOGIN_IP_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.loginIpWindowSecs),
  NIGHTJAR_DEVICE_RATE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.deviceLimit),
  NIGHTJAR_DEVICE_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.deviceWindowSecs),
  NIGHTJAR_USER_CODE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.userCodeLimit),
  NIGHTJAR_USER_CODE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.userCodeWindowSecs),
  NIGHTJAR_JOIN_FAILURE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.joinFailureLimit),
  NIGHTJAR_JOIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.joinFailureWindowSecs),
  NIGHTJAR_JOIN_NETWORK_FAILURE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.joinNetworkFailureLimit),
  NIGHTJAR_BEARER_FAILURE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.bearerFailureLimit),
  NIGHTJAR_BEARER_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.bearerFailureWindowSecs),
  NIGHTJAR_MCP_INITIALIZE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.mcpInitializeLimit),
  NIGHTJAR_MCP_INITIALIZE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LIMIT_DEFAULTS.mcpInitializeWindowSecs),
  // the proxies whose X-Forwarded-For is believed (lib/client-address.ts); none by default
  NIGHTJAR_TRUSTED_PROXIES: z.string().optional().transform((v, ctx) => {
    const list = (v ?? '').split(',').map((s) => s.trim()).filter(Boolean)
    try {
      if (list.length) proxyaddr.compile(list) // throws on a malformed entry
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.0/8,fd00::/8)' })
      return z.NEVER
    }
    return list
  }),
  // /metrics: a required Bearer token, and/or a listener of its own (http/health.ts)
  NIGHTJAR_METRICS_TOKEN: z.string().regex(/^[\x21-\x7e]{16,512}$/, 'must be 16-512 printable characters without spaces').optional(),
  NIGHTJAR_METRICS_PORT: port.optional(),
  NIGHTJAR_METRICS_HOST: z.string().min(1).optional(),
  // capacity: admission of session starts (sessions/admission.ts)
  NIGHTJAR_START_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
  NIGHTJAR_START_QUEUE: z.coerce.number().int().min(0).max(10_000).optional(),
  NIGHTJAR_START_QUEUE_WAIT_SECONDS: z.coerce.number().int().min(1).max(600).default(20),
  NIGHTJAR_START_ANSWER_SECONDS: z.coerce.number().int().min(1).max(120).default(5),
  NIGHTJAR_BROWSER_START_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  NIGHTJAR_MAX_LIVE_SESSIONS: z.coerce.number().int().min(1).max(100_000).optional(),
  NIGHTJAR_ORG_MAX_LIVE_SESSIONS: z.coerce.number().int().min(1).max(100_000).default(16),
  // lifetimes (sessions/expiry.ts): the defaults, and the most a session may ask for
  NIGHTJAR_SESSION_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(7 * 86400).default(900),
  // graceful shutdown: how long requests in flight may take to finish before they are cut
  NIGHTJAR_SHUTDOWN_DRAIN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  NIGHTJAR_SHUTDOWN_DELAY_SECONDS: z.coerce.number().int().min(0).max(300).default(0),
  NIGHTJAR_SESSION_MAX_DURATION_SECONDS: z.coerce.number().int().min(1).max(7 * 86400).default(14_400),
  // a stalled database answers 503 quickly instead of holding requests (store/db.ts)
  NIGHTJAR_DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(2000),
  NIGHTJAR_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(2000),
  // replicas (replicas/): the channel a replica forwards a tunnel dial over to the replica holding the daemon
  NIGHTJAR_REPLICA_SECRET: z.string().regex(/^[\x21-\x7e]{32,512}$/, 'must be 32-512 printable characters without spaces').optional(),
  NIGHTJAR_REPLICA_ADDRESS: z.preprocess(bracketIpv6Host, z.url({ protocol: /^https?$/ }).optional()),
  NIGHTJAR_REPLICA_HEARTBEAT_SECONDS: z.coerce.number().int().min(1).max(300).default(5),
  // session recordings (recordings/): where the timelines are kept, how long, how often the pods are read
  NIGHTJAR_RECORDING_STORE: z.enum(['directory', 's3']).default('directory'),
  NIGHTJAR_RECORDING_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  NIGHTJAR_RECORDING_POLL_SECONDS: z.coerce.number().int().min(1).max(300).default(5),
  NIGHTJAR_RECORDING_S3_BUCKET: z.string().min(3).max(63).optional(),
  NIGHTJAR_RECORDING_S3_PREFIX: z.string().max(200).regex(/^[A-Za-z0-9_.\/-]*$/).optional(),
  NIGHTJAR_RECORDING_S3_REGION: z.string().min(1).max(50).optional(),
  NIGHTJAR_RECORDING_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  // session videos (browser-pod/video.ts): the bounds of every session's video
  NIGHTJAR_VIDEO_MAX_MINUTES: z.coerce.number().int().min(1).max(1440).default(60),
  NIGHTJAR_VIDEO_MAX_MB: z.coerce.number().int().min(1).max(100_000).default(500),
})

export type Config = {
  host: string
  port: number
  baseUrl: string
  consolePath: string
  dataDir: string
  databaseUrl?: string
  pgPort: number
  logLevel: string
  cookieSecret?: string
  kms: { provider: 'local' | 'aws' | 'none'; keyFile: string; keyId?: string; region?: string; endpoint?: string }
  oauthDcrEnabled: boolean
  /** client ID metadata documents: hosts allowed to resolve to non-public addresses, and a CA file trusted for their fetch */
  cimd: { allowedHosts: string[]; caFile?: string }
  /** how long a credential request stays open, and a URL elicitation keeps its tool call waiting (seconds) */
  elicitationTtlSecs?: number
  warmPoolSize: number
  /** the pool grows toward recent demand up to this many (a memory bound) */
  warmPoolMax: number
  warmPoolWindowMs: number
  warmPoolLaunchConcurrency: number
  chromiumPath: string
  /** chromium (Chromium's own sandbox) or none (explicitly off) */
  browserSandbox: 'chromium' | 'none'
  /** embedded, as root: the first of the uids browser pods run as */
  podUidBase?: number
  hostAliases: Record<string, string>
  denyCidrs: string[]
  /** session proxies the platform names (host:port): these alone may be internal */
  platformProxies: string[]
  /** webhooks: hosts that may resolve to loopback or private addresses (and use http); seconds before each retry; the fairness bounds and auto-disable */
  webhooks: {
    allowedHosts: string[]; retrySecs: number[]; maxEndpointsPerOrg: number
    workerConcurrency: number; orgConcurrency: number; endpointConcurrency: number; disableAfterFailures: number; disableAfterSecs: number
  }
  /** embedded: operator and browser pods in this process; kubernetes: resources and Pods in a cluster */
  runtime: 'embedded' | 'kubernetes'
  watchNamespace?: string
  /** extra Origins (and their hosts) /mcp accepts besides the base URL's */
  mcpAllowedOrigins: string[]
  /** abuse limits (defaults in LIMIT_DEFAULTS above) */
  limits: LimitSettings
  /** how long requests in flight may take to finish on shutdown before they are cut */
  shutdownDrainSecs: number
  /** on SIGTERM, how long it serves on (readiness failing) before it stops accepting */
  shutdownDelaySecs: number
  /** addresses and CIDR ranges of reverse proxies whose X-Forwarded-For names the client; empty: none */
  trustedProxies: string[]
  /** /metrics: the Bearer token it requires (none: open), and a separate listener (then not on the main port) */
  metrics: { token?: string; port?: number; host: string }
  capacity: {
    /** session starts in flight at once (a cold Chromium launch is CPU-bound) */
    startConcurrency: number
    /** starts that may wait for a slot; more are refused with 429 at once */
    startQueue: number
    startQueueWaitMs: number
    /** how long POST /v1/sessions waits for the browser before answering 202 pending (Prefer: wait=N asks for longer) */
    startAnswerMs: number
    /** a start not live this long fails (504 start_timeout): the operator's own pod start timeout plus 10 s */
    startTimeoutMs: number
    /** pending + live sessions on this deployment */
    maxLiveSessions: number
    /** pending + live sessions per org */
    orgMaxLiveSessions: number
  }
  lifetimes: { idleTimeoutSecs: number; maxDurationSecs: number }
  db: { queryTimeoutMs: number; connectTimeoutMs: number }
  /**
   * Replicas: every api-server process registers itself and heartbeats; a tunnel dial that
   * lands on a replica without the network's daemon is forwarded to the one holding it, over
   * the replica channel (address + shared secret; without both this replica never forwards
   * and refuses forwarded dials).
   */
  replica: { secret?: string; address?: string; heartbeatMs: number }
  /** session recordings: the store (a directory under the data dir, or S3), retention, the pods' read interval */
  recordings: { store: 'directory' | 's3'; retentionDays: number; pollMs: number; s3?: { bucket: string; prefix?: string; region?: string; endpoint?: string } }
  /** session videos: what one video may last and weigh at most (docs/sessions.md, "Video") */
  video: { maxDurationMs: number; maxBytes: number }
}


/**
 * The chart sets NIGHTJAR_REPLICA_ADDRESS to `http://$(POD_IP):8080`; on an IPv6 cluster
 * the kubelet expands that to `http://fd00::5:8080`, which is no URL. An unbracketed IPv6
 * literal before the port is bracketed here; anything else is left for the URL check.
 */
export function bracketIpv6Host(value: unknown): unknown {
  if (typeof value !== 'string') return value
  const m = /^(https?:\/\/)([0-9A-Fa-f:.]+):(\d{1,5})(\/.*)?$/.exec(value)
  return m && isIPv6(m[2]) ? `${m[1]}[${m[2]}]:${m[3]}${m[4] ?? ''}` : value
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const name = String(issue.path[0] ?? 'environment')
    throw new ConfigError(`invalid configuration: ${name}: ${issue.message}`)
  }
  const e = parsed.data
  checkTogether(e)
  const dataDir = resolve(e.NIGHTJAR_DATA_DIR)
  const shownHost = e.NIGHTJAR_HOST === '0.0.0.0' || e.NIGHTJAR_HOST === '::' ? 'localhost' : e.NIGHTJAR_HOST
  const baseUrl = (e.NIGHTJAR_BASE_URL ?? `http://${shownHost}:${e.NIGHTJAR_PORT}`).replace(/\/+$/, '')
  return {
    host: e.NIGHTJAR_HOST,
    port: e.NIGHTJAR_PORT,
    baseUrl,
    consolePath: e.NIGHTJAR_CONSOLE_PATH.replace(/\/+$/, '') || '/console',
    dataDir,
    databaseUrl: e.DATABASE_URL,
    pgPort: e.NIGHTJAR_PG_PORT,
    logLevel: e.NIGHTJAR_LOG_LEVEL,
    cookieSecret: e.NIGHTJAR_COOKIE_SECRET,
    kms: {
      provider: e.NIGHTJAR_KMS_PROVIDER,
      keyFile: resolve(e.NIGHTJAR_KMS_KEY_FILE ?? `${dataDir}/kms.key`),
      keyId: e.NIGHTJAR_KMS_KEY_ID,
      region: e.NIGHTJAR_KMS_REGION,
      endpoint: e.NIGHTJAR_KMS_ENDPOINT,
    },
    oauthDcrEnabled: e.NIGHTJAR_OAUTH_DCR_ENABLED,
    cimd: { allowedHosts: e.NIGHTJAR_CIMD_ALLOWED_HOSTS.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean), caFile: e.NIGHTJAR_CIMD_CA_FILE },
    elicitationTtlSecs: e.NIGHTJAR_ELICITATION_TTL_SECONDS,
    warmPoolSize: e.NIGHTJAR_WARM_POOL_SIZE,
    // an idle Chromium costs about 250 MiB: by default the pool may grow to a GiB's worth per
    // GiB of memory, 16 at most, never below its minimum
    warmPoolMax: e.NIGHTJAR_WARM_POOL_MAX ?? Math.max(e.NIGHTJAR_WARM_POOL_SIZE, Math.min(16, Math.floor(totalmem() / 2 ** 30))),
    warmPoolWindowMs: e.NIGHTJAR_WARM_POOL_WINDOW_SECONDS * 1000,
    warmPoolLaunchConcurrency: e.NIGHTJAR_WARM_POOL_LAUNCH_CONCURRENCY,
    chromiumPath: e.NIGHTJAR_CHROMIUM_PATH,
    browserSandbox: e.NIGHTJAR_BROWSER_SANDBOX,
    podUidBase: e.NIGHTJAR_POD_UID_BASE,
    hostAliases: e.NIGHTJAR_HOST_ALIASES ?? {},
    denyCidrs: (e.NIGHTJAR_DENY_CIDRS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    platformProxies: e.NIGHTJAR_PLATFORM_PROXIES,
    webhooks: webhooksConfig(e),
    runtime: e.NIGHTJAR_RUNTIME,
    watchNamespace: e.NIGHTJAR_WATCH_NAMESPACE,
    mcpAllowedOrigins: e.NIGHTJAR_MCP_ALLOWED_ORIGINS ?? [],
    limits: limitsConfig(e),
    trustedProxies: e.NIGHTJAR_TRUSTED_PROXIES,
    metrics: { token: e.NIGHTJAR_METRICS_TOKEN, port: e.NIGHTJAR_METRICS_PORT, host: e.NIGHTJAR_METRICS_HOST ?? e.NIGHTJAR_HOST },
    capacity: capacityDefaults(e),
    shutdownDrainSecs: e.NIGHTJAR_SHUTDOWN_DRAIN_SECONDS,
    shutdownDelaySecs: e.NIGHTJAR_SHUTDOWN_DELAY_SECONDS,
    lifetimes: { idleTimeoutSecs: e.NIGHTJAR_SESSION_IDLE_TIMEOUT_SECONDS, maxDurationSecs: e.NIGHTJAR_SESSION_MAX_DURATION_SECONDS },
    db: { queryTimeoutMs: e.NIGHTJAR_DB_QUERY_TIMEOUT_MS, connectTimeoutMs: e.NIGHTJAR_DB_CONNECT_TIMEOUT_MS },
    recordings: {
      store: e.NIGHTJAR_RECORDING_STORE,
      retentionDays: e.NIGHTJAR_RECORDING_RETENTION_DAYS,
      pollMs: e.NIGHTJAR_RECORDING_POLL_SECONDS * 1000,
      ...(e.NIGHTJAR_RECORDING_S3_BUCKET ? { s3: { bucket: e.NIGHTJAR_RECORDING_S3_BUCKET, prefix: e.NIGHTJAR_RECORDING_S3_PREFIX, region: e.NIGHTJAR_RECORDING_S3_REGION, endpoint: e.NIGHTJAR_RECORDING_S3_ENDPOINT } } : {}),
    },
    video: { maxDurationMs: e.NIGHTJAR_VIDEO_MAX_MINUTES * 60_000, maxBytes: e.NIGHTJAR_VIDEO_MAX_MB * 1024 * 1024 },
    replica: { secret: e.NIGHTJAR_REPLICA_SECRET, address: e.NIGHTJAR_REPLICA_ADDRESS?.replace(/\/+$/, ''), heartbeatMs: e.NIGHTJAR_REPLICA_HEARTBEAT_SECONDS * 1000 },
  }
}

type Env = z.infer<typeof schema>

/** settings that only make sense together, checked at start rather than at first use */
function checkTogether(e: Env): void {
  if (e.NIGHTJAR_KMS_PROVIDER === 'aws' && !e.NIGHTJAR_KMS_KEY_ID) {
    throw new ConfigError('invalid configuration: NIGHTJAR_KMS_KEY_ID: required when NIGHTJAR_KMS_PROVIDER=aws')
  }
  if (Boolean(e.NIGHTJAR_REPLICA_SECRET) !== Boolean(e.NIGHTJAR_REPLICA_ADDRESS)) {
    // one without the other would forward nowhere or accept nothing: say so at start, not at the first dial
    const missing = e.NIGHTJAR_REPLICA_SECRET ? 'NIGHTJAR_REPLICA_ADDRESS' : 'NIGHTJAR_REPLICA_SECRET'
    throw new ConfigError(`invalid configuration: ${missing}: required when ${missing === 'NIGHTJAR_REPLICA_ADDRESS' ? 'NIGHTJAR_REPLICA_SECRET' : 'NIGHTJAR_REPLICA_ADDRESS'} is set`)
  }
  if (e.NIGHTJAR_RECORDING_STORE === 's3' && !e.NIGHTJAR_RECORDING_S3_BUCKET) {
    throw new ConfigError('invalid configuration: NIGHTJAR_RECORDING_S3_BUCKET: required when NIGHTJAR_RECORDING_STORE=s3')
  }
}

function webhooksConfig(e: Env): Config['webhooks'] {
  return {
    allowedHosts: e.NIGHTJAR_WEBHOOK_ALLOWED_HOSTS.split(',').map((h) => h.trim().toLowerCase().replace(/^\[|\]$/g, '')).filter(Boolean),
    retrySecs: e.NIGHTJAR_WEBHOOK_RETRY_SECONDS.split(',').map((x) => Number(x.trim())),
    maxEndpointsPerOrg: e.NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG,
    workerConcurrency: e.NIGHTJAR_WEBHOOK_CONCURRENCY,
    orgConcurrency: e.NIGHTJAR_WEBHOOK_ORG_CONCURRENCY,
    endpointConcurrency: e.NIGHTJAR_WEBHOOK_ENDPOINT_CONCURRENCY,
    disableAfterFailures: e.NIGHTJAR_WEBHOOK_DISABLE_AFTER_FAILURES,
    disableAfterSecs: e.NIGHTJAR_WEBHOOK_DISABLE_AFTER_SECONDS,
  }
}

/** the abuse limits of the public surfaces (docs/abuse-limits.md) */
function limitsConfig(e: Env): Config['limits'] {
  return {
    loginLockoutThreshold: e.NIGHTJAR_LOGIN_LOCKOUT_THRESHOLD,
    loginLockoutBaseSecs: e.NIGHTJAR_LOGIN_LOCKOUT_BASE_SECONDS,
    loginLockoutMaxSecs: e.NIGHTJAR_LOGIN_LOCKOUT_MAX_SECONDS,
    loginIpLimit: e.NIGHTJAR_LOGIN_IP_LIMIT,
    loginIpWindowSecs: e.NIGHTJAR_LOGIN_IP_WINDOW_SECONDS,
    deviceLimit: e.NIGHTJAR_DEVICE_RATE_LIMIT,
    deviceWindowSecs: e.NIGHTJAR_DEVICE_RATE_WINDOW_SECONDS,
    userCodeLimit: e.NIGHTJAR_USER_CODE_LIMIT,
    userCodeWindowSecs: e.NIGHTJAR_USER_CODE_WINDOW_SECONDS,
    joinFailureLimit: e.NIGHTJAR_JOIN_FAILURE_LIMIT,
    joinFailureWindowSecs: e.NIGHTJAR_JOIN_FAILURE_WINDOW_SECONDS,
    joinNetworkFailureLimit: e.NIGHTJAR_JOIN_NETWORK_FAILURE_LIMIT,
    bearerFailureLimit: e.NIGHTJAR_BEARER_FAILURE_LIMIT,
    bearerFailureWindowSecs: e.NIGHTJAR_BEARER_FAILURE_WINDOW_SECONDS,
    mcpInitializeLimit: e.NIGHTJAR_MCP_INITIALIZE_LIMIT,
    mcpInitializeWindowSecs: e.NIGHTJAR_MCP_INITIALIZE_WINDOW_SECONDS,
  }
}

/**
 * Sized to the machine unless set: four concurrent starts per core (a start from the warm
 * pool costs milliseconds; a cold launch about a core-second, and the pool's own refills
 * are bounded separately), a queue four times that, and as many live sessions as fit in
 * memory at about 384 MiB each (a Chromium with a few tabs), between 2 and 64.
 */
function capacityDefaults(e: z.infer<typeof schema>): Config['capacity'] {
  const startConcurrency = e.NIGHTJAR_START_CONCURRENCY ?? 4 * availableParallelism()
  return {
    startConcurrency,
    startQueue: e.NIGHTJAR_START_QUEUE ?? startConcurrency * 4,
    startQueueWaitMs: e.NIGHTJAR_START_QUEUE_WAIT_SECONDS * 1000,
    startAnswerMs: e.NIGHTJAR_START_ANSWER_SECONDS * 1000,
    // the operator fails a pod not ready in NIGHTJAR_BROWSER_START_TIMEOUT_SECONDS with a
    // reason (StartTimeout); the api-server's own deadline is only the backstop behind it
    startTimeoutMs: (e.NIGHTJAR_BROWSER_START_TIMEOUT_SECONDS + 10) * 1000,
    maxLiveSessions: e.NIGHTJAR_MAX_LIVE_SESSIONS ?? Math.min(64, Math.max(2, Math.floor(totalmem() / (384 * 2 ** 20)))),
    orgMaxLiveSessions: e.NIGHTJAR_ORG_MAX_LIVE_SESSIONS,
  }
}

/** What docs/configuration.md lists (test/api-server/config.test.ts checks); kept beside the schema so they cannot drift. */
export const CONFIG_KEYS = Object.keys(schema.shape)

export { ConfigError }
