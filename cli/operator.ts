// `nightjar operator`: the operator process for a cluster. Every replica serves /healthz,
// /readyz and /metrics; only the leader runs informers, controllers and the pool, and only
// once the CRDs are served. Losing the lease exits (status 1) to restart as a clean
// follower; SIGTERM drains, then releases the lease. The leader also migrates stored
// objects to the storage version (`migrate-storage` does it once). Design: docs/operator.md
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { KubeConfig } from '@kubernetes/client-node'
import pino from 'pino'
import client from 'prom-client'
import { startOperator, type RunningOperator } from '../operator/manager.ts'
import type { AuthStateSource, DaemonCounts, Logger } from '../ports/ports.ts'
import { errors, type ApiError } from '../contracts/errors.ts'
import { loadOperatorConfig, type OperatorConfig } from '../operator/kube/operator-config.ts'
import { annotationDaemonCounts } from '../operator/kube/annotation-counts.ts'
import { migrateStoredVersions } from '../operator/kube/storage-migration.ts'
import { statusOf } from '../operator/kube/errors.ts'
import { startTracing } from '../telemetry/tracing.ts'
import { ConfigError } from '../contracts/config-error.ts'
import { checkCrdsServed, KubeEventRecorder, kubeResources, KubePodRuntime, LeaderElector, loadKubeConfig, NodeHealth, podNamespace, PromOperatorMetrics, SecretAuthStateSource } from '../operator/kube/index.ts'


export interface OperatorProcessOptions {
  env?: NodeJS.ProcessEnv
  kc?: KubeConfig
  log?: Logger
  daemonCounts?: DaemonCounts
  /** default: the auth-state Secrets the api-server writes (the operator has no database or KMS key) */
  authState?: AuthStateSource
  /** how often an unready replica re-checks that the CRDs are served (default 10 s) */
  crdRetryMs?: number
  /** how long the leader waits to retry a storage migration that failed (default 60 s) */
  migrationRetryMs?: number
  /** called when this replica loses the lease; the CLI exits with status 1 */
  onLeadershipLost?: () => void
  now?: () => number
}

export interface OperatorProcess {
  readonly config: OperatorConfig
  /** the probes/metrics port actually bound */
  readonly port: number
  readonly elector: LeaderElector
  readonly metrics: PromOperatorMetrics
  /** the running controllers while this replica leads */
  readonly running: RunningOperator | undefined
  isReady(): boolean
  stop(): Promise<void>
}

/** what the operator process holds while it runs, shared by its steps */
interface OperatorWiring {
  opts: OperatorProcessOptions
  config: OperatorConfig
  log: Logger
  kc: KubeConfig
  metrics: PromOperatorMetrics
  events: KubeEventRecorder
  authState: AuthStateSource
  resources: ReturnType<typeof kubeResources>
  state: {
    running?: RunningOperator
    /** the leader's pod runtime */
    pods?: KubePodRuntime
    crdsOk: boolean
    crdProblems: string[]
    stopping: boolean
    crdTimer?: NodeJS.Timeout
    migrationTimer?: NodeJS.Timeout
  }
}

export async function runOperator(opts: OperatorProcessOptions = {}): Promise<OperatorProcess> {
  const env = opts.env ?? process.env
  const config = loadOperatorConfig(env, podNamespace(env))
  const log = opts.log ?? operatorLogger(config)
  // spans of the reconciles of starting sessions, exported when an OTLP endpoint is configured
  const tracing = await startTracing('nightjar-operator', env).catch((e: Error) => { throw new ConfigError(`invalid configuration: ${e.message}`) })
  const kc = opts.kc ?? loadKubeConfig()
  const w: OperatorWiring = {
    opts,
    config,
    log,
    kc,
    metrics: new PromOperatorMetrics(),
    events: new KubeEventRecorder({ kc, instance: config.identity, log }),
    // warm resume: the api-server opens the version and hands it over in a Secret; one that is
    // still on its way is waited for as long as a pod may take to start
    authState: opts.authState ?? new SecretAuthStateSource({ kc, namespace: config.watchNamespace, waitMs: config.startTimeoutMs, now: opts.now }),
    resources: kubeResources(kc, config.watchNamespace, { watchTimeoutSeconds: config.watchTimeoutSeconds }),
    state: { crdsOk: false, crdProblems: ['checking the CRDs'], stopping: false },
  }
  setUpMetrics(w)
  const elector = leaderElector(w)
  const { state } = w
  // Ready = this replica can do its job: CRDs are served, and a leader's informers have
  // synced. A follower is ready too (it is a hot standby), so a rollout is not blocked.
  const isReady = () => !state.stopping && state.crdsOk && (!elector.isLeader || state.running !== undefined)
  const server = probeServer(w, elector, isReady)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  log.info({ port, namespace: config.watchNamespace }, 'operator probes listening')
  void checkCrds(w, elector)

  let stopped: Promise<void> | undefined
  return {
    config,
    port,
    elector,
    metrics: w.metrics,
    get running() {
      return state.running
    },
    isReady,
    stop() {
      stopped ??= (async () => {
        state.stopping = true
        if (state.crdTimer) clearTimeout(state.crdTimer)
        if (state.migrationTimer) clearTimeout(state.migrationTimer)
        await stopControllers(w)
        await elector.stop({ release: true })
        server.closeAllConnections()
        await new Promise<void>((r) => server.close(() => r()))
        await tracing.flush().catch(() => {}) // the last spans go out; a collector that is down costs nothing more
        log.info({}, 'operator stopped')
      })()
      return stopped
    },
  }
}

