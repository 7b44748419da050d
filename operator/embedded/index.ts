// The embedded runtime: the operator on the in-process resource store and child-process
// browser pods, for `npm start` on one machine. The api-server shares the same store
// objects (it creates/patches resources and watches them) and the same pod runtime (as
// its PodDirectory for endpoint + token).
import { API_VERSION, BROWSER_SESSION, NETWORK, type BrowserSession, type Network } from '../../crds/types.ts'
import { startOperator, type OperatorDeps, type RunningOperator } from '../manager.ts'
import { ResourceStore, ResourceVersionClock } from './resource-store.ts'

export { ResourceStore, ResourceVersionClock } from './resource-store.ts'
export { EmbeddedPodRuntime, defaultPodCommand, type EmbeddedPodRuntimeOptions } from './pod-runtime.ts'

export interface EmbeddedResources {
  sessions: ResourceStore<BrowserSession>
  networks: ResourceStore<Network>
}

export function createEmbeddedResources(opts: { namespace?: string; historyLimit?: number } = {}): EmbeddedResources {
  // one revision counter for both types, as etcd has
  const clock = new ResourceVersionClock()
  const common = { namespace: opts.namespace ?? 'nightjar', historyLimit: opts.historyLimit, clock }
  return {
    sessions: new ResourceStore<BrowserSession>({ ...common, apiVersion: API_VERSION, kind: BROWSER_SESSION.kind }),
    networks: new ResourceStore<Network>({ ...common, apiVersion: API_VERSION, kind: NETWORK.kind }),
  }
}

export type EmbeddedOperatorOptions = OperatorDeps

/** The same operator the cluster runs, minus leader election (one process, one leader). */
export function startEmbeddedOperator(opts: EmbeddedOperatorOptions): Promise<RunningOperator> {
  return startOperator(opts)
}
