// Network changes every replica's daemons must hear (declared hosts, "rejoin now"): applied
// here at once and published with Postgres NOTIFY, which is delivered only after its
// transaction commits; every replica LISTENs on a connection of its own. A replica whose
// LISTEN connection drops re-pushes the declared hosts it holds daemons for on reconnect,
// so a change it missed arrives late, never lost.
import type pg from 'pg'
import type { Db } from '../store/db.ts'
import type { TunnelBroker } from '../tunnel-broker/broker.ts'

export const CHANNEL = 'nightjar_tunnel'

type Change = { kind: 'hosts'; networkId: string } | { kind: 'disconnect'; networkId: string; reason: string }

export interface FanoutDeps {
  db: Db
  broker: Pick<TunnelBroker, 'pushDeclaredHosts' | 'disconnectNetwork' | 'networksHeld'>
  /** this replica: its own notifications are skipped (applied already) */
  replicaId: string
  /** the declared hosts as the database has them now */
  loadDeclaredHosts(networkId: string): Promise<string[]>
  log?(level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>): void
  /** first reconnect delay after the LISTEN connection drops (doubles to 30 s) */
  retryMs?: number
}

export class TunnelFanout {
  private client: pg.PoolClient | undefined
  private stopped = false
  private retry: NodeJS.Timeout | undefined
  private failures = 0

  private readonly deps: FanoutDeps
  constructor(deps: FanoutDeps) {
    this.deps = deps
  }

  /** Listen. Resolves once LISTEN is in place (or throws: the app refuses to start without it). */
  async start(): Promise<void> {
    await this.listen()
  }

  /** A network's declared hosts changed: this replica's daemons now, the others' via NOTIFY. */
  async hostsChanged(networkId: string, hosts: readonly string[]): Promise<void> {
    this.deps.broker.pushDeclaredHosts(networkId, hosts)
    await this.publish({ kind: 'hosts', networkId })
  }

  /** Every daemon of the network must rejoin (and meet the join check again), on every replica. */
  async disconnect(networkId: string, reason: string): Promise<void> {
    this.deps.broker.disconnectNetwork(networkId, reason)
    await this.publish({ kind: 'disconnect', networkId, reason })
  }

  private async publish(change: Change): Promise<void> {
    // no listener is harmed by a lost publish here but a daemon elsewhere keeps old state: say so
    await this.deps.db.query('select pg_notify($1, $2)', [CHANNEL, JSON.stringify({ ...change, from: this.deps.replicaId })]).catch((e: Error) => {
      this.deps.log?.('warn', 'network change not published to the other replicas', { networkId: change.networkId, error: e.message })
    })
  }

  private async listen(): Promise<void> {
    const client = await this.deps.db.connect()
    client.on('notification', (n) => {
      if (n.channel === CHANNEL && n.payload) void this.apply(n.payload)
    })
    client.on('error', (e) => this.lost(client, e))
    client.on('end', () => this.lost(client, new Error('connection ended')))
    await client.query(`LISTEN ${CHANNEL}`)
    this.client = client
  }

  private async apply(payload: string): Promise<void> {
    let change: Change & { from?: string }
    try {
      change = JSON.parse(payload)
    } catch {
      return // not ours: the channel name is shared with nothing, but never crash on it
    }
    if (change.from === this.deps.replicaId || typeof change.networkId !== 'string') return
    try {
      if (change.kind === 'hosts') this.deps.broker.pushDeclaredHosts(change.networkId, await this.deps.loadDeclaredHosts(change.networkId))
      else if (change.kind === 'disconnect') this.deps.broker.disconnectNetwork(change.networkId, String(change.reason ?? 'network changed'))
    } catch (e) {
      this.deps.log?.('warn', 'network change from another replica not applied', { networkId: change.networkId, error: (e as Error).message })
    }
  }

  private lost(client: pg.PoolClient, e: Error): void {
    if (this.client !== client) return
    this.client = undefined
    // a broken connection must not go back to the pool
    client.release(e)
    if (this.stopped) return
    this.deps.log?.('warn', 'lost the replica change feed; reconnecting', { error: e.message })
    this.schedule()
  }

  private schedule(): void {
    const delay = Math.min(30_000, (this.deps.retryMs ?? 500) * 2 ** Math.min(this.failures, 10))
    this.retry = setTimeout(() => void this.reconnect(), delay)
    this.retry.unref()
  }

  private async reconnect(): Promise<void> {
    if (this.stopped) return
    try {
      await this.listen()
    } catch (e) {
      this.failures++
      this.deps.log?.('warn', 'replica change feed: reconnect failed', { error: (e as Error).message })
      return this.schedule()
    }
    this.failures = 0
    this.deps.log?.('info', 'replica change feed back')
    // what was published while we were deaf: re-read the hosts of every network held here
    for (const networkId of this.deps.broker.networksHeld()) {
      try {
        this.deps.broker.pushDeclaredHosts(networkId, await this.deps.loadDeclaredHosts(networkId))
      } catch (e) {
        this.deps.log?.('warn', 'declared hosts not re-read after the change feed came back', { networkId, error: (e as Error).message })
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.retry) clearTimeout(this.retry)
    const c = this.client
    this.client = undefined
    if (!c) return
    await c.query(`UNLISTEN ${CHANNEL}`).catch(() => {
      // the connection is being dropped anyway (release with an error below)
    })
    c.release(true)
  }
}
