// `nightjar operator` settings: NIGHTJAR_* environment variables, validated once at start.
// A bad value stops start-up with one line naming the variable (like the api-server's).
// The chart sets all of these from values.yaml (charts/nightjar/templates/operator.yaml).
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import { z } from 'zod'
import { ConfigError } from '../../contracts/config-error.ts'
import type { BrowserPodOptions, SeccompProfile } from './pod-spec.ts'
import { podTracingEnv, tracingRequested } from '../../telemetry/tracing.ts'

const port = z.coerce.number().int().min(1).max(65535)
const seconds = z.coerce.number().int().min(1).max(86_400)
const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label').max(63)
const json = <T extends z.ZodType>(inner: T) =>
  z.string().transform((s, ctx) => {
    try {
      const parsed = inner.safeParse(JSON.parse(s))
      if (parsed.success) return parsed.data as z.infer<T>
      ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'invalid' })
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON' })
    }
    return z.NEVER
  })
const quantity = z.string().regex(/^[0-9.]+([eE][0-9]+|[KMGTPE]i?|m|k)?$/, 'must be a Kubernetes quantity')
const resourceList = z.object({ cpu: quantity.optional(), memory: quantity.optional(), 'ephemeral-storage': quantity.optional() }).strict()
const stringMap = z.record(z.string(), z.string())

