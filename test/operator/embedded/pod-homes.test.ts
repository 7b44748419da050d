// Browser-pod homes (as root each pod has a uid and a home of its own) are removed when a
// pod ends; a server killed with SIGKILL removes nothing, so the next start sweeps what it
// left — and only that: the homes of a live server beside it and a folder that is not
// Nightjar's stay. Real `nightjar start` processes, real browser pods, one private TMPDIR.
import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createTestDb } from '../../helpers/db.ts'
import { freePort } from '../../helpers/server.ts'
import { waitFor } from '../../helpers/wait.ts'
import { POD_TIMEOUT } from '../helpers.ts'
import { PodUsers } from '../../../operator/embedded/pod-users.ts'

const BIN = fileURLToPath(new URL('../../../bin/nightjar.mjs', import.meta.url))
const root = process.getuid?.() === 0
/** a uid no process runs as (below the pods' range, above any account) */
const IDLE_UID = 1_999_000_000

interface Server {
  pid: number
  /** stdout: the JSON log */
  out(): string
  exited: Promise<void>
}

/** `nightjar start`, resolved once it listens */
async function startServer(env: Record<string, string>, servers: Server[]): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const server = { pid: child.pid!, out: () => out, exited }
  servers.push(server)
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      err += d
      if (err.includes('nightjar: listening on')) resolve()
    })
    void exited.then(() => reject(new Error(`nightjar start exited before listening: ${err.slice(-800)}`)))
  })
  return server
}

/** the uids of a server's browser pods (its children running as another user) */
function podUids(serverPid: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,uid='], { encoding: 'utf8' }).trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number))
  return rows.filter(([, ppid, uid]) => ppid === serverPid && uid !== process.getuid!()).map(([, , uid]) => uid)
}

function runningAs(uids: number[]): boolean {
  const rows = execFileSync('ps', ['-eo', 'uid='], { encoding: 'utf8' }).trim().split('\n').map(Number)
  return rows.some((u) => uids.includes(u))
}

/** folders owned by a pod's uid up to two levels below the homes root: the pod homes */
function homesUnder(dir: string, depth = 2): Array<{ path: string; uid: number }> {
  if (!existsSync(dir)) return []
  const found: Array<{ path: string; uid: number }> = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const st = lstatSync(path)
    if (!st.isDirectory()) continue
    if (st.uid !== 0) found.push({ path, uid: st.uid })
    else if (depth > 1) found.push(...homesUnder(path, depth - 1))
  }
  return found
}

async function setUp(t: Test) {
  const servers: Server[] = []
  // short: Chromium's sockets go under the homes, and a socket path has 107 bytes at most
  const tmp = mkdtempSync(join(tmpdir(), 'nj-'))
  chmodSync(tmp, 0o711) // pods (other uids) pass through to their homes
  // registered first, so it runs before the databases are dropped
  t.teardown(async () => {
    for (const s of servers) {
      try { process.kill(s.pid, 'SIGTERM') } catch { /* gone */ }
      await s.exited
    }
    rmSync(tmp, { recursive: true, force: true, maxRetries: 5 })
  })
  const envFor = async (name: string) => {
    const dataDir = join(tmp, `data-${name}`)
    mkdirSync(dataDir, { mode: 0o711 })
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      TMPDIR: tmp,
      NIGHTJAR_DATA_DIR: dataDir,
      DATABASE_URL: (await createTestDb(t)).url,
      NIGHTJAR_HOST: '127.0.0.1',
      NIGHTJAR_PORT: String(await freePort()),
      NIGHTJAR_WARM_POOL_SIZE: '1',
      NIGHTJAR_LOG_LEVEL: 'info',
    }
  }
  return { servers, homesRoot: join(tmp, 'nightjar-pods'), envFor }
}