function operatorLogger(config: OperatorConfig): Logger {
  return pino({
    level: config.logLevel,
    base: { component: 'operator', replica: config.identity },
    // belt and braces: nothing here logs a token, and nothing ever should
    redact: { paths: ['token', '*.token', 'authorization', '*.authorization', 'storageState', '*.storageState'], censor: '[redacted]' },
  })
}

function setUpMetrics({ metrics, config, state }: OperatorWiring): void {
  client.collectDefaultMetrics({ register: metrics.registry })
  for (const c of ['browsersession', 'network']) metrics.register(c)
  metrics.setLeader(config.leaseName, false)
  // the warm pool is the leader's: a follower reports none
  metrics.watchPool(() => state.pods?.poolStats())
}

async function stopControllers({ state }: OperatorWiring): Promise<void> {
  const r = state.running
  state.running = undefined
  await r?.stop()
  state.pods?.stop()
  state.pods = undefined
}

function leaderElector(w: OperatorWiring): LeaderElector {
  const { config, log, metrics, opts, state } = w
  const elector: LeaderElector = new LeaderElector({
    kc: w.kc,
    namespace: config.leaseNamespace,
    name: config.leaseName,
    identity: config.identity,
    leaseDurationMs: config.leaseDurationMs,
    renewDeadlineMs: config.renewDeadlineMs,
    retryPeriodMs: config.retryPeriodMs,
    now: opts.now,
    log,
    onNewLeader: (who) => log.info({ leader: who }, 'leader observed'),
    onStartedLeading: async () => {
      metrics.setLeader(config.leaseName, true)
      // leadership can end while the controllers are still starting: never leave them running then
      await lead(w, () => elector.isLeader && !state.stopping)
    },
    onStoppedLeading: () => {
      metrics.setLeader(config.leaseName, false)
      if (state.stopping) return
      log.error({ lease: config.leaseName }, 'leadership lost; stopping')
      void stopControllers(w).finally(() => opts.onLeadershipLost?.())
    },
  })
  return elector
}

/** the leader's work: the pod runtime, the controllers, then the storage migration */
async function lead(w: OperatorWiring, stillLeading: () => boolean): Promise<void> {
  const { config, opts, state } = w
  const runtime = podRuntime(w)
  state.pods = runtime
  await runtime.start()
  if (!stillLeading() || state.pods !== runtime) return runtime.stop()
  const started = await startOperator({
    ...w.resources,
    pods: runtime,
    // the api-server publishes each Network's daemon counts on it (an annotation)
    daemonCounts: opts.daemonCounts ?? annotationDaemonCounts(w.resources.networks),
    authState: w.authState,
    log: w.log,
    events: w.events,
    metrics: w.metrics,
    concurrency: config.concurrency,
    resyncMs: config.resyncMs,
    sessionRetentionMs: config.sessionRetentionMs,
    now: opts.now,
  })
  if (!stillLeading() || state.pods !== runtime) {
    await started.stop()
    return runtime.stop()
  }
  state.running = started
  void migrateStorage(w, stillLeading)
}

function podRuntime({ kc, config, log, opts, events }: OperatorWiring): KubePodRuntime {
  const ownPod = config.ownPod && { apiVersion: 'v1', kind: 'Pod', ...config.ownPod }
  return new KubePodRuntime({
    kc,
    namespace: config.watchNamespace,
    pod: config.browser,
    poolSize: config.poolSize,
    startTimeoutMs: config.startTimeoutMs,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    log,
    now: opts.now,
    events,
    poolEventSubject: ownPod,
    // NodeLost / NodeDrained (docs/nodes.md); off, node trouble surfaces only as Kubernetes deletes the pods
    ...(config.nodes
      ? {
          nodes: new NodeHealth({ kc, suspectAfterMs: config.nodes.suspectAfterMs, watchTimeoutSeconds: config.watchTimeoutSeconds, log, now: opts.now }),
          nodeChecks: { unreachableMs: config.nodes.unreachableMs, drainGraceMs: config.nodes.drainGraceMs },
        }
      : {}),
  })
}

