// Embedded Postgres under the real `nightjar start`: a taken port gives one clear line,
// Postgres does not outlive a server killed with SIGKILL, and an orphan left running is
// restarted cleanly by the next start.
import t from 'tap'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive } from '../../helpers/process.ts'
import { freePort } from '../../helpers/server.ts'
import { waitFor } from '../../helpers/wait.ts'

const ROOT = new URL('../../../', import.meta.url).pathname

interface Started {
  proc: ChildProcess
  output(): string
  exited: Promise<number | null>
}

function nightjarStart(env: Record<string, string>): Started {
  const proc = spawn(process.execPath, ['bin/nightjar.mjs', 'start'], {
    cwd: ROOT,
    env: { ...process.env, NIGHTJAR_LOG_LEVEL: 'warn', NIGHTJAR_WARM_POOL_SIZE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)))
  return { proc, output: () => out, exited }
}

async function dataDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-pgsup-'))
  chmodSync(dir, 0o711)
  t.teardown(() => {
    // a postmaster a failed assertion left behind must not outlive the test
    const pidFile = join(dir, 'pg', 'postmaster.pid')
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGINT')
    }
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

const postmasterPid = (dir: string) => Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0])

t.test('a second start on a taken Postgres port says so in one line naming NIGHTJAR_PG_PORT', async (t) => {
  const holder = createServer().listen(0, '127.0.0.1')
  await new Promise((r) => holder.once('listening', r))
  t.teardown(() => holder.close())
  const taken = (holder.address() as { port: number }).port
  const dir = await dataDir(t)
  const s = nightjarStart({ NIGHTJAR_DATA_DIR: dir, NIGHTJAR_PG_PORT: String(taken), NIGHTJAR_PORT: String(await freePort()) })
  t.equal(await s.exited, 1, 'exits 1')
  const lines = s.output().trim().split('\n')
  t.match(lines[lines.length - 1], /NIGHTJAR_PG_PORT: port \d+ on 127\.0\.0\.1 is taken by another process; set NIGHTJAR_PG_PORT to a free port/)
  t.notMatch(s.output(), /triggerUncaughtException|at .*\.ts:\d+/, 'no stack trace')
  t.notOk(existsSync(join(dir, 'pg', 'PG_VERSION')), 'nothing was initialised')
})

t.test('kill -9 of the server: embedded Postgres does not outlive it, and an orphan is restarted cleanly by the next start', async (t) => {
  const dir = await dataDir(t)
  const env = { NIGHTJAR_DATA_DIR: dir, NIGHTJAR_PG_PORT: String(await freePort()), NIGHTJAR_PORT: String(await freePort()) }
  const first = nightjarStart(env)
  await waitFor(() => /listening on/.test(first.output()), { what: 'the server listening', timeoutMs: 90_000, intervalMs: 100 })
  const pm = postmasterPid(dir)
  t.ok(alive(pm), 'Postgres runs under the server')
  first.proc.kill('SIGKILL')
  await first.exited
  await waitFor(() => !alive(pm), { what: 'Postgres stopping after its server died', timeoutMs: 30_000, intervalMs: 100 })
  t.pass('Postgres stopped on its own once the server was gone')

  // an orphan the watchdog could not catch: the watchdog dies with the server (a kill of
  // the whole process group), leaving Postgres running
  const second = nightjarStart(env)
  await waitFor(() => /listening on/.test(second.output()), { what: 'the server listening again', timeoutMs: 90_000, intervalMs: 100 })
  const pm2 = postmasterPid(dir)
  const watchdogs = execFileSync('pgrep', ['-f', ` ${second.proc.pid} ${pm2}$`], { encoding: 'utf8' }).trim().split('\n').map(Number)
  t.equal(watchdogs.length, 1, 'one watchdog watches the server and its Postgres')
  for (const w of watchdogs) process.kill(w, 'SIGKILL')
  second.proc.kill('SIGKILL')
  await second.exited
  t.ok(alive(pm2), 'with its watchdog gone too, Postgres is an orphan')

  const third = nightjarStart(env)
  await waitFor(() => /listening on/.test(third.output()), { what: 'the third server listening', timeoutMs: 90_000, intervalMs: 100 })
  t.match(third.output(), /was left running by a server that is gone; restarting it cleanly/, 'the orphan is named')
  t.notOk(alive(pm2), 'the orphan was stopped')
  t.ok(alive(postmasterPid(dir)), 'a fresh Postgres runs under the new server')
  const ready = await fetch(`http://127.0.0.1:${env.NIGHTJAR_PORT}/readyz`)
  t.equal(ready.status, 200, 'and the server is ready on it')
  third.proc.kill('SIGTERM')
  t.equal(await third.exited, 0, 'a clean stop')
  t.notOk(existsSync(join(dir, 'server.pid')), 'the server lock is removed on a clean stop')
})
