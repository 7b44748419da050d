// `nightjar start` as a user runs it (embedded Postgres, the embedded operator, no warm
// pods), stopped the way a user stops it: Ctrl-C, which the terminal sends to the whole
// foreground process group. The stop is clean — the replica is deregistered and the pool
// closed before Postgres goes, so the log holds no failure and no warning — and the
// "first time?" hint is printed only while no org exists.
import t from 'tap'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../helpers/server.ts'
import { alive } from '../helpers/process.ts'

const BIN = fileURLToPath(new URL('../../bin/nightjar.mjs', import.meta.url))
const HINT = 'first time? run: npx nightjar admin bootstrap'

t.test('nightjar start: Ctrl-C stops it cleanly, and the first-time hint shows only without an org', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'nightjar-start-'))
  chmodSync(dataDir, 0o711)
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    NIGHTJAR_DATA_DIR: dataDir,
    NIGHTJAR_HOST: '127.0.0.1',
    NIGHTJAR_PORT: String(await freePort()),
    NIGHTJAR_PG_PORT: String(await freePort()),
    NIGHTJAR_WARM_POOL_SIZE: '0',
    NIGHTJAR_WARM_POOL_MAX: '1',
    NIGHTJAR_LOG_LEVEL: 'info',
  }
  const groups: number[] = []
  t.teardown(async () => {
    // a failed run must not leave a server (or its Postgres) behind
    for (const g of groups) try { process.kill(-g, 'SIGKILL') } catch { /* gone */ }
    const pidFile = join(dataDir, 'pg', 'postmaster.pid')
    if (existsSync(pidFile)) {
      const { readFileSync } = await import('node:fs')
      const pm = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
      if (pm > 0 && alive(pm)) process.kill(pm, 'SIGINT')
    }
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** One run: start, wait for "listening", optionally act, then Ctrl-C the process group. */
  const run = async (whileUp: () => Promise<void> = async () => {}) => {
    // its own process group, as a shell gives a foreground job
    const child = spawn(process.execPath, [BIN, 'start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    groups.push(child.pid!)
    let out = ''
    let err = ''
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (err += d))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    await Promise.race([
      new Promise<void>((resolve) => child.stderr!.on('data', () => { if (err.includes('nightjar: listening on')) resolve() })),
      exited.then((code) => { throw new Error(`start exited (${code}) before listening: ${err.slice(-500)}`) }),
    ])
    await whileUp()
    process.kill(-child.pid!, 'SIGINT') // Ctrl-C: the whole foreground group
    const code = await exited
    return { code, out, err }
  }

  const logLines = (out: string) => out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as { level: number; msg: string })

  await t.test('a fresh install: the hint, then a clean stop', async (t) => {
    let bootstrapped = ''
    const r = await run(async () => {
      // (whether to hint was decided before the server listened: this org comes after)
      const admin = spawn(process.execPath, [BIN, 'admin', 'bootstrap', '--org', 'acme', '--email', 'owner@acme.test', '--password', 'correct horse battery'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      admin.stdout!.on('data', (d) => (bootstrapped += d))
      t.equal(await new Promise((resolve) => admin.once('exit', resolve)), 0, 'the admin CLI bootstrapped an org beside the running server')
    })
    t.ok(r.err.includes(HINT), 'no org yet: the first-time hint is printed')
    t.ok(bootstrapped.length > 0)
    t.equal(r.code, 0, 'the server exits 0')
    t.match(r.err, /SIGINT: shutting down/)
    t.notOk(/fail|error|cannot/i.test(r.err), `stderr holds no failure: ${r.err.split('\n').filter((l) => /fail|error|cannot/i.test(l)).join(' / ')}`)
    const lines = logLines(r.out)
    t.ok(lines.length > 0, 'the server logged')
    const bad = lines.filter((l) => l.level >= 40 || /fail/i.test(l.msg))
    t.same(bad.map((l) => l.msg), [], 'no warning, error or failure in the log (replica deregistration included)')
    t.notOk(existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'Postgres stopped with the server')
  })

  await t.test('an org exists: no hint, and a clean stop again', async (t) => {
    const r = await run()
    t.notOk(r.err.includes(HINT), 'the hint is not printed once an org exists')
    t.match(r.err, /nightjar: listening on/)
    t.equal(r.code, 0)
    const bad = logLines(r.out).filter((l) => l.level >= 40 || /fail/i.test(l.msg))
    t.same(bad.map((l) => l.msg), [], 'no warning, error or failure in the log')
    t.notOk(existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'Postgres stopped with the server')
  })
})
