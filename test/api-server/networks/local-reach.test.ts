// Local reach end to end. The developer's machine is a network namespace holding a
// local web app (on its own 127.0.0.1) and the real `nightjar daemon`; the browser
// runs in the root namespace and can reach that app only through the tunnel.
import t from 'tap'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, freePort } from '../../helpers/server.ts'
import { createNamespace, startPublicWeb, waitForLine } from '../../helpers/netns.ts'
import { waitFor } from '../../helpers/wait.ts'
import { shown } from '../../helpers/perceived.ts'

const APP = String.raw`
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end('<title>dev app</title><h1>served from the developer machine</h1>')
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'))`

t.test('local reach through a real daemon', async (t) => {
  const web = await startPublicWeb(t)
  const dev = await createNamespace(t)
  const s = await startTestServer(t, { sessions: true, listenHost: '0.0.0.0', env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const req = (method: string, path: string, body?: unknown, token = acme.apiKey) => s.request(method, path, { token, body })
  const appPort = await freePort() // free here too, so a root-namespace hit would be refused
  const app = dev.spawn(process.execPath, ['-e', APP], { PORT: String(appPort) })
  await waitForLine(app, 'ready', 15_000)

  const created = (await req('POST', '/v1/networks', { name: 'dev' })).body
  const dir = mkdtempSync(join(tmpdir(), 'nj-daemon-'))
  const tokenFile = join(dir, 'token')
  writeFileSync(tokenFile, created.token.secret, { mode: 0o600 })
  const tunnelUrl = `ws://${dev.hostIp}:${new URL(s.url).port}`
  const startDaemon = () => {
    const d = dev.spawn(process.execPath, ['bin/nightjar.mjs', 'daemon', '--network', 'dev', '--control-url', tunnelUrl, '--network-token-file', tokenFile, '--daemon-host', 'devbox', '--daemon-id', 'ndmn_devbox'], { NODE_PATH: process.cwd() })
    let out = ''
    d.stderr!.on('data', (x) => (out += x))
    d.stdout!.on('data', (x) => (out += x))
    return { proc: d, output: () => out }
  }
  let daemon = startDaemon()
  const reachable = () => waitFor(async () => (await req('GET', `/v1/networks/${created.network.id}/daemons`)).body.some((d: any) => d.reachable), { what: 'daemon reachable', timeoutMs: 30_000 })
  await reachable()

  const open = async (body: Record<string, unknown>) => {
    const r = await req('POST', '/v1/sessions', body)
    if (r.status !== 201) throw new Error(`session_start: ${r.status} ${r.text}`)
    return r.body.id as string
  }
  const nav = (id: string, url: string) => req('POST', `/v1/sessions/${id}/navigate`, { url })
  const local = `http://localhost:${appPort}/`

  t.test('the app is not reachable from the root namespace directly', async (t) => {
    const err = await fetch(local).then(() => null, (e) => e)
    t.ok(err, 'nothing answers on the root namespace loopback')
  })

  t.test('[RULE-08] [ERR-28] [INV-06] a fresh network declares nothing: every navigation is denied', async (t) => {
    const id = await open({ egress: 'local', network: 'dev' })
    const r = await nav(id, local)
    t.equal(r.status, 403)
    t.equal(r.body.error.code, 'E_REACHABILITY_DENIED')
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[EP-41] [RULE-09] [RULE-12] [FLD-30] declared, the page loads through the daemon; a live session keeps its launch-time list', async (t) => {
    const before = await open({ egress: 'local', network: 'dev' })
    const patched = await req('PATCH', `/v1/networks/${created.network.id}`, { declaredHosts: [`localhost:${appPort}`] })
    t.equal(patched.status, 200)
    t.equal((await nav(before, local)).body.error.code, 'E_REACHABILITY_DENIED', 'the older session still has the empty list')
    const id = await open({ egress: 'local', network: 'dev' })
    t.equal((await req('GET', `/v1/sessions/${id}`)).body.network, created.network.id, 'the session names its network by id')
    const r = await nav(id, local)
    t.equal(r.status, 200, r.text)
    t.equal(r.body.title, 'dev app')
    const seen = await req('POST', `/v1/sessions/${id}/perceive`, {})
    t.match(shown(seen.body), /served from the developer machine/)
    const pub = await nav(id, 'http://example.com/index.html')
    t.equal(pub.body.error.code, 'E_REACHABILITY_DENIED', 'local egress sends everything through the daemon, and example.com is not declared')
    await req('DELETE', `/v1/sessions/${before}`)
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[EP-42] split: the local host through the tunnel, the public web direct', async (t) => {
    const id = await open({ egress: 'split', network: 'dev' })
    t.equal((await nav(id, local)).body.title, 'dev app')
    const pub = await nav(id, 'http://example.com/index.html')
    t.equal(pub.status, 200, pub.text)
    t.ok((await web.requests()).some((r) => r.host === 'example.com'), 'the public site saw the request directly')
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[EP-43] [ERR-29] platform egress refuses the local address', async (t) => {
    const id = await open({ egress: 'platform', network: 'dev' })
    const r = await nav(id, local)
    t.equal(r.status, 502)
    t.equal(r.body.error.code, 'E_UPSTREAM')
    t.equal(r.body.error.reason, 'NAVIGATION_FAILED')
    t.match(r.body.error.message, /net::ERR_CONNECTION_REFUSED/)
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[ERR-29] [RULE-10] a declared port nobody listens on is refused on the daemon side', async (t) => {
    const closedPort = await freePort()
    await req('PATCH', `/v1/networks/${created.network.id}`, { declaredHosts: [`localhost:${appPort}`, `localhost:${closedPort}`] })
    const id = await open({ egress: 'local', network: 'dev' })
    const r = await nav(id, `http://localhost:${closedPort}/`)
    t.equal(r.body.error.code, 'E_UPSTREAM')
    t.match(r.body.error.message, /net::ERR_CONNECTION_REFUSED/)
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[RULE-33] local egress without a network tunnels nothing', async (t) => {
    const id = await open({ egress: 'local' })
    const r = await nav(id, local)
    t.equal(r.body.error.code, 'E_REACHABILITY_DENIED')
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[ERR-30] [RULE-07] a network of another org is not found', async (t) => {
    const r = await req('POST', '/v1/sessions', { egress: 'local', network: 'dev' }, globex.apiKey)
    t.equal(r.status, 403)
    t.equal(r.body.error.message, 'network not found')
    const byId = await req('POST', '/v1/sessions', { egress: 'local', network: created.network.id }, globex.apiKey)
    t.equal(byId.text, r.text)
  })

  t.test('[ERR-29] a dead daemon gives connection refused; its reconnect restores service', async (t) => {
    const id = await open({ egress: 'local', network: 'dev' })
    t.equal((await nav(id, local)).body.title, 'dev app')
    daemon.proc.kill('SIGKILL')
    await waitFor(async () => !(await req('GET', `/v1/networks/${created.network.id}/daemons`)).body.some((d: any) => d.reachable), { what: 'daemon gone', timeoutMs: 40_000 })
    const r = await nav(id, local)
    t.equal(r.body.error.code, 'E_UPSTREAM')
    t.match(r.body.error.message, /net::ERR_CONNECTION_REFUSED/)
    daemon = startDaemon()
    await reachable()
    const back = await nav(id, local)
    t.equal(back.body.title, 'dev app', 'the same live session works again')
    await req('DELETE', `/v1/sessions/${id}`)
  })

  t.test('[EP-24] [RULE-28] deleting the network drops the daemon; it exits on the 401 and never printed its token', async (t) => {
    const exited = new Promise<number | null>((r) => daemon.proc.once('exit', (code) => r(code)))
    t.equal((await req('DELETE', `/v1/networks/${created.network.id}`)).status, 204)
    t.equal(await exited, 1, 'the daemon exits non-zero')
    t.match(daemon.output(), /join rejected: unauthorized/)
    t.notOk(daemon.output().includes(created.token.secret), 'the daemon never printed its token')
  })
})
