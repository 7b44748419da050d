// Wires the operator from its ports: one informer per resource type, one controller per
// reconciler, and the extra event sources (pod changes, daemon counts) that only enqueue
// names. Runtime-agnostic: the embedded runtime calls it directly; the Kubernetes entry
// calls it with the kube adapters once it holds the leader lease.
import type { BrowserSession, Network } from '../crds/types.ts'
import { BrowserSessionReconciler } from './controllers/browser-session/reconciler.ts'
import { NetworkReconciler } from './controllers/network/reconciler.ts'
import type { AnyResource, AuthStateSource, DaemonCounts, EventRecorder, Logger, PodRuntime, ResourceClient } from '../ports/ports.ts'
import { silentLogger } from '../ports/ports.ts'
import { Controller } from './runtime/controller.ts'
import { Informer, type InformerOptions } from '../watch/informer.ts'
import { noopMetrics, type OperatorMetrics } from './runtime/metrics.ts'

export interface OperatorDeps {
  sessions: ResourceClient<BrowserSession>
  networks: ResourceClient<Network>
  pods: PodRuntime
  daemonCounts: DaemonCounts
  authState?: AuthStateSource
  log?: Logger
  /** Kubernetes Events on sessions (kubectl describe); none by default */
  events?: EventRecorder
  metrics?: OperatorMetrics
  /** parallel reconciles per controller (default 4) */
  concurrency?: number
  /** informer resync period (default 10 min) */
  resyncMs?: number
  /** delete Ended/Failed BrowserSessions this long after they ended (default: keep) */
  sessionRetentionMs?: number
  informer?: Pick<InformerOptions, 'backoff'>
  now?: () => number
}

export interface RunningOperator {
  /** stop informers and controllers, waiting for in-flight reconciles; pods are the caller's */
  stop(): Promise<void>
  /** for tests and status pages */
  readonly controllers: { sessions: Controller; networks: Controller }
  readonly informers: { sessions: Informer<BrowserSession>; networks: Informer<Network> }
}

export async function startOperator(deps: OperatorDeps): Promise<RunningOperator> {
  const log = deps.log ?? silentLogger
  const metrics = deps.metrics ?? noopMetrics
  const informerOpts = { resyncMs: deps.resyncMs, backoff: deps.informer?.backoff, log }

  const sessionInformer = new Informer(deps.sessions, informerOpts)
  const networkInformer = new Informer(deps.networks, informerOpts)

  const sessions = new Controller({
    name: 'browsersession',
    concurrency: deps.concurrency,
    metrics,
    log,
    reconciler: new BrowserSessionReconciler({
      sessions: deps.sessions,
      cache: sessionInformer,
      pods: deps.pods,
      authState: deps.authState,
      now: deps.now,
      log,
      events: deps.events,
      retentionMs: deps.sessionRetentionMs,
      metrics,
    }),
  })
  const networks = new Controller({
    name: 'network',
    concurrency: deps.concurrency,
    metrics,
    log,
    reconciler: new NetworkReconciler({ networks: deps.networks, cache: networkInformer, daemonCounts: deps.daemonCounts, now: deps.now }),
  })

  sessionInformer.addHandler(enqueueAll(sessions))
  networkInformer.addHandler(enqueueAll(networks))
  // pod death must reach the session even though the resource did not change
  const unsubscribePods = deps.pods.subscribe((sessionId) => sessions.enqueue(sessionId))
  const unsubscribeCounts = deps.daemonCounts.subscribe((network) => networks.enqueue(network))

  await Promise.all([sessionInformer.start(), networkInformer.start()])
  sessions.start()
  networks.start()
  // pods without a (live) session — left from before a restart — get reconciled away
  for (const pod of await deps.pods.list()) sessions.enqueue(pod.sessionId)
  log.info({}, 'operator started')

  let stopped: Promise<void> | undefined
  return {
    controllers: { sessions, networks },
    informers: { sessions: sessionInformer, networks: networkInformer },
    stop() {
      stopped ??= (async () => {
        unsubscribePods()
        unsubscribeCounts()
        sessionInformer.stop()
        networkInformer.stop()
        await Promise.all([sessions.stop(), networks.stop()])
        log.info({}, 'operator stopped')
      })()
      return stopped
    },
  }
}

/** every change (incl. our own status writes and resyncs) enqueues the name; reconcile is idempotent */
function enqueueAll<T extends AnyResource>(controller: Controller) {
  const add = (obj: T) => controller.enqueue(obj.metadata.name)
  return { onAdd: add, onUpdate: (_old: T, obj: T) => add(obj), onDelete: add }
}
