// The Postgres pool and migrations. Migrations are plain SQL files run by
// node-pg-migrate under its advisory lock, each once, in file-name order.
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { runner } from 'node-pg-migrate'
import { errors } from '../../contracts/errors.ts'

export type Db = pg.Pool
/** a pool or a client inside a transaction */
export type Queryable = Pick<pg.Pool, 'query'>
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url))

export interface PoolTimeouts {
  /** a query without an answer this long fails (client side: a stalled server cannot enforce statement_timeout) */
  queryTimeoutMs?: number
  /** waiting this long for a connection (a new one, or a free one from the pool) fails */
  connectTimeoutMs?: number
}

/** what a request gets when the database does not answer in time: 503, retry shortly */
export const databaseUnavailable = () => errors.databaseUnavailable()

const STALLED = [/Query read timeout/, /timeout exceeded when trying to connect/, /Connection terminated due to connection timeout/, /ECONNREFUSED/, /Connection terminated unexpectedly/]

/** a failure that means "the database is not there right now" rather than "this query is wrong" */
export function isDatabaseStall(err: unknown): boolean {
  const e = err as { message?: string; code?: string }
  return e?.code === 'ECONNREFUSED' || e?.code === '57P01' || STALLED.some((re) => re.test(e?.message ?? ''))
}

export function createPool(url: string, max = 10, timeouts: PoolTimeouts = {}): Db {
  // idle connections are kept: opening one (fork + SCRAM) costs more than a whole request
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 0,
    ...(timeouts.queryTimeoutMs ? { query_timeout: timeouts.queryTimeoutMs } : {}),
    ...(timeouts.connectTimeoutMs ? { connectionTimeoutMillis: timeouts.connectTimeoutMs } : {}),
  })
  // a dropped idle connection must not crash the process; the pool replaces it
  pool.on('error', () => {})
  if (timeouts.queryTimeoutMs || timeouts.connectTimeoutMs) {
    // every caller sees a stall as one typed 503, never a hang or a 500 with a driver message
    // (pg's own Pool.query calls connect with a callback: that form passes straight through)
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
    pool.query = ((...args: unknown[]) => query(...args).catch((err) => { throw isDatabaseStall(err) ? databaseUnavailable() : err })) as typeof pool.query
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient> | void
    pool.connect = ((...args: unknown[]) => {
      if (typeof args[0] === 'function') return connect(...args)
      return (connect() as Promise<pg.PoolClient>).catch((err) => { throw isDatabaseStall(err) ? databaseUnavailable() : err })
    }) as typeof pool.connect
  }
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
  // a connection whose rollback failed may still hold the transaction: destroy it, never pool it
  let broken: Error | undefined
  try {
    await c.query('begin')
    const out = await fn(c)
    await c.query('commit')
    return out
  } catch (e) {
    await c.query('rollback').catch((err: Error) => (broken = err)) // the caller gets the first error; the pool drops this client
    throw e
  } finally {
    c.release(broken)
  }
}
