// Daemon counts for the operator's Network reconciler: a network's daemons are its
// registry rows, the online ones those the tunnel broker holds reachable right now.
// Built from the database and the broker, both of which exist before the session plane
// starts, so the operator is handed the whole thing at start (nothing is plugged in later).
import type { DaemonCounts } from '../../operator/ports.ts'
import type { Queryable } from '../store/db.ts'
import type { TunnelBroker } from '../control/broker.ts'
import { daemonRows } from './store.ts'

export interface DaemonTally {
  daemonCount: number
  onlineDaemonCount: number
}

/** What counting needs: the registry rows and the broker's live view. */
export interface CountDeps {
  db: Queryable
  broker: Pick<TunnelBroker, 'listDaemons'>
}

export async function countDaemons(deps: CountDeps, input: { networkId: string }): Promise<DaemonTally> {
  const rows = await daemonRows(deps.db, input.networkId)
  const online = deps.broker.listDaemons(input.networkId).filter((d) => d.reachable).length
  return { daemonCount: rows.length, onlineDaemonCount: online }
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
