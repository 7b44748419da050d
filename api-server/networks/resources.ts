// Network resources: the operator's copy of the networks table. The table is the source
// of truth. After every change the network's resource is synced to its row: one network
// at a time, re-reading the row inside the write (so an older write never lands after a
// newer one), retried with backoff. A sync that still fails is logged at error and a
// repair reconcile is scheduled; one also runs at start. So the database and the cluster
// never drift apart silently: a failed write is retried, reported and repaired.
import type { FastifyBaseLogger } from 'fastify'
import type { ResourceClient } from '../../ports/ports.ts'
import { isConflict, isNotFound } from '../../ports/errors.ts'
import { LABELS, type Network, type NetworkSpec } from '../../crds/types.ts'
import type { Queryable } from '../store/db.ts'

export interface NetworkResources {
  /** the network's resource matches its row: created or patched, or deleted when the row is gone. Never throws: a failure is logged and repaired later */
  sync(networkId: string): Promise<void>
  /** every resource matches the table: missing ones created, stale ones patched, orphans deleted; rejects when a write still fails */
  reconcile(): Promise<void>
  /** the start-up reconcile (a write lost by an earlier process is repaired); a failure is logged and a repair scheduled, never thrown */
  start(): Promise<void>
  stop(): void
}

/**
 * A process without a session plane runs no operator: nothing reads Network resources,
 * so there is nothing to keep in step (the table alone is the network).
 */
export const NO_NETWORK_RESOURCES: NetworkResources = {
  sync: async () => {},
  reconcile: async () => {},
  start: async () => {},
  stop: () => {},
}

export interface NetworkResourcesDeps {
  db: Queryable
  networks: ResourceClient<Network>
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>
  /** attempts per sync and the first backoff (doubling); default 4 attempts from 100 ms */
  retry?: { attempts: number; baseMs: number }
  /** the first repair after a failed sync (doubling up to 5 min while it keeps failing); default 5 s */
  repairMs?: number
}

const MAX_REPAIR_MS = 5 * 60_000
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

function specOf(row: { org_id: string; name: string; declared_hosts: string[] }): NetworkSpec {
  return { orgId: row.org_id, name: row.name, declaredHosts: [...row.declared_hosts] }
}

function sameSpec(a: NetworkSpec | undefined, b: NetworkSpec): boolean {
  return !!a && a.orgId === b.orgId && a.name === b.name &&
    a.declaredHosts.length === b.declaredHosts.length && a.declaredHosts.every((h, i) => h === b.declaredHosts[i])
}

/** a resource this server made: named by a network id, carrying the org label */
const ours = (n: Network) => n.metadata.name.startsWith('nnet_') && Boolean(n.metadata.labels?.[LABELS.org])

export class ClusterNetworkResources implements NetworkResources {
  readonly #chains = new Map<string, Promise<void>>()
  readonly #attempts: number
  readonly #baseMs: number
  readonly #repairMs: number
  #repairDelay: number
  #repairTimer: ReturnType<typeof setTimeout> | undefined
  /** syncs that gave up so far: a repair that began before the latest one runs again */
  #failures = 0
  #stopped = false

  private readonly deps: NetworkResourcesDeps
  constructor(deps: NetworkResourcesDeps) {
    this.deps = deps
    this.#attempts = Math.max(1, deps.retry?.attempts ?? 4)
    this.#baseMs = deps.retry?.baseMs ?? 100
    this.#repairMs = deps.repairMs ?? 5000
    this.#repairDelay = this.#repairMs
  }

  async sync(networkId: string): Promise<void> {
    try {
      await this.#serial(networkId, () => this.#retrying(networkId, () => this.#syncOnce(networkId)))
    } catch (err) {
      this.deps.log.error({ err, network: networkId }, 'Network resource write failed after retries; the database keeps the network and a repair reconcile is scheduled')
      this.#failures++
      this.#scheduleRepair()
    }
  }

