// Three api-server replicas on one database: the daemon joins through a round-robin TCP
// proxy to one of two of them, and the browser pods' egress lands on the third, which holds
// no daemon — every dial crosses the replica channel. The developer's machine is a network
// namespace with a local app and the real `nightjar daemon`.
import t from 'tap'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { WebSocket } from 'ws'
import { startTestServer, freePort, type TestServer } from '../../helpers/server.ts'
import { createNamespace, waitForLine } from '../../helpers/netns.ts'
import { startTcpProxy } from '../../helpers/tcp-proxy.ts'
import { waitFor } from '../../helpers/wait.ts'

const APP = String.raw`
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<title>dev app ' + process.env.PORT + '</title><h1>served from the developer machine</h1>')
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'))`

/** what a WebSocket upgrade answers: 'open' or the HTTP status that refused it */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers })
    ws.once('open', () => {
      ws.terminate()
      resolve('open')
    })
    ws.once('unexpected-response', (_req, res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    ws.once('error', () => resolve(0))
  })
}

t.test('replicas: a dial finds the daemon’s replica', async (t) => {
  const secret = randomBytes(32).toString('base64url')
  const env = { NIGHTJAR_REPLICA_HEARTBEAT_SECONDS: '1' }
  // s1 runs the browser pods; s2 and s3 are where daemons land
  const s1 = await startTestServer(t, { sessions: true, listenHost: '0.0.0.0', replicaSecret: secret, env })
  const s2 = await startTestServer(t, { sharing: s1, listenHost: '0.0.0.0', replicaSecret: secret, env })
  const s3 = await startTestServer(t, { sharing: s1, listenHost: '0.0.0.0', replicaSecret: secret, env })
  const replicas = [s1, s2, s3]
  const proxy = await startTcpProxy(t, [s2, s3].map((s) => Number(new URL(s.url).port)))
  const acme = await s1.bootstrap()
  const on = (s: TestServer) => (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })

  const dev = await createNamespace(t)
  const appPort = await freePort()
  const otherPort = await freePort()
  await waitForLine(dev.spawn(process.execPath, ['-e', APP], { PORT: String(appPort) }), 'ready', 15_000)
  await waitForLine(dev.spawn(process.execPath, ['-e', APP], { PORT: String(otherPort) }), 'ready', 15_000)

  const created = (await on(s1)('POST', '/v1/networks', { name: 'dev' })).body
  const netId = created.network.id as string
  t.equal((await on(s1)('PATCH', `/v1/networks/${netId}`, { declaredHosts: [`localhost:${appPort}`] })).status, 200)
  const dir = mkdtempSync(join(tmpdir(), 'nj-daemon-'))
  writeFileSync(join(dir, 'token'), created.token.secret, { mode: 0o600 })
  const daemon = dev.spawn(process.execPath, ['bin/nightjar.mjs', 'daemon', '--network', 'dev', '--control-url', `ws://${dev.hostIp}:${proxy.port}`, '--network-token-file', join(dir, 'token'), '--daemon-host', 'devbox'], { NODE_PATH: process.cwd() })
  let out = ''
  daemon.stdout!.on('data', (d) => (out += d))
  daemon.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((r) => daemon.once('exit', (code) => r(code)))

  /** the replica holding the daemon's WebSocket right now */
  const owner = () => replicas.find((s) => s.services.localReach.broker.listDaemons(netId).length > 0)
  const reachableEverywhere = () => waitFor(async () => {
    for (const s of replicas) {
      if (s.app.server.listening === false) continue
      const listed = (await on(s)('GET', `/v1/networks/${netId}/daemons`)).body
      if (!listed.some((d: any) => d.reachable)) return false
    }
    return true
  }, { what: 'every replica to list the daemon reachable', timeoutMs: 30_000 })
  await reachableEverywhere()

  const open = async () => {
    const r = await on(s1)('POST', '/v1/sessions', { egress: 'local', network: 'dev' })
    if (r.status !== 201) throw new Error(`session_start: ${r.status} ${r.text}`)
    return r.body.id as string
  }
  const nav = (id: string, port = appPort) => on(s1)('POST', `/v1/sessions/${id}/navigate`, { url: `http://localhost:${port}/` })

  await t.test('a dial landing on a replica without the daemon is forwarded to the one holding it', async (t) => {
    const holder = owner()
    t.ok(holder && holder !== s1, 'the daemon is held by s2 or s3, never by the pods’ replica')
    t.equal(s1.services.localReach.broker.listDaemons(netId).length, 0, 's1 holds no daemon')
    const id = await open()
    const r = await nav(id)
    t.equal(r.status, 200, r.text)
    t.equal(r.body.title, `dev app ${appPort}`, 'browser pod → s1 egress relay → replica channel → owner → daemon → local app')
    for (const s of replicas) {
      const n = (await on(s)('GET', '/v1/networks')).body.find((x: any) => x.id === netId)
      t.same([n.daemonCount, n.onlineDaemonCount], [1, 1], `${s === holder ? 'the owner' : 'another replica'} counts the daemon online`)
    }
    await on(s1)('DELETE', `/v1/sessions/${id}`)
  })

  await t.test('a change of declared hosts on one replica reaches the daemon on another', async (t) => {
    const holder = owner()!
    const elsewhere = replicas.find((s) => s !== holder && s !== s1)!
    const id = await open() // launched with the current list; it keeps it
    const mark = out.length
    const started = Date.now()
    t.equal((await on(elsewhere)('PATCH', `/v1/networks/${netId}`, { declaredHosts: [`localhost:${appPort}`, `localhost:${otherPort}`] })).status, 200)
    await waitFor(() => out.slice(mark).includes(`localhost:${otherPort}`), { what: 'the daemon to print the new list', timeoutMs: 5000 })
    t.comment(`the daemon had the new list ${Date.now() - started} ms after the PATCH answered on another replica`)
    const later = await open()
    t.equal((await nav(later, otherPort)).body.title, `dev app ${otherPort}`, 'a session launched after the change reaches the newly declared host')
    t.equal((await nav(id, otherPort)).body.error?.code, 'E_REACHABILITY_DENIED', 'the older session keeps its launch-time list')
    await on(s1)('DELETE', `/v1/sessions/${id}`)
    await on(s1)('DELETE', `/v1/sessions/${later}`)
  })

  await t.test('the replica channel admits only the replica secret', async (t) => {
    const holder = owner()!
    const url = `${holder.url.replace(/^http/, 'ws')}/internal/tunnel/dial?network=${netId}&host=localhost&port=${appPort}`
    t.equal(await upgradeStatus(url, {}), 401, 'no credential')
    t.equal(await upgradeStatus(url, { authorization: `Bearer ${randomBytes(32).toString('base64url')}` }), 401, 'a wrong secret')
    t.equal(await upgradeStatus(url, { authorization: `Bearer ${acme.apiKey}` }), 401, 'a caller’s API key is not a replica credential')
    t.equal(await upgradeStatus(url, { authorization: `Bearer ${secret}` }), 'open', 'the replica secret opens a dial')
    const lone = await startTestServer(t, { sharing: s1 })
    const loneUrl = `${lone.url.replace(/^http/, 'ws')}/internal/tunnel/dial?network=${netId}&host=localhost&port=${appPort}`
    t.equal(await upgradeStatus(loneUrl, { authorization: `Bearer ${secret}` }), 401, 'a replica without a secret accepts no forwarded dial')
    await lone.close()
  })

  await t.test('a replica that died without a word counts its daemons offline', async (t) => {
    const db = s1.testDb.db
    await db.query(`insert into api_replicas (id, address, heartbeat_at) values ('nrep_gone', 'http://127.0.0.1:9', now() - interval '1 minute')`)
    await db.query(`insert into network_daemons (id, network_id, org_id, host, version, connected_since, online, replica_id) values ('ndmn_ghost', $1, $2, 'ghostbox', '1', now(), true, 'nrep_gone')`, [netId, acme.orgId])
    const listed = (await on(s2)('GET', `/v1/networks/${netId}/daemons`)).body
    t.equal(listed.find((d: any) => d.id === 'ndmn_ghost')?.reachable, false, 'its row still says online, its replica is silent: not reachable')
    t.same((await on(s3)('GET', '/v1/networks')).body.find((x: any) => x.id === netId).onlineDaemonCount, 1, 'only the live daemon counts online')
    const id = await open()
    t.equal((await nav(id)).body.title, `dev app ${appPort}`, 'dials still go to the live daemon')
    await on(s1)('DELETE', `/v1/sessions/${id}`)
    await db.query(`delete from network_daemons where id = 'ndmn_ghost'`)
  })

  await t.test('the daemon’s replica stops: the daemon rejoins another and navigations work again', async (t) => {
    const holder = owner()!
    const id = await open()
    t.equal((await nav(id)).body.title, `dev app ${appPort}`)
    const mark = out.length
    await holder.close()
    await waitFor(() => { const o = owner(); return o && o !== holder }, { what: 'the daemon to rejoin another replica', timeoutMs: 15_000 })
    t.match(out.slice(mark), /reconnecting in/, 'the daemon was told to reconnect')
    await reachableEverywhere()
    const r = await nav(id)
    t.equal(r.body.title, `dev app ${appPort}`, 'the same live session reaches the local app through the new owner')
    await on(s1)('DELETE', `/v1/sessions/${id}`)
  })

  await t.test('rotating the join token on one replica disconnects the daemon on another, and its rejoin is refused', async (t) => {
    t.equal((await on(s1)('POST', `/v1/networks/${netId}/rotate-token`)).status, 200)
    t.equal(await exited, 1, 'the daemon exited with status 1')
    t.match(out, /join rejected: unauthorized/, 'it said why')
    await waitFor(async () => (await on(s1)('GET', '/v1/networks')).body.find((x: any) => x.id === netId).onlineDaemonCount === 0, { what: 'no daemon online', timeoutMs: 10_000 })
  })
})
