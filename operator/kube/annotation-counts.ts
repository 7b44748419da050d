// The operator's DaemonCounts in a cluster: the api-server (which holds the daemons'
// WebSockets) publishes each Network's counts as an annotation on it
// (api-server/networks/count-publisher.ts); this reads them back. A change of the
// annotation is a change of the Network, which its informer already enqueues, so there is
// nothing to subscribe to.
import { ANNOTATIONS, parseDaemonCounts, type Network } from '../../crds/types.ts'
import type { DaemonCounts, ResourceClient } from '../../ports/ports.ts'

export function annotationDaemonCounts(networks: Pick<ResourceClient<Network>, 'get'>): DaemonCounts {
  return {
    // an absent Network (or annotation) reads as zero daemons
    counts: async (name) => parseDaemonCounts((await networks.get(name))?.metadata.annotations?.[ANNOTATIONS.daemonCounts]),
    subscribe: () => () => {},
  }
}
