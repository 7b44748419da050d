// The Network reconciler: mirrors how many daemons are attached to the network (counted
// by the api-server's tunnel broker, behind the DaemonCounts port) into status, with a
// Ready condition that is True while at least one daemon is online. Level-triggered like
// the session controller: the broker's change signal only enqueues the name.
import { NETWORK_CONDITIONS, type Network, type NetworkStatus } from '../../../crds/types.ts'
import { setConditions } from '../../conditions.ts'
import type { DaemonCounts, ObjectReader, ResourceClient } from '../../../ports/ports.ts'
import type { Reconciler } from '../../runtime/controller.ts'
import { compact, writeStatusIfChanged } from '../status-writer.ts'

export interface NetworkReconcilerDeps {
  networks: ResourceClient<Network>
  cache?: ObjectReader<Network>
  daemonCounts: DaemonCounts
  now?: () => number
}

export function networkStatus(network: Network, counts: { daemonCount: number; onlineDaemonCount: number }, now: Date): NetworkStatus {
  const online = counts.onlineDaemonCount
  return compact({
    daemonCount: counts.daemonCount,
    onlineDaemonCount: online,
    conditions: setConditions(
      network.status?.conditions,
      [
        online > 0
          ? { type: NETWORK_CONDITIONS.Ready, status: 'True', reason: 'DaemonOnline', message: `${online} daemon(s) online`, observedGeneration: network.metadata.generation }
          : { type: NETWORK_CONDITIONS.Ready, status: 'False', reason: 'NoDaemonOnline', message: 'no daemon is attached; local reach is closed', observedGeneration: network.metadata.generation },
      ],
      now,
    ),
  })
}

export class NetworkReconciler implements Reconciler {
  private readonly reader: ObjectReader<Network>
  private readonly now: () => Date

  private readonly deps: NetworkReconcilerDeps
  constructor(deps: NetworkReconcilerDeps) {
    this.deps = deps
    this.reader = deps.cache ?? deps.networks
    const clock = deps.now ?? Date.now
    this.now = () => new Date(clock())
  }

  async reconcile(name: string): Promise<void> {
    const network = await this.reader.get(name)
    if (!network || network.metadata.deletionTimestamp) return
    const counts = await this.deps.daemonCounts.counts(name)
    await writeStatusIfChanged(this.deps.networks, network, networkStatus(network, counts, this.now()))
  }
}
