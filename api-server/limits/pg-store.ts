// The limit counters in Postgres: one row per key, read and written under a row lock in one
// transaction, so every api-server replica counts against the same budget. An expired row
// reads as absent (and is overwritten); expired rows are swept now and then so the table
// holds only live counters.
import { tx, type Db } from '../store/db.ts'
import type { LimitRecord, LimitStore } from './store.ts'

/** Sweep expired rows about once every this many updates (cheap: an indexed range delete). */
const SWEEP_EVERY = 500

export class PgLimitStore implements LimitStore {
  private updates = 0

  private readonly db: Db
  constructor(db: Db) {
    this.db = db
  }

  async update<T>(key: string, now: number, fn: (current: LimitRecord | null) => { next: LimitRecord | null; result: T }): Promise<T> {
    if (++this.updates % SWEEP_EVERY === 0) {
      // best effort: a missed sweep only leaves expired rows for the next one
      await this.db.query('delete from limit_records where expires_at_ms <= $1', [now]).catch(() => undefined)
    }
    return tx(this.db, async (c) => {
      // the row exists before it is locked, so two first hits on one key serialise too
      await c.query(
        `insert into limit_records (key, count, start_ms, until_ms, expires_at_ms) values ($1, 0, 0, 0, 0) on conflict (key) do nothing`,
        [key],
      )
      const r = await c.query('select count, start_ms, until_ms, expires_at_ms from limit_records where key = $1 for update', [key])
      const row = r.rows[0]
      const stored: LimitRecord = { count: row.count, start: Number(row.start_ms), until: Number(row.until_ms), expiresAt: Number(row.expires_at_ms) }
      const current = stored.expiresAt > now ? stored : null
      const { next, result } = fn(current)
      if (next) {
        await c.query('update limit_records set count = $2, start_ms = $3, until_ms = $4, expires_at_ms = $5 where key = $1', [key, next.count, next.start, next.until, next.expiresAt])
      } else {
        await c.query('delete from limit_records where key = $1', [key])
      }
      return result
    })
  }
}
