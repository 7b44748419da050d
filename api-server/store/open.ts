// Opening the system of record: an external DATABASE_URL or embedded Postgres
// under the data dir, then migrations. Shared by `nightjar start` and the admin CLI.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Config } from '../config.ts'
import { createPool, migrate, type Db } from './db.ts'
import { startEmbeddedPg } from './embedded-pg.ts'

export interface OpenedDatabase {
  db: Db
  url: string
  close(): Promise<void>
}

async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl })
  await c.connect()
  try {
    const r = await c.query('select 1 from pg_database where datname = $1', [name])
    if (!r.rowCount) await c.query(`create database "${name}"`).catch((e) => { if (e.code !== '42P04') throw e })
  } finally {
    await c.end()
  }
  const u = new URL(adminUrl)
  u.pathname = '/' + name
  return u.toString()
}

/**
 * `supervise`: the server owns embedded Postgres (it stops it when the server dies and
 * recovers an orphan); the admin CLI only borrows a running one.
 */
export async function openDatabase(config: Config, progress: (line: string) => void = () => {}, opts: { supervise?: boolean } = {}): Promise<OpenedDatabase> {
  let url = config.databaseUrl
  let stopPg = async () => {}
  if (!url) {
    // 0711: the postgres user that embedded Postgres runs as (when we are root) must
    // traverse the data dir; the secret files inside are 0600 and not listable
    mkdirSync(config.dataDir, { recursive: true })
    chmodSync(config.dataDir, 0o711)
    const pgServer = await startEmbeddedPg({ dir: join(config.dataDir, 'pg'), port: config.pgPort, onProgress: progress, supervise: opts.supervise })
    stopPg = pgServer.stop
    url = await ensureDatabase(pgServer.url, 'nightjar')
  }
  const ran = await migrate(url, progress)
  if (ran.length) progress(`applied migrations: ${ran.join(', ')}`)
  const db = createPool(url, 10, config.db)
  return {
    db,
    url,
    close: async () => {
      await db.end()
      await stopPg()
    },
  }
}

/** The key that signs console cookies: configured, or generated once into the data dir (0600). */
export function loadCookieKey(config: Config): Uint8Array {
  if (config.cookieSecret) return new TextEncoder().encode(config.cookieSecret)
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const file = join(config.dataDir, 'cookie.secret')
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' })
  return new Uint8Array(Buffer.from(readFileSync(file, 'utf8'), 'base64'))
}
