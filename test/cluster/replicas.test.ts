// Three api-server replicas on the real control plane, behind the test node's round-robin
// Service proxy: the daemon joins through the Service, browser pods dial their egress
// through the Service too, and sessions are started through each replica's own address.
// Then the daemon's replica is killed, a declared-hosts change is made on another replica,
// and every replica is restarted one at a time — with the same sessions and local reach
// working at the end.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createNamespace, waitForLine } from '../helpers/netns.ts'
import { freePort } from '../helpers/server.ts'
import { waitFor } from '../helpers/wait.ts'
import { createTestDb, installNightjar, kubectl, kubectlJson, podDatabaseUrl, rolledOut, ROOT } from './helpers.ts'
import { spawnSync } from 'node:child_process'

const DEV_APP = String.raw`
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<title>dev app ' + process.env.PORT + '</title>')
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'))`

/** SIGKILL every process in the network namespace that holds `podIp`: a crash, not a stop */
function killPod(podIp: string): number {
  const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((l) => l.split(' ')[0]).filter(Boolean)
  for (const ns of namespaces) {
    let addrs = ''
    try { addrs = execFileSync('ip', ['-n', ns, '-4', '-o', 'addr', 'show'], { encoding: 'utf8' }) } catch { continue }
    if (!addrs.includes(` ${podIp}/`)) continue
    const pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number)
    for (const pid of pids) try { process.kill(pid, 'SIGKILL') } catch { /* gone already */ }
    return pids.length
  }
  throw new Error(`no namespace holds ${podIp}`)
}

