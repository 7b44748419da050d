// Every knob is a NIGHTJAR_* environment variable, validated once at start.
// A bad value stops start-up with one line naming the variable.
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
  }
}

/** What /docs and the README's configuration table list; kept beside the schema so they cannot drift. */
export const CONFIG_KEYS = Object.keys(schema.shape)
