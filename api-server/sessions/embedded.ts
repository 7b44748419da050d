// The embedded session plane: the operator on the in-process resource store, and
// browser pods as child processes with a warm pool — `npm start` on one machine.
import type { Config } from '../config.ts'
import type { AuthStateSource, Logger } from '../../operator/ports.ts'
import { DaemonCountsHub } from '../networks/counts.ts'
import { createEmbeddedResources, EmbeddedPodRuntime, startEmbeddedOperator } from '../../operator/embedded/index.ts'
import type { SessionPlane } from './plane.ts'

export interface EmbeddedPlane extends SessionPlane {
  pods: EmbeddedPodRuntime
}

export async function startEmbeddedPlane(opts: {
  config: Config
  log?: Logger
  authState?: AuthStateSource
  /** extra environment for every pod (tests) */
  podEnv?: Record<string, string>
}): Promise<EmbeddedPlane> {
  const { config } = opts
  const resources = createEmbeddedResources()
  const daemonCounts = new DaemonCountsHub()
  const pods = new EmbeddedPodRuntime({
    poolSize: config.warmPoolSize,
    poolMax: config.warmPoolMax,
    poolWindowMs: config.warmPoolWindowMs,
    poolLaunchConcurrency: config.warmPoolLaunchConcurrency,
    env: {
      ...process.env,
      NIGHTJAR_CHROMIUM_PATH: config.chromiumPath,
      NIGHTJAR_HOST_ALIASES: JSON.stringify(config.hostAliases),
      NIGHTJAR_DENY_CIDRS: config.denyCidrs.join(','),
    },
    // pods reach the developer's machine through the api-server's egress relay
    extraEnv: { NIGHTJAR_TUNNEL_URL: `ws://127.0.0.1:${config.port}/ws/egress`, ...opts.podEnv },
    log: opts.log,
  })
  pods.start()
  const operator = await startEmbeddedOperator({
    sessions: resources.sessions,
    networks: resources.networks,
    pods,
    daemonCounts,
    authState: opts.authState,
    log: opts.log,
  })
  return {
    sessions: resources.sessions,
    networks: resources.networks,
    nodes: pods,
    pods,
    daemonCounts,
    stop: async () => {
      await operator.stop()
      await pods.shutdown()
    },
  }
}