t.test('a start after kill -9 sweeps the pod homes the killed server left, and nothing else', async (t) => {
  const { servers, homesRoot, envFor } = await setUp(t)
  if (!root) {
    const s = await startServer(await envFor('a'), servers)
    await waitFor(() => execFileSync('ps', ['-eo', 'ppid='], { encoding: 'utf8' }).split('\n').some((l) => Number(l) === s.pid), { what: 'a pool pod', timeoutMs: POD_TIMEOUT })
    t.same(homesUnder(homesRoot), [], 'not root: pods run as the service, with no home of their own to leave')
    return
  }
  // a second server beside it, on another data dir and database, sharing the homes root
  const beside = await startServer(await envFor('beside'), servers)
  const besideHomes = await waitFor(() => {
    const uids = podUids(beside.pid)
    const homes = homesUnder(homesRoot).filter((h) => uids.includes(h.uid))
    return homes.length ? homes.map((h) => h.path) : null
  }, { what: 'the pool pod of the server beside', timeoutMs: POD_TIMEOUT })

  const envA = await envFor('a')
  const a = await startServer(envA, servers)
  const uidsA = await waitFor(() => {
    const uids = podUids(a.pid)
    return uids.length && homesUnder(homesRoot).some((h) => uids.includes(h.uid)) ? uids : null
  }, { what: 'the pool pod of the server to kill', timeoutMs: POD_TIMEOUT })
  const homesA = homesUnder(homesRoot).filter((h) => uidsA.includes(h.uid)).map((h) => h.path)
  t.ok(besideHomes.every(existsSync), 'a start leaves the live server’s homes alone')

  // a user's own folder in the homes root, owned by a uid that runs nothing, as a pod's home is
  const foreign = join(homesRoot, 'photos')
  mkdirSync(foreign)
  writeFileSync(join(foreign, 'cat.jpg'), 'not Nightjar’s')
  chownSync(foreign, IDLE_UID, IDLE_UID)
  // a home the release before run records left: named as the runtime names homes, no pod runs as it
  const unrecorded = join(homesRoot, 'browser-pod-9-abc123')
  mkdirSync(join(unrecorded, '.cache', 'dconf'), { recursive: true })
  chownSync(unrecorded, IDLE_UID + 1, IDLE_UID + 1)

  process.kill(a.pid, 'SIGKILL') // no shutdown, no exit handlers
  await a.exited
  await waitFor(() => !runningAs(uidsA), { what: 'the killed server’s pods to follow it (stdin EOF)', timeoutMs: POD_TIMEOUT })
  t.same(homesA.filter((h) => !existsSync(h)), [], `the killed server left its ${homesA.length} pod home(s) behind`)

  const again = await startServer(envA, servers)
  t.same(homesA.filter(existsSync), [], 'the restart swept the homes the killed server left')
  t.same(besideHomes.filter((h) => !existsSync(h)), [], 'the live server’s homes beside it are untouched')
  t.ok(existsSync(join(foreign, 'cat.jpg')), 'a folder that is not Nightjar’s is untouched')
  t.notOk(existsSync(unrecorded), 'a home an earlier release left, whose pod is gone, is swept too')
  const swept = again.out().split('\n').filter((l) => l.includes('"swept"')).map((l) => JSON.parse(l) as { swept: number; msg: string })
  t.equal(swept.length, 1, 'one log line says what was swept')
  t.ok(swept[0]?.swept >= homesA.length + 1, `it counts the homes swept: ${swept[0]?.msg}`)
})

t.test('pod homes are only made in a root no other user can write', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-homes-root-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const users = new PodUsers({ dir })
  if (!root) {
    t.equal(users.acquire('pod-a'), undefined, 'not root: pods run as the service, with no home of their own')
    return
  }
  // another user owns the folder: it could swap a home for a link to a file root then chowns
  chownSync(dir, 12345, 12345)
  t.throws(() => users.acquire('pod-a'), /not a folder only root can write/)
  t.same(readdirSync(dir), [], 'no home is made there')
  chownSync(dir, 0, 0)
  chmodSync(dir, 0o777)
  t.throws(() => users.acquire('pod-b'), /not a folder only root can write/, 'nor in one anyone can write')
})