// objects stored as an older version are rewritten at the storage version, then the CRD's
// storedVersions trimmed; without the cluster-wide permission (crds.install=false) that
// is the administrator's one-shot, said once at info level
async function migrateStorage(w: OperatorWiring, stillLeading: () => boolean): Promise<void> {
  const { log } = w
  if (!stillLeading()) return
  try {
    for (const r of await migrateStoredVersions(w.kc)) {
      if (r.rewritten || !r.migrated) log.info(r, r.migrated ? 'stored objects migrated to the storage version' : 'storage migration incomplete')
    }
  } catch (err) {
    const status = statusOf(err)
    if (status?.code === 403) {
      log.info({ reason: status.message }, 'storage migration not permitted here: run `nightjar operator migrate-storage` as an administrator after upgrades (docs/upgrades.md)')
      return
    }
    log.warn({ err: status ? `HTTP ${status.code} ${status.reason}` : String(err) }, 'storage migration failed; retrying')
    w.state.migrationTimer = setTimeout(() => void migrateStorage(w, stillLeading), w.opts.migrationRetryMs ?? 60_000)
  }
}

async function checkCrds(w: OperatorWiring, elector: LeaderElector): Promise<void> {
  const { config, log, state } = w
  if (state.stopping) return
  const result = await checkCrdsServed(w.kc).catch((err) => ({ ok: false, problems: [String(err)] }))
  state.crdProblems = result.problems
  if (result.ok) {
    state.crdsOk = true
    log.info({ namespace: config.watchNamespace, lease: `${config.leaseNamespace}/${config.leaseName}` }, 'CRDs served; campaigning for leadership')
    elector.start()
    return
  }
  log.warn({ problems: result.problems }, 'not ready: CRDs missing')
  state.crdTimer = setTimeout(() => void checkCrds(w, elector), w.opts.crdRetryMs ?? 10_000)
}

/** /healthz, /readyz and /metrics, on every replica */
function probeServer({ metrics, state }: OperatorWiring, elector: LeaderElector, isReady: () => boolean): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    const send = (status: number, body: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type })
      res.end(typeof body === 'string' ? body : JSON.stringify(body))
    }
    const refuse = (e: ApiError) => {
      for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v)
      send(e.status, e.toBody())
    }
    if (req.method !== 'GET') return refuse(errors.methodNotAllowed('GET').withHeaders({ allow: 'GET' }))
    if (path === '/healthz') return send(200, { ok: true })
    if (path === '/readyz') {
      if (isReady()) return send(200, { ok: true, leader: elector.isLeader })
      // eslint-disable-next-line no-restricted-syntax -- the operator's readiness probe answer, not an error body
      return send(503, { ok: false, reasons: state.stopping ? ['shutting down'] : state.crdsOk ? ['leader starting'] : state.crdProblems })
    }
    if (path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => send(200, text, metrics.registry.contentType),
        () => refuse(errors.internal()),
      )
      return
    }
    refuse(errors.noSuchRoute())
  })
}

/** the CLI entry: runs until SIGTERM/SIGINT */
export async function operator(argv: string[]): Promise<number> {
  if (argv[0] === 'migrate-storage') return migrateStorageOnce()
  if (argv.length) {
    process.stderr.write(`nightjar operator: unknown argument: ${argv[0]} (usage: nightjar operator [migrate-storage])\n`)
    return 2
  }
  const proc = await runOperator({ onLeadershipLost: () => process.exit(1) })
  const shutdown = (signal: string) => {
    process.stderr.write(`nightjar operator: ${signal}: shutting down\n`)
    // a stuck shutdown must not outlive the pod's termination grace period
    setTimeout(() => process.exit(1), 25_000).unref()
    void proc.stop().then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGTERM', () => shutdown('SIGTERM'))
  process.once('SIGINT', () => shutdown('SIGINT'))
  return -1
}

/** `nightjar operator migrate-storage`: the leader's migration, once, with the caller's kubeconfig */
async function migrateStorageOnce(): Promise<number> {
  const results = await migrateStoredVersions(loadKubeConfig())
  for (const r of results) {
    process.stdout.write(`${r.crd}: ${r.migrated ? `stored as ${r.storageVersion} only` : `not yet migrated (stored versions ${r.storedVersions.join(', ')})`}; ${r.rewritten} objects rewritten\n`)
  }
  return results.every((r) => r.migrated) ? 0 : 1
}
