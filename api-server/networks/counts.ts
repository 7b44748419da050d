// Daemon counts for the operator's Network reconciler. The operator starts before
// the local-reach service exists, so it gets this hub and the service plugs in later.
import type { DaemonCounts } from '../../operator/ports.ts'

export class DaemonCountsHub implements DaemonCounts {
  source?: (networkId: string) => Promise<{ daemonCount: number; onlineDaemonCount: number }>
  readonly #listeners = new Set<(networkName: string) => void>()

  counts(networkName: string) {
    return this.source ? this.source(networkName) : Promise.resolve({ daemonCount: 0, onlineDaemonCount: 0 })
  }

  subscribe(listener: (networkName: string) => void) {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  notify(networkName: string): void {
    for (const l of this.#listeners) l(networkName)
  }
}