t.test('three api-server replicas on a real control plane: tunnel owner routing, a killed owner, a rolling restart', async (t) => {
  const db = await createTestDb(t)
  const install = await installNightjar(t, {
    databaseUrl: await podDatabaseUrl(t, db.url),
    values: {
      apiServer: { replicas: 3, replicaHeartbeatSeconds: 1, shutdownDrainSeconds: 5 },
      browserPods: { warmPoolSize: 1 },
    },
  })
  const ns = install.namespace
  const boot = spawnSync(process.execPath, ['bin/nightjar.mjs', 'admin', 'bootstrap', '--org', 'acme', '--email', 'owner@acme.test', '--json'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, DATABASE_URL: db.url, NIGHTJAR_LOG_LEVEL: 'silent' } })
  if (boot.status !== 0) throw new Error(`bootstrap: ${boot.stderr}`)
  const owner = JSON.parse(boot.stdout) as { apiKey: string }
  const sql = new pg.Pool({ connectionString: db.url, max: 2 })
  t.teardown(() => sql.end())
  // starts wait for their pod (Prefer: wait, RFC 7240): a pod on this control plane takes longer
  // than the 5 s in which a start otherwise answers 202 pending; other routes ignore it
  const call = async (base: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${owner.apiKey}`, prefer: 'wait=90', connection: 'close', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const text = await r.text()
    return { status: r.status, text, body: text ? JSON.parse(text) : undefined }
  }
  const api = (method: string, path: string, body?: unknown) => call(install.apiUrl, method, path, body)
  const replicaUrls = async () => {
    const pods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server'])).items
    return pods.filter((p: any) => !p.metadata.deletionTimestamp && p.status.podIP && p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')).map((p: any) => `http://${p.status.podIP}:8080`) as string[]
  }
  /** the replica (its address) holding the network's daemon now, from the registry */
  const ownerOf = async (netId: string) => (await sql.query(
    `select r.id, r.address from network_daemons d join api_replicas r on r.id = d.replica_id where d.network_id = $1 and d.online and r.heartbeat_at > now() - interval '3 seconds'`, [netId],
  )).rows[0] as { id: string; address: string } | undefined

  const urls = await replicaUrls()
  t.equal(urls.length, 3, 'three api-server replicas are ready')
  t.equal((await sql.query('select count(*)::int as n from api_replicas')).rows[0].n, 3, 'each registered itself')

  const created = await api('POST', '/v1/networks', { name: 'dev' })
  t.equal(created.status, 201, created.text)
  const netId = created.body.network.id as string
  const dev = await createNamespace(t)
  execFileSync('ip', ['-n', dev.ns, 'route', 'add', 'default', 'via', dev.hostIp])
  const appPort = await freePort()
  const otherPort = await freePort()
  await waitForLine(dev.spawn(process.execPath, ['-e', DEV_APP], { PORT: String(appPort) }), 'ready', 15_000)
  await waitForLine(dev.spawn(process.execPath, ['-e', DEV_APP], { PORT: String(otherPort) }), 'ready', 15_000)
  t.equal((await api('PATCH', `/v1/networks/${netId}`, { declaredHosts: [`localhost:${appPort}`] })).status, 200)
  const dir = mkdtempSync(join(tmpdir(), 'nj-daemon-'))
  writeFileSync(join(dir, 'token'), created.body.token.secret, { mode: 0o600 })
  const daemon = dev.spawn(process.execPath, ['bin/nightjar.mjs', 'daemon', '--network', 'dev', '--control-url', install.apiUrl.replace(/^http/, 'ws'), '--network-token-file', join(dir, 'token'), '--daemon-host', 'devbox'], { NODE_PATH: ROOT })
  let out = ''
  daemon.stdout!.on('data', (d) => (out += d))
  daemon.stderr!.on('data', (d) => (out += d))
  await waitFor(() => ownerOf(netId), { what: 'the daemon to join through the Service', timeoutMs: 30_000 })

  const sessions: string[] = []
  const navigate = (id: string, port = appPort, base = install.apiUrl) => call(base, 'POST', `/v1/sessions/${id}/navigate`, { url: `http://localhost:${port}/` })

  await t.test('sessions started through each replica all reach the daemon’s local app', async (t) => {
    for (const url of urls) {
      const opened = await call(url, 'POST', '/v1/sessions', { egress: 'local', network: 'dev' })
      t.equal(opened.status, 201, opened.text)
      sessions.push(opened.body.id)
      const nav = await navigate(opened.body.id, appPort, url)
      t.equal(nav.body?.title, `dev app ${appPort}`, `started and driven through ${url}: browser pod → egress Service → some replica → the daemon’s replica → daemon → app`)
    }
    for (const url of urls) {
      const n = (await call(url, 'GET', '/v1/networks')).body.find((x: any) => x.id === netId)
      t.equal(n.onlineDaemonCount, 1, `${url} counts the daemon online`)
    }
  })

  await t.test('a declared-hosts change on a replica that does not hold the daemon reaches it', async (t) => {
    const held = (await ownerOf(netId))!
    const other = urls.find((u) => u !== held.address)!
    const mark = out.length
    const started = Date.now()
    t.equal((await call(other, 'PATCH', `/v1/networks/${netId}`, { declaredHosts: [`localhost:${appPort}`, `localhost:${otherPort}`] })).status, 200)
    await waitFor(() => out.slice(mark).includes(`localhost:${otherPort}`), { what: 'the daemon to print the new list', timeoutMs: 5000 })
    t.comment(`the daemon had the new list ${Date.now() - started} ms after the PATCH on another replica`)
    const opened = await api('POST', '/v1/sessions', { egress: 'local', network: 'dev' })
    sessions.push(opened.body.id)
    t.equal((await navigate(opened.body.id, otherPort)).body?.title, `dev app ${otherPort}`, 'a new session reaches the newly declared host')
  })

  await t.test('the daemon’s replica is killed: the daemon rejoins, new navigations succeed', async (t) => {
    const held = (await ownerOf(netId))!
    const mark = out.length
    t.ok(killPod(new URL(held.address).hostname) > 0, 'the owner’s processes got SIGKILL')
    const moved = await waitFor(async () => { const o = await ownerOf(netId); return o && o.id !== held.id ? o : undefined }, { what: 'the daemon to register with another replica', timeoutMs: 30_000, intervalMs: 100 })
    t.not(moved.id, held.id, 'the daemon’s row names another replica')
    t.match(out.slice(mark), /reconnecting in/, 'the daemon saw its connection go and reconnected')
    const nav = await waitFor(async () => { const r = await navigate(sessions[0]); return r.body?.title ? r : undefined }, { what: 'a navigation through the new owner', timeoutMs: 30_000, intervalMs: 250 })
    t.equal(nav.body.title, `dev app ${appPort}`, 'a session started before the kill reaches the local app again')
  })

  await t.test('a rolling restart of all three loses no session and leaves local reach working', async (t) => {
    await rolledOut(ns, [`${install.fullname}-api-server`])
    const before = (await replicaUrls()).sort()
    await kubectl(['-n', ns, 'rollout', 'restart', `deployment/${install.fullname}-api-server`])
    await waitFor(async () => {
      const now = await replicaUrls()
      const pods = (await kubectlJson(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=api-server'])).items
      return now.length === 3 && pods.length === 3 && now.every((u) => !before.includes(u))
    }, { what: 'three new api-server pods, the old ones gone', timeoutMs: 240_000, intervalMs: 500 })
    await rolledOut(ns, [`${install.fullname}-api-server`])
    await waitFor(() => ownerOf(netId), { what: 'the daemon held by a new replica', timeoutMs: 30_000 })
    for (const id of sessions) {
      const got = await api('GET', `/v1/sessions/${id}`)
      t.equal(got.body?.status, 'live', `${id} is still live`)
      const nav = await waitFor(async () => { const r = await navigate(id); return r.body?.title ? r : undefined }, { what: `navigation of ${id}`, timeoutMs: 30_000, intervalMs: 250 })
      t.equal(nav.body.title, `dev app ${appPort}`, `${id} reaches the local app through the new replicas`)
    }
    // every live replica row belongs to a current pod: the stopped replicas removed theirs (or stopped heartbeating)
    const current = await replicaUrls()
    const liveRows = async () => (await sql.query(`select address from api_replicas where heartbeat_at > now() - interval '3 seconds' order by address`)).rows.map((r) => r.address as string)
    const settled = await waitFor(async () => { const rows = await liveRows(); return rows.length === 3 && rows.every((a) => current.includes(a)) ? rows : undefined }, { what: 'three live replica rows', timeoutMs: 15_000, intervalMs: 250 }).catch(async () => liveRows())
    t.same(settled, [...current].sort(), 'the live replica rows are exactly the three current pods')
    for (const id of sessions) await api('DELETE', `/v1/sessions/${id}`)
    t.notOk(out.includes(created.body.token.secret), 'the daemon never printed its token')
  })
})
