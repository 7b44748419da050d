// The embedded session plane: the operator on the in-process resource store, and
// browser pods as child processes with a warm pool — `npm start` on one machine.
import type { Config } from '../api-server/config.ts'
import type { AuthStateSource, DaemonCounts, Logger } from '../ports/ports.ts'
import { createEmbeddedResources, EmbeddedPodRuntime, startEmbeddedOperator } from '../operator/embedded/index.ts'
import type { SessionPlane } from '../api-server/sessions/plane.ts'
import { PromOperatorMetrics } from '../operator/kube/metrics.ts'

export interface EmbeddedPlane extends SessionPlane {
  pods: EmbeddedPodRuntime
}

export async function startEmbeddedPlane(opts: {
  config: Config
  log: Logger
  authState?: AuthStateSource
  /** daemon counts for the Network reconciler: the app's (PlanePorts), given at start */
  daemonCounts: DaemonCounts
  /** extra environment for every pod (tests) */
  podEnv?: Record<string, string>
}): Promise<EmbeddedPlane> {
  const { config, daemonCounts } = opts
  const resources = createEmbeddedResources()
  const pods = new EmbeddedPodRuntime({
    poolSize: config.warmPoolSize,
    poolMax: config.warmPoolMax,
    poolWindowMs: config.warmPoolWindowMs,
    poolLaunchConcurrency: config.warmPoolLaunchConcurrency,
    env: {
      ...process.env,
      NIGHTJAR_CHROMIUM_PATH: config.chromiumPath,
      NIGHTJAR_BROWSER_SANDBOX: config.browserSandbox,
      ...(config.podUidBase !== undefined ? { NIGHTJAR_POD_UID_BASE: String(config.podUidBase) } : {}),
      NIGHTJAR_HOST_ALIASES: JSON.stringify(config.hostAliases),
      NIGHTJAR_DENY_CIDRS: config.denyCidrs.join(','),
    },
    // pods reach the developer's machine through the api-server's egress relay
    extraEnv: { NIGHTJAR_TUNNEL_URL: `ws://127.0.0.1:${config.port}/ws/egress`, ...opts.podEnv },
    log: opts.log,
  })
  pods.start()
  // the operator's series (controller runtime, warm pool, pod failures) join the api-server's /metrics
  const metrics = new PromOperatorMetrics()
  metrics.watchPool(() => pods.poolStats())
  for (const c of ['browsersession', 'network']) metrics.register(c)
  let operator: Awaited<ReturnType<typeof startEmbeddedOperator>>
  try {
    operator = await startEmbeddedOperator({
      sessions: resources.sessions,
      networks: resources.networks,
      pods,
      daemonCounts,
      authState: opts.authState,
      log: opts.log,
      metrics,
      // a reconcile that claims a warm pod waits on the pod's configure call: with a worker
      // per launch slot, every admitted start is reconciled at once (four made a burst of
      // sixteen warm starts queue behind each other's pod round trips)
      concurrency: config.capacity.startConcurrency,
    })
  } catch (e) {
    // a plane that did not start leaves no browser pod behind
    await pods.shutdown()
    throw e
  }
  return {
    sessions: resources.sessions,
    networks: resources.networks,
    pods,
    registerMetrics: (registry) => {
      for (const { name } of metrics.registry.getMetricsAsArray()) {
        const m = metrics.registry.getSingleMetric(name)
        if (m) registry.registerMetric(m)
      }
    },
    stop: async () => {
      await operator.stop()
      await pods.shutdown()
    },
  }
}