const schema = z.object({
  NIGHTJAR_WATCH_NAMESPACE: dnsLabel.optional(),
  NIGHTJAR_POD_NAMESPACE: dnsLabel.optional(),
  NIGHTJAR_POD_NAME: z.string().min(1).max(253).optional(),
  /** this replica's Pod uid (downward API): warm-pool events are recorded on that Pod */
  NIGHTJAR_POD_UID: z.string().min(1).max(64).optional(),
  NIGHTJAR_LEASE_NAMESPACE: dnsLabel.optional(),
  NIGHTJAR_LEASE_NAME: dnsLabel.default('nightjar-operator'),
  NIGHTJAR_LEASE_DURATION_SECONDS: seconds.default(15),
  NIGHTJAR_RENEW_DEADLINE_SECONDS: seconds.default(10),
  NIGHTJAR_RETRY_PERIOD_SECONDS: seconds.default(2),
  NIGHTJAR_OPERATOR_HOST: z.string().min(1).default('0.0.0.0'),
  NIGHTJAR_OPERATOR_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  NIGHTJAR_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NIGHTJAR_OPERATOR_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(16),
  NIGHTJAR_RESYNC_SECONDS: seconds.default(600),
  /** Ended/Failed BrowserSessions are deleted this long after they ended (0: at once) */
  NIGHTJAR_SESSION_RETENTION_SECONDS: z.coerce.number().int().min(0).max(30 * 86400).default(3600),
  NIGHTJAR_WATCH_TIMEOUT_SECONDS: seconds.default(300),
  NIGHTJAR_BROWSER_IMAGE: z.string().min(1, 'is required (the browser-pod image)'),
  /** browserKind cloak pods' image (full Chromium and Xvfb); unset: NIGHTJAR_BROWSER_IMAGE */
  NIGHTJAR_BROWSER_CLOAK_IMAGE: z.string().min(1).optional(),
  NIGHTJAR_BROWSER_IMAGE_PULL_POLICY: z.enum(['Always', 'IfNotPresent', 'Never']).default('IfNotPresent'),
  NIGHTJAR_BROWSER_NODE_PORT: port.default(8090),
  NIGHTJAR_BROWSER_RESOURCES: json(z.object({ requests: resourceList.optional(), limits: resourceList.optional() }).strict()).optional(),
  NIGHTJAR_BROWSER_SHM_SIZE: quantity.default('1Gi'),
  NIGHTJAR_BROWSER_SERVICE_ACCOUNT: dnsLabel.optional(),
  NIGHTJAR_BROWSER_RUNTIME_CLASS: z.string().min(1).optional(),
  NIGHTJAR_BROWSER_SANDBOX: z.enum(['chromium', 'none']).default('chromium'),
  /** RuntimeDefault, Unconfined, or Localhost:<path under the kubelet's seccomp root> */
  NIGHTJAR_BROWSER_SECCOMP_PROFILE: z.string().regex(/^(RuntimeDefault|Unconfined|Localhost:[\w./-]{1,253})$/, 'must be RuntimeDefault, Unconfined or Localhost:<profile path>').optional(),
  NIGHTJAR_BROWSER_PRIORITY_CLASS: z.string().min(1).optional(),
  NIGHTJAR_BROWSER_NODE_SELECTOR: json(stringMap).optional(),
  NIGHTJAR_BROWSER_TOLERATIONS: json(z.array(z.record(z.string(), z.unknown()))).optional(),
  NIGHTJAR_BROWSER_AFFINITY: json(z.record(z.string(), z.unknown())).optional(),
  /** JSON list; unset: the default soft spread over nodes (pod-spec.ts DEFAULT_SPREAD), [] none */
  NIGHTJAR_BROWSER_TOPOLOGY_SPREAD: json(z.array(z.record(z.string(), z.unknown()))).optional(),
  /** watch Nodes and their Leases (cluster-wide read): NodeLost and NodeDrained (docs/nodes.md) */
  NIGHTJAR_NODE_WATCH: z.enum(['true', 'false']).default('true'),
  /** a node whose Lease went unrenewed this long (or that is not Ready) is suspect: its pods are probed */
  NIGHTJAR_NODE_SUSPECT_SECONDS: seconds.default(15),
  /** a pod on a suspect node that has not answered this long is lost with it */
  NIGHTJAR_NODE_UNREACHABLE_SECONDS: seconds.default(6),
  /** a live session on a cordoned (draining) node runs this long, then ends with NodeDrained */
  NIGHTJAR_DRAIN_GRACE_SECONDS: seconds.default(600),
  NIGHTJAR_BROWSER_IMAGE_PULL_SECRETS: z.string().optional(),
  NIGHTJAR_BROWSER_POD_LABELS: json(stringMap).optional(),
  NIGHTJAR_BROWSER_POD_ANNOTATIONS: json(stringMap).optional(),
  NIGHTJAR_BROWSER_START_TIMEOUT_SECONDS: seconds.default(300),
  NIGHTJAR_WARM_POOL_SIZE: z.coerce.number().int().min(0).max(64).default(2),
  NIGHTJAR_DENY_CIDRS: z.string().optional(),
  NIGHTJAR_HOST_ALIASES: json(stringMap).optional(),
  NIGHTJAR_TUNNEL_URL: z.string().regex(/^wss?:\/\//, 'must be a ws:// or wss:// URL').optional(),
  /** false: browser pods do not export spans even when the operator does */
  NIGHTJAR_BROWSER_TRACING: z.enum(['true', 'false']).default('true'),
})

export interface OperatorConfig {
  watchNamespace: string
  leaseNamespace: string
  leaseName: string
  identity: string
  leaseDurationMs: number
  renewDeadlineMs: number
  retryPeriodMs: number
  host: string
  port: number
  logLevel: string
  concurrency: number
  resyncMs: number
  sessionRetentionMs: number
  watchTimeoutSeconds: number
  poolSize: number
  startTimeoutMs: number
  browser: BrowserPodOptions
  /** node health (docs/nodes.md); undefined when NIGHTJAR_NODE_WATCH=false */
  nodes?: { suspectAfterMs: number; unreachableMs: number; drainGraceMs: number }
  /** this replica's own Pod, when the downward API names it (pool events go there) */
  ownPod?: { name: string; namespace: string; uid: string }
}

export function loadOperatorConfig(env: NodeJS.ProcessEnv, ownNamespace: string | undefined): OperatorConfig {
  const parsed = schema.safeParse(env)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new ConfigError(`invalid configuration: ${String(issue.path[0] ?? 'environment')}: ${issue.message}`)
  }
  const e = parsed.data
  const fail = (name: string, message: string): never => {
    throw new ConfigError(`invalid configuration: ${name}: ${message}`)
  }
  if (e.NIGHTJAR_RENEW_DEADLINE_SECONDS >= e.NIGHTJAR_LEASE_DURATION_SECONDS) fail('NIGHTJAR_RENEW_DEADLINE_SECONDS', 'must be less than NIGHTJAR_LEASE_DURATION_SECONDS')
  if (e.NIGHTJAR_RETRY_PERIOD_SECONDS >= e.NIGHTJAR_RENEW_DEADLINE_SECONDS) fail('NIGHTJAR_RETRY_PERIOD_SECONDS', 'must be less than NIGHTJAR_RENEW_DEADLINE_SECONDS')
  const denyCidrs = (e.NIGHTJAR_DENY_CIDRS ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  for (const cidr of denyCidrs) if (!isCidr(cidr)) fail('NIGHTJAR_DENY_CIDRS', `${cidr} is not a CIDR`)
  for (const [host, ip] of Object.entries(e.NIGHTJAR_HOST_ALIASES ?? {})) if (!isIP(ip)) fail('NIGHTJAR_HOST_ALIASES', `${host} must map to an IP address`)
  const own = e.NIGHTJAR_POD_NAMESPACE ?? ownNamespace
  const watchNamespace = e.NIGHTJAR_WATCH_NAMESPACE ?? own ?? 'default'
  return {
    watchNamespace,
    leaseNamespace: e.NIGHTJAR_LEASE_NAMESPACE ?? own ?? watchNamespace,
    leaseName: e.NIGHTJAR_LEASE_NAME,
    identity: e.NIGHTJAR_POD_NAME ?? `${hostname()}_${randomBytes(4).toString('hex')}`,
    ...(e.NIGHTJAR_POD_NAME && own && e.NIGHTJAR_POD_UID ? { ownPod: { name: e.NIGHTJAR_POD_NAME, namespace: own, uid: e.NIGHTJAR_POD_UID } } : {}),
    leaseDurationMs: e.NIGHTJAR_LEASE_DURATION_SECONDS * 1000,
    renewDeadlineMs: e.NIGHTJAR_RENEW_DEADLINE_SECONDS * 1000,
    retryPeriodMs: e.NIGHTJAR_RETRY_PERIOD_SECONDS * 1000,
    host: e.NIGHTJAR_OPERATOR_HOST,
    port: e.NIGHTJAR_OPERATOR_PORT,
    logLevel: e.NIGHTJAR_LOG_LEVEL,
    concurrency: e.NIGHTJAR_OPERATOR_CONCURRENCY,
    resyncMs: e.NIGHTJAR_RESYNC_SECONDS * 1000,
    sessionRetentionMs: e.NIGHTJAR_SESSION_RETENTION_SECONDS * 1000,
    watchTimeoutSeconds: e.NIGHTJAR_WATCH_TIMEOUT_SECONDS,
    poolSize: e.NIGHTJAR_WARM_POOL_SIZE,
    startTimeoutMs: e.NIGHTJAR_BROWSER_START_TIMEOUT_SECONDS * 1000,
    ...(e.NIGHTJAR_NODE_WATCH === 'true'
      ? { nodes: { suspectAfterMs: e.NIGHTJAR_NODE_SUSPECT_SECONDS * 1000, unreachableMs: e.NIGHTJAR_NODE_UNREACHABLE_SECONDS * 1000, drainGraceMs: e.NIGHTJAR_DRAIN_GRACE_SECONDS * 1000 } }
      : {}),
    browser: {
      image: e.NIGHTJAR_BROWSER_IMAGE,
      ...(e.NIGHTJAR_BROWSER_CLOAK_IMAGE ? { cloakImage: e.NIGHTJAR_BROWSER_CLOAK_IMAGE } : {}),
      imagePullPolicy: e.NIGHTJAR_BROWSER_IMAGE_PULL_POLICY,
      podApiPort: e.NIGHTJAR_BROWSER_NODE_PORT,
      ...(e.NIGHTJAR_BROWSER_RESOURCES ? { resources: e.NIGHTJAR_BROWSER_RESOURCES } : {}),
      shmSize: e.NIGHTJAR_BROWSER_SHM_SIZE,
      serviceAccountName: e.NIGHTJAR_BROWSER_SERVICE_ACCOUNT,
      runtimeClassName: e.NIGHTJAR_BROWSER_RUNTIME_CLASS,
      sandbox: e.NIGHTJAR_BROWSER_SANDBOX,
      ...(e.NIGHTJAR_BROWSER_SECCOMP_PROFILE ? { seccompProfile: seccompProfileOf(e.NIGHTJAR_BROWSER_SECCOMP_PROFILE) } : {}),
      priorityClassName: e.NIGHTJAR_BROWSER_PRIORITY_CLASS,
      nodeSelector: e.NIGHTJAR_BROWSER_NODE_SELECTOR,
      tolerations: e.NIGHTJAR_BROWSER_TOLERATIONS,
      affinity: e.NIGHTJAR_BROWSER_AFFINITY,
      topologySpreadConstraints: e.NIGHTJAR_BROWSER_TOPOLOGY_SPREAD,
      imagePullSecrets: (e.NIGHTJAR_BROWSER_IMAGE_PULL_SECRETS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      podLabels: e.NIGHTJAR_BROWSER_POD_LABELS,
      podAnnotations: e.NIGHTJAR_BROWSER_POD_ANNOTATIONS,
      denyCidrs,
      hostAliases: e.NIGHTJAR_HOST_ALIASES,
      tunnelUrl: e.NIGHTJAR_TUNNEL_URL,
      // browser pods trace as the operator does (the standard OTEL_* variables), never with its headers
      ...(tracingRequested(env) && e.NIGHTJAR_BROWSER_TRACING === 'true' ? { tracingEnv: podTracingEnv(env) } : {}),
    },
  }
}

function isCidr(s: string): boolean {
  const [ip, bits, extra] = s.split('/')
  if (extra !== undefined || bits === undefined || !/^\d+$/.test(bits)) return false
  const v = isIP(ip)
  return v !== 0 && Number(bits) <= (v === 4 ? 32 : 128)
}

function seccompProfileOf(value: string): SeccompProfile {
  if (value.startsWith('Localhost:')) return { type: 'Localhost', localhostProfile: value.slice('Localhost:'.length) }
  return { type: value as 'RuntimeDefault' | 'Unconfined' }
}
