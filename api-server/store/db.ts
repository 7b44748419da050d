// The Postgres pool and migrations. Migrations are plain SQL files run by
// node-pg-migrate under its advisory lock, each once, in file-name order.
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { runner } from 'node-pg-migrate'

export type Db = pg.Pool
/** a pool or a client inside a transaction */
export type Queryable = Pick<pg.Pool, 'query'>
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url))

export function createPool(url: string, max = 10): Db {
  // idle connections are kept: opening one (fork + SCRAM) costs more than a whole request
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 0 })
  // a dropped idle connection must not crash the process; the pool replaces it
  pool.on('error', () => {})
  return pool
}

export async function migrate(url: string, log: (msg: string) => void = () => {}): Promise<string[]> {
  const ran = await runner({
    databaseUrl: url,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'nightjar_migrations',
    count: Infinity,
    singleTransaction: true,
    advisoryLockMode: 'wait',
    checkOrder: true,
    log: () => {},
    logger: { debug: () => {}, info: () => {}, warn: (m: string) => log(m), error: (m: string) => log(m) },
  })
  return ran.map((m) => m.name)
}

/** Runs fn in a transaction; rolls back on any throw. */
export async function tx<T>(db: Db, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await db.connect()
  try {
    await c.query('begin')
    const out = await fn(c)
    await c.query('commit')
    return out
  } catch (e) {
    await c.query('rollback').catch(() => {})
    throw e
  } finally {
    c.release()
  }
}
