// The TypeScript SDK as a project outside the repository uses it: the package built as
// `npm pack` builds it (sdk/package.json's prepack), put into a consumer's node_modules with
// its package.json's files only, compiled by the repository's tsc (strict) with no @types/node
// and no DOM, then run against a running server.
import t from 'tap'
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTestServer } from '../helpers/server.ts'

const SDK = fileURLToPath(new URL('../../sdk/', import.meta.url))
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url))

function run(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { out += d })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out }))
  })
}

const CONSUMER = `import { Nightjar, NightjarError, type OutputOf, type PerceiveOutput } from '@nightjar/sdk'

// what a project without Node's or the DOM's types declares for itself
declare const process: { env: Record<string, string | undefined> }
declare const console: { log(line: string): void }

const nj = new Nightjar({ baseUrl: process.env.NIGHTJAR_URL ?? '', token: process.env.NIGHTJAR_KEY ?? '' })
let s = await nj.sessions.create()
// a loaded machine: the start goes on, and get waits for it
if (s.status === 'pending') s = await nj.sessions.get(s.id, { waitSeconds: 60 })
const nav: OutputOf<'navigate'> = await nj.sessions.navigate(s.id, 'data:text/html,<title>consumer</title><button>Go</button>')
const page: PerceiveOutput = await nj.sessions.perceive(s.id)
const shot = await nj.sessions.screenshot(s.id)
const ended = await nj.sessions.end(s.id)
let error = ''
try {
  await nj.sessions.get('nsess_0000000000000000000000')
} catch (e) {
  if (e instanceof NightjarError) error = e.code + ' ' + e.status
}
console.log(JSON.stringify({ status: s.status, title: nav.title, snapshot: page.snapshot, png: shot.png.length > 0, ended: ended.status, error }))
`

t.test('[ISSUE-50] the SDK package compiles in a project without @types/node and drives a session', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'nightjar-sdk-consumer-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const manifest = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as { name: string; version: string; files: string[]; scripts: { prepack: string } }
  t.equal(manifest.version, JSON.parse(readFileSync(join(SDK, '..', 'package.json'), 'utf8')).version, 'the SDK is versioned with the service')

  // the package: prepack's build, then only what "files" ships
  const build = join(work, 'build')
  const [, ...prepackArgs] = manifest.scripts.prepack.split(' ')
  const built = await run(process.execPath, [TSC, ...prepackArgs, '--outDir', join(build, 'dist')], { cwd: SDK })
  t.equal(built.code, 0, `the SDK builds on its own (lib ES2022, no types): ${built.out}`)
  const pkg = join(work, 'consumer', 'node_modules', ...manifest.name.split('/'))
  mkdirSync(pkg, { recursive: true })
  cpSync(join(SDK, 'package.json'), join(pkg, 'package.json'))
  for (const f of manifest.files) cpSync(join(build, f), join(pkg, f), { recursive: true })

  const consumer = join(work, 'consumer')
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: [], strict: true, rootDir: 'src', outDir: 'out' },
    include: ['src'],
  }))
  mkdirSync(join(consumer, 'src'))
  writeFileSync(join(consumer, 'src', 'main.ts'), CONSUMER)
  const compiled = await run(process.execPath, [TSC, '-p', '.'], { cwd: consumer })
  t.equal(compiled.code, 0, `the consumer compiles (strict): ${compiled.out}`)

  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const ran = await run(process.execPath, [join('out', 'main.js')], { cwd: consumer, env: { NIGHTJAR_URL: s.url, NIGHTJAR_KEY: acme.apiKey } })
  t.equal(ran.code, 0, 'the consumer ran to its end')
  const out = JSON.parse(ran.out)
  t.equal(out.status, 'live', 'sessions.create')
  t.equal(out.title, 'consumer', 'sessions.navigate')
  t.match(out.snapshot, /button "Go" \[ref=e\d+\]/, 'sessions.perceive with no input')
  t.equal(out.png, true, 'sessions.screenshot with no input')
  t.equal(out.ended, 'ended', 'sessions.end')
  t.equal(out.error, 'not_found 404', 'errors are NightjarError with the catalogue code')
})
