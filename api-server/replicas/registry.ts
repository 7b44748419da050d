// This api-server process as one replica among several: a row in api_replicas with the
// address the others reach it at, refreshed every heartbeat. A replica whose heartbeat is
// older than three intervals is dead: its daemons read offline and no dial is forwarded to
// it. On a graceful stop the row goes at once, so nothing waits out the heartbeat.
import type { Queryable } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'

export interface ReplicaRegistryOptions {
  db: Queryable
  /** where the other replicas reach this one (undefined: forwarded dials are not accepted here) */
  address?: string
  heartbeatMs: number
  log?(level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>): void
}

/** a live replica other than this one, as a forwarded dial needs it */
export interface PeerReplica {
  id: string
  address: string
}

export class ReplicaRegistry {
  /** this process's replica id (a new one per start: a restarted process is a new replica) */
  readonly id = newId('nrep_')
  private timer: NodeJS.Timeout | undefined
  private beating: Promise<void> | undefined

  private readonly opts: ReplicaRegistryOptions
  constructor(opts: ReplicaRegistryOptions) {
    this.opts = opts
  }

  get heartbeatMs(): number {
    return this.opts.heartbeatMs
  }

  /** a replica silent this long is dead (milliseconds) */
  get deadAfterMs(): number {
    return this.opts.heartbeatMs * 3
  }

  /** the SQL interval literal matching deadAfterMs, for queries that join on liveness */
  get deadAfterSql(): string {
    return `${this.deadAfterMs} milliseconds`
  }

  async start(): Promise<void> {
    await this.register()
    this.timer = setInterval(() => {
      // one beat at a time: a stalled database must not pile up queries
      this.beating ??= this.beat().finally(() => (this.beating = undefined))
    }, this.opts.heartbeatMs)
    this.timer.unref()
  }

  private async beat(): Promise<void> {
    try {
      const r = await this.opts.db.query('update api_replicas set heartbeat_at = now() where id = $1', [this.id])
      // swept as dead while the database was away (or by an operator): register again
      if (r.rowCount === 0) await this.register()
      // rows of replicas dead for an hour are forgotten (their daemons already read offline)
      await this.opts.db.query(`delete from api_replicas where heartbeat_at < now() - interval '1 hour'`)
    } catch (e) {
      this.opts.log?.('warn', 'replica heartbeat failed', { error: (e as Error).message })
    }
  }

  private async register(): Promise<void> {
    await this.opts.db.query(
      'insert into api_replicas (id, address) values ($1, $2) on conflict (id) do update set address = excluded.address, heartbeat_at = now()',
      [this.id, this.opts.address ?? null],
    )
  }

  /** the live replica holding the most recently connected online daemon of a network, if it is not this one */
  async ownerOf(networkId: string): Promise<PeerReplica | undefined> {
    const r = await this.opts.db.query(
      `select r.id, r.address from network_daemons d join api_replicas r on r.id = d.replica_id
        where d.network_id = $1 and d.online and r.address is not null
          and r.heartbeat_at > now() - $2::interval
        order by d.connected_since desc limit 1`,
      [networkId, this.deadAfterSql],
    )
    const row = r.rows[0]
    if (!row || row.id === this.id) return undefined
    return { id: row.id, address: row.address }
  }

  /** Stop heartbeating and remove the row: daemons held here read offline at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.beating
    await this.opts.db.query('delete from api_replicas where id = $1', [this.id]).catch((e: Error) => {
      // the row then dies of old age (three heartbeats); stopping must not fail for it
      this.opts.log?.('warn', 'replica deregistration failed', { error: e.message })
    })
  }
}
