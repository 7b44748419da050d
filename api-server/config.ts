// Every knob is a NIGHTJAR_* environment variable, validated once at start.
// A bad value stops start-up with one line naming the variable.
import { availableParallelism, totalmem } from 'node:os'
import { resolve } from 'node:path'
import { z } from 'zod'

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
  NIGHTJAR_WARM_POOL_SIZE: z.coerce.number().int().min(0).max(64).default(2),
  NIGHTJAR_CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  NIGHTJAR_HOST_ALIASES: z
    .string()
    .transform((s, ctx) => {
      try {
        const v = JSON.parse(s)
        if (v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')) return v as Record<string, string>
      } catch {}
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of host name to IP address' })
      return z.NEVER
    })
    .optional(),
  NIGHTJAR_DENY_CIDRS: z.string().optional(),
  NIGHTJAR_RUNTIME: z.enum(['embedded', 'kubernetes']).default('embedded'),
  NIGHTJAR_WATCH_NAMESPACE: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name').optional(),
  // capacity: admission of session starts (sessions/admission.ts)
  NIGHTJAR_START_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
  NIGHTJAR_START_QUEUE: z.coerce.number().int().min(0).max(10_000).optional(),
  NIGHTJAR_START_QUEUE_WAIT_SECONDS: z.coerce.number().int().min(1).max(600).default(20),
  NIGHTJAR_MAX_LIVE_SESSIONS: z.coerce.number().int().min(1).max(100_000).optional(),
  NIGHTJAR_ORG_MAX_LIVE_SESSIONS: z.coerce.number().int().min(1).max(100_000).default(16),
  // lifetimes (sessions/expiry.ts): the defaults, and the most a session may ask for
  NIGHTJAR_SESSION_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(7 * 86400).default(900),
  NIGHTJAR_SESSION_MAX_DURATION_SECONDS: z.coerce.number().int().min(1).max(7 * 86400).default(14_400),
  // a stalled database answers 503 quickly instead of holding requests (store/db.ts)
  NIGHTJAR_DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(2000),
  NIGHTJAR_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(2000),
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
  warmPoolSize: number
  chromiumPath: string
  hostAliases: Record<string, string>
  denyCidrs: string[]
  /** embedded: operator and browser pods in this process; kubernetes: resources and Pods in a cluster */
  runtime: 'embedded' | 'kubernetes'
  watchNamespace?: string
  capacity: {
    /** session starts in flight at once (a cold Chromium launch is CPU-bound) */
    startConcurrency: number
    /** starts that may wait for a slot; more are refused with 429 at once */
    startQueue: number
    startQueueWaitMs: number
    /** pending + live sessions on this deployment */
    maxLiveSessions: number
    /** pending + live sessions per org */
    orgMaxLiveSessions: number
  }
  lifetimes: { idleTimeoutSecs: number; maxDurationSecs: number }
  db: { queryTimeoutMs: number; connectTimeoutMs: number }
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const name = String(issue.path[0] ?? 'environment')
    throw new ConfigError(`invalid configuration: ${name}: ${issue.message}`)
  }
  const e = parsed.data
  if (e.NIGHTJAR_KMS_PROVIDER === 'aws' && !e.NIGHTJAR_KMS_KEY_ID) {
    throw new ConfigError('invalid configuration: NIGHTJAR_KMS_KEY_ID: required when NIGHTJAR_KMS_PROVIDER=aws')
  }
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
    warmPoolSize: e.NIGHTJAR_WARM_POOL_SIZE,
    chromiumPath: e.NIGHTJAR_CHROMIUM_PATH,
    hostAliases: e.NIGHTJAR_HOST_ALIASES ?? {},
    denyCidrs: (e.NIGHTJAR_DENY_CIDRS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    runtime: e.NIGHTJAR_RUNTIME,
    watchNamespace: e.NIGHTJAR_WATCH_NAMESPACE,
    capacity: capacityDefaults(e),
    lifetimes: { idleTimeoutSecs: e.NIGHTJAR_SESSION_IDLE_TIMEOUT_SECONDS, maxDurationSecs: e.NIGHTJAR_SESSION_MAX_DURATION_SECONDS },
    db: { queryTimeoutMs: e.NIGHTJAR_DB_QUERY_TIMEOUT_MS, connectTimeoutMs: e.NIGHTJAR_DB_CONNECT_TIMEOUT_MS },
  }
}

/**
 * Sized to the machine unless set: as many concurrent starts as cores (at least 2), a queue
 * four times that, and as many live sessions as fit in memory at about 384 MiB each (a
 * Chromium with a few tabs), between 2 and 64.
 */
function capacityDefaults(e: z.infer<typeof schema>): Config['capacity'] {
  const startConcurrency = e.NIGHTJAR_START_CONCURRENCY ?? Math.max(2, availableParallelism())
  return {
    startConcurrency,
    startQueue: e.NIGHTJAR_START_QUEUE ?? startConcurrency * 4,
    startQueueWaitMs: e.NIGHTJAR_START_QUEUE_WAIT_SECONDS * 1000,
    maxLiveSessions: e.NIGHTJAR_MAX_LIVE_SESSIONS ?? Math.min(64, Math.max(2, Math.floor(totalmem() / (384 * 2 ** 20)))),
    orgMaxLiveSessions: e.NIGHTJAR_ORG_MAX_LIVE_SESSIONS,
  }
}

/** What /docs and the README's configuration table list; kept beside the schema so they cannot drift. */
export const CONFIG_KEYS = Object.keys(schema.shape)
