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
  // a checked-out connection (a transaction, the change feed) answers a stall like the pool
  // does, and remembers it: tx() then discards it instead of trying a rollback that cannot run
  pool.on('connect', (client) => markStalls(client))
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

const STALL = Symbol('nightjar.stalled')
type Marked = pg.ClientBase & { [STALL]?: Error }

/** Wraps one client's promise-form query: a stall becomes the typed 503 and marks the client. */
function markStalls(client: pg.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  client.query = ((...args: unknown[]) => {
    const out = query(...args)
    // callback and submittable (cursor, stream) forms return no promise: they pass through
    if (!(out instanceof Promise)) return out
    return out.catch((err: unknown) => {
      if (!isDatabaseStall(err)) throw err
      ;(client as Marked)[STALL] = err as Error
      throw databaseUnavailable()
    })
  }) as typeof client.query
}

/** runs the migrations not yet run (or the first `count` of them), each once, under node-pg-migrate's advisory lock; their names */
export async function migrate(url: string, log: (msg: string) => void = () => {}, count = Infinity): Promise<string[]> {
  // our own client, ended before we return: node-pg-migrate does not await the end of one it
  // opens, so a caller that drops or closes the database at once (a failed start, a test's
  // teardown) met that half-closed connection's error with no listener, an uncaught exception
  const client = new pg.Client({ connectionString: url })
  client.on('error', (e) => log(`migration connection: ${e.message}`))
  await client.connect()
  try {
    return await runMigrations(client, log, count)
  } finally {
    await client.end()
  }
}

async function runMigrations(client: pg.Client, log: (msg: string) => void, count: number): Promise<string[]> {
  const ran = await runner({
    dbClient: client,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'nightjar_migrations',
    count,
    singleTransaction: true,
    advisoryLockMode: 'wait',
    checkOrder: true,
    log: () => {},
    logger: { debug: () => {}, info: () => {}, warn: (m: string) => log(m), error: (m: string) => log(m) },
  })
  return ran.map((m) => m.name)
}

/**
 * Runs fn in a transaction; rolls back on any throw. The caller gets its error at once:
 * after a stall the connection is discarded without a rollback (the server holds the
 * transaction until it notices the closed socket), otherwise the rollback runs after the
 * throw, and a connection whose rollback fails is discarded rather than pooled.
 */
export async function tx<T>(db: Db, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await db.connect()
  try {
    await c.query('begin')
    const out = await fn(c)
    await c.query('commit')
    c.release()
    return out
  } catch (e) {
    const stalled = (c as Marked)[STALL]
    if (stalled || isDatabaseStall(e)) {
      c.release(stalled ?? (e as Error)) // pg: release(err) destroys the connection
      throw isDatabaseStall(e) ? databaseUnavailable() : e
    }
    c.query('rollback').then(() => c.release(), (err: Error) => c.release(err))
    throw e
  }
}
