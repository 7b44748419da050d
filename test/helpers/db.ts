// A fresh, migrated database per test file inside the run's throwaway cluster
// (scripts/test.mjs starts it and sets NIGHTJAR_TEST_DATABASE_URL).
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { createPool, migrate, type Db } from '../../api-server/store/db.ts'

export function clusterUrl(): string {
  const url = process.env.NIGHTJAR_TEST_DATABASE_URL
  if (!url) throw new Error('NIGHTJAR_TEST_DATABASE_URL is not set: run tests with `npm test` or `node scripts/test.mjs <files>`')
  return url
}

export interface TestDb {
  db: Db
  url: string
  drop(): Promise<void>
}

/** a fresh database migrated whole, or up to `opts.migrations` migrations (an upgrade test starts there) */
export async function createTestDb(t: { teardown(fn: () => unknown): void }, opts: { migrations?: number } = {}): Promise<TestDb> {
  const admin = clusterUrl()
  const name = 't_' + randomBytes(6).toString('hex')
  const c = new pg.Client({ connectionString: admin })
  await c.connect()
  await c.query(`create database ${name}`)
  await c.end()
  const u = new URL(admin)
  u.pathname = '/' + name
  const url = u.toString()
  await migrate(url, undefined, opts.migrations)
  const db = createPool(url, 10)
  let dropped = false
  const drop = async () => {
    if (dropped) return
    dropped = true
    await db.end().catch(() => {})
    const c2 = new pg.Client({ connectionString: admin })
    await c2.connect()
    await c2.query(`drop database if exists ${name} with (force)`).catch(() => {})
    await c2.end()
  }
  t.teardown(drop)
  return { db, url, drop }
}

/** Anything with pg's query: a Pool, a Client. */
export interface Queryable {
  query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }>
}

/**
 * Every row of every table in the public schema, as text: what the canary tests search
 * for a secret "in clear". A bytea value is written as its bytes read as latin1 and as
 * hex, so a secret stored in clear in a binary column is found too (JSON of a Buffer is a
 * list of numbers no search would match).
 */
export async function dumpAllTables(db: Queryable): Promise<string> {
  const tables = await db.query(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`)
  let out = ''
  for (const { table_name } of tables.rows) {
    const rows = await db.query(`select * from "${String(table_name)}"`)
    const text = (v: unknown) => (Buffer.isBuffer(v) ? `${v.toString('latin1')} ${v.toString('hex')}` : v)
    out += `\n## ${String(table_name)}\n` + rows.rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, text(v)])))).join('\n')
  }
  return out
}