  async reconcile(): Promise<void> {
    // resources first, then rows: a row is committed before its resource is written, so a
    // resource listed here whose row is absent below really is an orphan
    const resources = (await this.deps.networks.list()).items.filter(ours)
    const rows = (await this.deps.db.query('select id, org_id, name, declared_hosts from networks')).rows
    const want = new Map(rows.map((r) => [r.id as string, specOf(r)]))
    const have = new Map(resources.map((n) => [n.metadata.name, n]))
    const stale = [
      ...[...want].filter(([id, spec]) => !sameSpec(have.get(id)?.spec, spec)).map(([id]) => id),
      ...[...have.keys()].filter((id) => !want.has(id)),
    ]
    const outcomes = await Promise.allSettled(stale.map((id) => this.#serial(id, () => this.#retrying(id, () => this.#syncOnce(id)))))
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')
    if (failed.length) throw new Error(`${failed.length} of ${stale.length} Network resources could not be synced: ${(failed[0].reason as Error)?.message}`, { cause: failed[0].reason })
    if (stale.length) this.deps.log.info({ synced: stale.length }, 'Network resources reconciled with the database')
  }

  async start(): Promise<void> {
    try {
      await this.reconcile()
    } catch (err) {
      this.deps.log.error({ err }, 'Network resources: the start-up reconcile failed; a repair is scheduled')
      this.#failures++
      this.#scheduleRepair()
    }
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#repairTimer)
  }

  async #syncOnce(networkId: string): Promise<void> {
    const { networks } = this.deps
    const r = await this.deps.db.query('select id, org_id, name, declared_hosts from networks where id = $1', [networkId])
    if (!r.rows[0]) {
      try {
        await networks.delete(networkId)
      } catch (e) {
        if (!isNotFound(e)) throw e // absent already: done
      }
      return
    }
    const spec = specOf(r.rows[0])
    const labels = { [LABELS.org]: spec.orgId }
    const current = await networks.get(networkId)
    if (!current) {
      try {
        await networks.create({ metadata: { name: networkId, labels }, spec } as unknown as Network)
        return
      } catch (e) {
        if (!isConflict(e)) throw e // created in between (an earlier attempt whose answer was lost): patch it
      }
    } else if (sameSpec(current.spec, spec) && current.metadata.labels?.[LABELS.org] === spec.orgId) {
      return
    }
    await networks.patch(networkId, { metadata: { labels }, spec })
  }

  async #retrying(networkId: string, write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write()
      } catch (err) {
        if (attempt >= this.#attempts || this.#stopped) throw err
        this.deps.log.warn({ err, network: networkId, attempt }, 'Network resource write failed; retrying')
        await sleep(this.#baseMs * 2 ** (attempt - 1))
      }
    }
  }

  /** one network's writes in order; the caller gets its own write's outcome */
  #serial(networkId: string, write: () => Promise<void>): Promise<void> {
    const prev = this.#chains.get(networkId) ?? Promise.resolve()
    const run = prev.then(write)
    // the chain only orders the next write; this write's error reaches its caller through `run`
    const settled = run.then(() => undefined, () => undefined)
    this.#chains.set(networkId, settled)
    void settled.then(() => {
      if (this.#chains.get(networkId) === settled) this.#chains.delete(networkId)
    })
    return run
  }

  #scheduleRepair(): void {
    if (this.#stopped || this.#repairTimer) return
    this.#repairTimer = setTimeout(() => {
      const failuresBefore = this.#failures
      this.reconcile().then(
        () => {
          this.#repairTimer = undefined
          this.#repairDelay = this.#repairMs
          // a sync that gave up while this pass ran may have missed its listing
          if (this.#failures !== failuresBefore) this.#scheduleRepair()
        },
        (err) => {
          this.#repairTimer = undefined
          this.#repairDelay = Math.min(MAX_REPAIR_MS, this.#repairDelay * 2)
          this.deps.log.error({ err }, 'Network resources: repair reconcile failed; trying again later')
          this.#scheduleRepair()
        },
      )
    }, this.#repairDelay)
    this.#repairTimer.unref()
  }
}
