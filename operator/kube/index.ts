// The Kubernetes adapters of the operator's ports (DESIGN.md "Two runtimes, one code
// path"): the same reconcilers as the embedded runtime on a real api-server — custom
// objects, Pods and token Secrets, the api-server's PodDirectory and auth-state Secret —
// plus Lease leader election, controller-runtime metrics and a CRD discovery check.
// Design: docs/operator.md
import type { KubeConfig } from '@kubernetes/client-node'
import { BROWSER_SESSION, GROUP, NETWORK, VERSION, type BrowserSession, type Network } from '../../crds/types.ts'
import type { AuthStateSource } from '../../ports/ports.ts'
import { customObjectOps } from './api-ops.ts'
import { AuthStateHandOver } from './auth-state-secrets.ts'
import { KubePodDirectory } from './pod-directory.ts'
import { KubeResourceClient } from './resource-client.ts'

export { KubeResourceClient } from './resource-client.ts'
export { kubeName, ID_ANNOTATION } from './names.ts'
export { KubePodRuntime, sessionPodName, type KubePodRuntimeOptions, type NodeCheckOptions } from './pod-runtime.ts'
export { NodeHealth, type NodeHealthOptions } from './node-health.ts'
export { KubePodDirectory } from './pod-directory.ts'
export { AuthStateHandOver, SecretAuthStateSource, authStateSecretName, type SecretAuthStateSourceOptions } from './auth-state-secrets.ts'
export { LeaderElector, type LeaderElectorOptions } from './leader-election.ts'
export { KubeEventRecorder, type KubeEventRecorderOptions } from './events.ts'
export { PromOperatorMetrics } from './metrics.ts'
export { checkCrdsServed } from './discovery.ts'
export { loadKubeConfig, kubeConfigFor, podNamespace } from './kube-config.ts'
export { browserPodManifest, tokenSecretManifest, type BrowserPodOptions } from './pod-spec.ts'

export interface KubeResourceOptions {
  /** base server-side watch timeout in seconds (default 300) */
  watchTimeoutSeconds?: number
  watchIdleGraceMs?: number
}

/** ResourceClients for the two custom resources in one namespace */
export function kubeResources(kc: KubeConfig, namespace: string, opts: KubeResourceOptions = {}) {
  const client = <T extends BrowserSession | Network>(r: { kind: string; plural: string }) =>
    new KubeResourceClient<T>({ kc, ...opts, mapNames: true, ops: customObjectOps(kc, { group: GROUP, version: VERSION, plural: r.plural, kind: r.kind, namespace }) })
  return {
    sessions: client<BrowserSession>(BROWSER_SESSION),
    networks: client<Network>(NETWORK),
  }
}

/**
 * What the api-server needs on Kubernetes (api-server/sessions/plane.ts's SessionPlane,
 * minus daemon counts): the resource clients it creates/ends sessions and networks with,
 * the PodDirectory it drives browser pods through, and — given the api-server's own
 * AuthStateSource (database + KMS) — the hand-over of a warm-resume session's auth-state to
 * the operator, which has neither. Nothing to stop: the clients hold no connections
 * between calls.
 */
export function kubeSessionPlane(kc: KubeConfig, namespace: string, opts: { authState?: AuthStateSource } = {}) {
  const handOver = opts.authState && new AuthStateHandOver({ kc, namespace, source: opts.authState })
  return {
    ...kubeResources(kc, namespace),
    pods: new KubePodDirectory({ kc, namespace }),
    ...(handOver ? { handOverAuthState: (session: BrowserSession) => handOver.handOver(session) } : {}),
    stop: async () => {},
  }
}
