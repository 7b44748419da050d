// In a cluster the operator cannot ask the broker how many daemons a network has, so the
// api-server publishes each network's counts on its Network resource (annotation
// nightjar.dev/daemon-counts) for the reconciler to read into status. Writes are coalesced
// per network, skipped when unchanged, and retried on the next change: counts are advisory
// status, never a gate.
import type { FastifyBaseLogger } from 'fastify'
import type { ResourceClient } from '../../ports/ports.ts'
import { ANNOTATIONS, type DaemonCountsValue, type Network } from '../../crds/types.ts'
import type { DaemonChanges } from './counts.ts'

export interface CountPublisherDeps {
  networks: ResourceClient<Network>
  changes: DaemonChanges
  counts: (networkId: string) => Promise<DaemonCountsValue>
  log: Pick<FastifyBaseLogger, 'warn'>
  /** a full refresh of every network this often, so a missed write heals (default 60 s) */
  refreshMs?: number
}

export class DaemonCountPublisher {
  readonly #published = new Map<string, string>()
  readonly #running = new Map<string, Promise<void>>()
  readonly #again = new Set<string>()
  #unsubscribe?: () => void
  #timer?: NodeJS.Timeout

  private readonly deps: CountPublisherDeps
  constructor(deps: CountPublisherDeps) {
    this.deps = deps
  }

  start(): void {
    this.#unsubscribe = this.deps.changes.subscribe((id) => void this.publish(id))
    this.#timer = setInterval(() => void this.refresh(), this.deps.refreshMs ?? 60_000)
    this.#timer.unref()
  }

  stop(): void {
    this.#unsubscribe?.()
    if (this.#timer) clearInterval(this.#timer)
  }

  /**
   * Publishes one network's counts; concurrent calls coalesce into one more write. Never
   * throws. `known` is the resource as just listed, which spares a read.
   */
  publish(networkId: string, known?: Network): Promise<void> {
    const running = this.#running.get(networkId)
    if (running) {
      this.#again.add(networkId)
      return running
    }
    const run = this.#write(networkId, known).finally(() => {
      this.#running.delete(networkId)
      if (this.#again.delete(networkId)) void this.publish(networkId)
    })
    this.#running.set(networkId, run)
    return run
  }

  async refresh(): Promise<void> {
    try {
      const { items } = await this.deps.networks.list()
      this.#published.clear() // a full refresh rewrites what differs from the resource itself
      await Promise.all(items.map((n) => this.publish(n.metadata.name, n)))
    } catch (err) {
      this.deps.log.warn({ err }, 'daemon counts: listing networks failed; the next refresh retries')
    }
  }

  async #write(networkId: string, known?: Network): Promise<void> {
    try {
      const value = JSON.stringify(await this.deps.counts(networkId))
      if (this.#published.get(networkId) === value) return
      const current = known ?? await this.deps.networks.get(networkId)
      if (!current) return // a network without its resource yet: the resource sync publishes nothing, the next change does
      if (current.metadata.annotations?.[ANNOTATIONS.daemonCounts] !== value) {
        await this.deps.networks.patch(networkId, { metadata: { annotations: { [ANNOTATIONS.daemonCounts]: value } } })
      }
      this.#published.set(networkId, value)
    } catch (err) {
      this.deps.log.warn({ err, network: networkId }, 'daemon counts: publishing to the Network resource failed; the next change or refresh retries')
    }
  }
}
