// Daemon counts for the operator's Network reconciler, and the daemons listing: a network's
// daemons are its registry rows. Whether one is reachable right now is this replica's
// broker's word for the daemons it holds, and the registry's (online, on a replica that
// still heartbeats) for the daemons other replicas hold.
// Built from the database and the broker, both of which exist before the session plane
// starts, so the operator is handed the whole thing at start (nothing is plugged in later).
import type { DaemonCounts } from '../../ports/ports.ts'
import type { Queryable } from '../store/db.ts'
import type { TunnelBroker } from '../tunnel-broker/broker.ts'
import type { ReplicaRegistry } from '../replicas/registry.ts'
import { daemonRows } from './store.ts'

export interface DaemonTally {
  daemonCount: number
  onlineDaemonCount: number
}

/** What counting needs: the registry rows, the broker's live view and which replica this is. */
export interface CountDeps {
  db: Queryable
  broker: Pick<TunnelBroker, 'listDaemons'>
  replica: Pick<ReplicaRegistry, 'id' | 'deadAfterSql'>
}

export interface DaemonState {
  id: string
  host: string
  version: string
  connectedSince: string
  reachable: boolean
}

/** Every daemon of a network, each reachable or not, whichever replica holds it. */
export async function daemonStates(deps: CountDeps, networkId: string): Promise<DaemonState[]> {
  const rows = await daemonRows(deps.db, networkId, deps.replica.deadAfterSql)
  const here = new Map(deps.broker.listDaemons(networkId).map((d) => [d.id, d]))
  return rows.map((row) => {
    const local = row.replicaId === deps.replica.id ? here.get(row.id) : undefined
    return {
      id: row.id,
      host: row.host,
      version: row.version,
      connectedSince: local?.connectedSince ?? row.connectedSince,
      reachable: row.replicaId === deps.replica.id ? (local?.reachable ?? false) : row.live,
    }
  })
}

export async function countDaemons(deps: CountDeps, input: { networkId: string }): Promise<DaemonTally> {
  const states = await daemonStates(deps, input.networkId)
  return { daemonCount: states.length, onlineDaemonCount: states.filter((d) => d.reachable).length }
}

/**
 * Networks whose counts may have changed. The broker's registry hooks publish (a daemon
 * registered or left); the operator subscribes and re-reads the counts. It depends on
 * nothing, so it is built first and handed to both sides.
 */
export class DaemonChanges {
  readonly #listeners = new Set<(networkId: string) => void>()

  subscribe(listener: (networkId: string) => void): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  notify(networkId: string): void {
    for (const l of this.#listeners) l(networkId)
  }
}

/** The operator's DaemonCounts port (a Network resource is named by its network id). */
export function daemonCounts(deps: CountDeps & { changes: DaemonChanges }): DaemonCounts {
  return {
    counts: (networkName) => countDaemons(deps, { networkId: networkName }),
    subscribe: (listener) => deps.changes.subscribe(listener),
  }
}
