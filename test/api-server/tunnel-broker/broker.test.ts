// The tunnel broker: join auth, registration, listing, heartbeats, dial errors and
// isolation between daemons.
import t from 'tap'
import http from 'node:http'
import WebSocket from 'ws'
import { waitFor } from '../../helpers/wait.ts'
import { FrameType, decodeFrame, encodeFrame, DEFAULT_WINDOW, MAX_DATA } from '../../../tunnel/frames.ts'
import { isTunnelError, TunnelError } from '../../../tunnel/errors.ts'
import { DaemonAuthError, UNAUTHORIZED_MESSAGE } from '../../../cli/daemon.ts'
import { newToken } from '../../../contracts/ids.ts'
import {
  daemonOnline,
  pattern,
  readAll,
  startBroker,
  startDaemon,
  startEcho,
  NETWORK,
  NETWORK_ID,
  type BrokerHarness,
} from '../../tunnel/fixtures/harness.ts'

/** A plain upgrade request: status and body as the daemon would see them. */
function rawJoin(url: string, network: string, authorization?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url.replace('ws:', 'http:')}/ws/control?network=${encodeURIComponent(network)}`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...(authorization ? { authorization } : {}),
      },
    })
    req.on('response', (res) => { readAll(res).then((b) => resolve({ status: res.statusCode!, body: b.toString() }), reject) })
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      resolve({ status: res.statusCode!, body: '' })
    })
    req.on('error', reject)
    req.end()
  })
}

/** A hand-driven daemon: joins, says HELLO, then does only what the test makes it do. */
async function fakeDaemon(h: BrokerHarness, hello: Record<string, unknown> = { host: 'fake', version: 'x' }) {
  const ws = new WebSocket(`${h.url}/ws/control?network=${NETWORK}`, { headers: { authorization: `Bearer ${h.token.value}` } })
  ws.on('error', () => {})
  const frames: ReturnType<typeof decodeFrame>[] = []
  ws.on('message', (m) => frames.push(decodeFrame(m as Buffer)))
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  ws.send(encodeFrame({ type: FrameType.HELLO, streamId: 0, hello: hello as never }))
  await waitFor(() => frames.find((f) => f.type === FrameType.WELCOME), { what: 'WELCOME' })
  return { ws, frames, closed }
}

t.test('[ERR-02] a wrong join token is rejected with HTTP 401 and body unauthorized', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  for (const [what, network, auth] of [
    ['wrong token', NETWORK, `Bearer ${newToken('njt_')}`],
    ['no token', NETWORK, undefined],
    ['not a join token', NETWORK, `Bearer ${newToken('njk_')}`],
    ['token of another network', 'other-net', `Bearer ${h.token.value}`],
  ] as const) {
    const r = await rawJoin(h.url, network, auth)
    t.equal(r.status, 401, what)
    t.equal(r.body, 'unauthorized', what)
  }
  t.equal(h.registrations.length, 0)

  // and the daemon itself stops with the clear message instead of retrying forever
  const d = startDaemon(h, { token: newToken('njt_') })
  await t.rejects(d.done, DaemonAuthError)
  t.ok(d.lines.includes(UNAUTHORIZED_MESSAGE), 'daemon printed: ' + UNAUTHORIZED_MESSAGE)
})

t.test('[RULE-11] a rotated join token fails the rejoin with 401', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const { d, id } = await daemonOnline(h)
  // rotation: the old token stops authenticating and live daemons are cut off
  h.token.value = newToken('njt_')
  h.broker.disconnectNetwork(NETWORK_ID, 'token rotated')
  await t.rejects(d.done, DaemonAuthError)
  t.equal(h.broker.listDaemons(NETWORK_ID).length, 0, 'daemon no longer listed')
  t.ok(h.disconnects.some((x) => x.daemonId === id), 'onDisconnect reported it')
  t.ok(d.lines.some((l) => l.includes('HTTP 401') || l === UNAUTHORIZED_MESSAGE))
})

t.test('[LIM-12] daemon registration completes well under one second', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const times: number[] = []
  for (let i = 0; i < 10; i++) {
    const before = h.registrations.length
    const start = performance.now()
    const d = startDaemon(h)
    await waitFor(() => h.registrations.length > before, { intervalMs: 1, what: 'registration' })
    // the daemon's own view: WELCOME received
    await waitFor(() => d.lines.some((l) => l.startsWith('registered as ')), { intervalMs: 1 })
    times.push(performance.now() - start)
    await d.stop()
  }
  times.sort((a, b) => a - b)
  t.ok(times[times.length - 1] < 1000, `slowest registration ${times[times.length - 1].toFixed(1)} ms, p50 ${times[5].toFixed(1)} ms`)
})

t.test('[EP-29] listing shows each online daemon with its fields; default host label is unknown', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const a = await daemonOnline(h, { host: 'unknown' }) // what parseDaemonArgs gives without --daemon-host
  const b = await daemonOnline(h, { host: 'alice-laptop', version: '9.9.9' })
  const list = h.broker.listDaemons(NETWORK_ID)
  t.equal(list.length, 2)
  const eb = list.find((e) => e.id === b.id)!
  t.same(Object.keys(eb).sort(), ['connectedSince', 'host', 'id', 'reachable', 'version'])
  t.match(eb, { host: 'alice-laptop', version: '9.9.9', reachable: true })
  t.ok(!Number.isNaN(Date.parse(eb.connectedSince)), 'connectedSince is a timestamp')
  t.equal(list.find((e) => e.id === a.id)!.host, 'unknown')
  t.match(a.id, /^ndmn_[0-9A-Za-z]{22}$/, 'a minted id has the ndmn_ prefix')
  t.same(h.broker.listDaemons('nnet_other'), [], 'other networks see nothing')
  await a.d.stop()
  await b.d.stop()
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 0, { what: 'stopped daemons unlisted' })
  t.equal(h.disconnects.length, 2)
})

t.test('pushDeclaredHosts reaches every daemon of the network', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const a = await daemonOnline(h)
  const b = await daemonOnline(h)
  h.broker.pushDeclaredHosts(NETWORK_ID, ['localhost:3000', '[::1]:8080'])
  for (const x of [a, b]) await waitFor(() => x.d.lines.includes('declared hosts: localhost:3000, [::1]:8080'), { what: 'hosts at ' + x.id })
  // a daemon joining later gets the current list at registration
  const c = await daemonOnline(h)
  await waitFor(() => c.d.lines.includes('declared hosts: localhost:3000, [::1]:8080'), { what: 'hosts at a late joiner' })
  for (const x of [a, b, c]) await x.d.stop()
})

t.test('loadDeclaredHosts is the source of truth at registration', async (t) => {
  const h = await startBroker({ loadDeclaredHosts: async () => ['127.0.0.1:5432'] })
  t.teardown(() => h.close())
  const a = await daemonOnline(h)
  await waitFor(() => a.d.lines.includes('declared hosts: 127.0.0.1:5432'))
  t.pass('daemon received the loaded list')
  await a.d.stop()
})

t.test('dial errors are typed: no_daemon, refused, not_declared, unreachable, timeout', async (t) => {
  const h = await startBroker({ dialTimeoutMs: 300 })
  t.teardown(() => h.close())
  await t.rejects(h.broker.dial(NETWORK_ID, '127.0.0.1', 80), { code: 'no_daemon' })
  const { d } = await daemonOnline(h)
  const echo = await startEcho()
  t.teardown(() => echo.close())
  const closed = await startEcho()
  const closedPort = closed.port
  await closed.close()
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1', 'nowhere.invalid'])
  await waitFor(() => d.lines.some((l) => l.startsWith('declared hosts: 127.0.0.1')))
  await t.rejects(h.broker.dial(NETWORK_ID, '127.0.0.1', closedPort), { code: 'refused' })
  await t.rejects(h.broker.dial(NETWORK_ID, 'localhost', echo.port), { code: 'not_declared' })
  await t.rejects(h.broker.dial(NETWORK_ID, 'nowhere.invalid', 80), { code: 'unreachable' })
  t.ok(d.lines.includes(`dial 127.0.0.1:${closedPort}: refused`), 'the daemon reports the refusal')
  t.ok(d.lines.includes(`dial localhost:${echo.port}: not_declared`), 'and the undeclared host')
  await d.stop()

  // a daemon that never answers OPEN: the broker gives up on its own clock
  const fake = await fakeDaemon(h)
  const err = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port).catch((e) => e)
  t.ok(isTunnelError(err, 'timeout'), 'timeout when the daemon does not answer')
  await waitFor(() => fake.frames.some((f) => f.type === FrameType.RST), { what: 'RST for the abandoned stream' })
  t.pass('the abandoned stream was reset')
  fake.ws.close()
})

t.test('a fake daemon breaking the flow-control rules is dropped; the other daemon is unaffected', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const echo = await startEcho()
  t.teardown(() => echo.close())
  const good = await daemonOnline(h)
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  await waitFor(() => good.d.lines.some((l) => l.startsWith('declared hosts: 127.0.0.1')))

  const fake = await fakeDaemon(h) // newest daemon: the next dial goes to it
  const dialled = h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  const open = await waitFor(() => fake.frames.find((f) => f.type === FrameType.OPEN), { what: 'OPEN at the fake' })
  const id = open.streamId
  fake.ws.send(encodeFrame({ type: FrameType.OPEN_OK, streamId: id, window: DEFAULT_WINDOW }))
  const stream = await dialled
  const streamErr = new Promise<Error>((r) => stream.once('error', r))
  // more DATA than the broker's window allows, without waiting for credit
  const chunk = Buffer.alloc(MAX_DATA, 1)
  for (let sent = 0; sent <= DEFAULT_WINDOW; sent += chunk.length) fake.ws.send(encodeFrame({ type: FrameType.DATA, streamId: id, data: chunk }))
  t.equal(await fake.closed, 1002, 'dropped with close code 1002')
  t.ok(h.logs.some((l) => l.includes('window overflow')), 'the broker says why')
  const err = await streamErr
  t.ok(isTunnelError(err, 'closed'), 'its stream failed cleanly: ' + err.message)
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 1, { what: 'fake unlisted' })

  const p = pattern(200_000, 1)
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  s.end(p)
  t.ok((await readAll(s)).equals(p), 'the good daemon still carries traffic')

  // frames for a stream that never existed, and frames the broker must never receive
  for (const bad of [
    encodeFrame({ type: FrameType.DATA, streamId: 77, data: Buffer.from('x') }),
    encodeFrame({ type: FrameType.OPEN, streamId: 1, window: 1, host: 'h', port: 1 }),
    encodeFrame({ type: FrameType.HELLO, streamId: 0, hello: { host: 'again', version: '1' } }),
    Buffer.from([0xee, 0, 0, 0, 0]),
  ]) {
    const f = await fakeDaemon(h)
    f.ws.send(bad)
    t.equal(await f.closed, 1002)
  }
  t.equal(h.broker.listDaemons(NETWORK_ID).length, 1, 'only the good daemon is left')
  await good.d.stop()
})

t.test('heartbeats: a daemon that goes silent is dropped and reported', async (t) => {
  const h = await startBroker({ heartbeatMs: 50, heartbeatTimeoutMs: 200 })
  t.teardown(() => h.close())
  const fake = await fakeDaemon(h) // never answers PING
  const id = h.registrations[0].daemonId
  await waitFor(() => h.disconnects.find((d) => d.daemonId === id), { what: 'silent daemon dropped' })
  t.match(h.disconnects[0].reason, /heartbeat timeout/)
  t.same(h.broker.listDaemons(NETWORK_ID), [])
  await fake.closed
  // while one that answers stays, however many heartbeat periods pass
  const live = await fakeDaemon(h)
  const liveId = h.registrations[1].daemonId
  let pings = 0
  live.ws.on('message', (m) => {
    const f = decodeFrame(m as Buffer)
    if (f.type === FrameType.PING) {
      pings++
      live.ws.send(encodeFrame({ type: FrameType.PONG, streamId: 0, nonce: f.nonce }))
    }
  })
  await waitFor(() => pings >= 12, { what: '12 pings (three heartbeat timeouts)' })
  t.notOk(h.disconnects.some((d) => d.daemonId === liveId), 'answering daemon kept')
  t.equal(h.broker.listDaemons(NETWORK_ID)[0].reachable, true)
  live.ws.close()
})

t.test('a same-id reconnect replaces the old connection; hooks stay ordered', async (t) => {
  const events: string[] = []
  const h2 = await startBroker({
    onRegister: (r) => void events.push('register ' + r.daemonId),
    onDisconnect: (d) => void events.push('disconnect ' + d.daemonId),
  })
  t.teardown(() => h2.close())
  const first = await fakeDaemon(h2, { daemonId: 'laptop-1', host: 'a', version: '1' })
  const second = await fakeDaemon(h2, { daemonId: 'laptop-1', host: 'b', version: '1' })
  t.equal(await first.closed, 4000, 'old connection closed as replaced')
  const list = h2.broker.listDaemons(NETWORK_ID)
  t.equal(list.length, 1)
  t.equal(list[0].host, 'b')
  t.same(events, ['register laptop-1', 'disconnect laptop-1', 'register laptop-1'])
  second.ws.close()
  await waitFor(() => events.length === 4)
  t.equal(events[3], 'disconnect laptop-1')
})

t.test('disconnectNetwork closes every daemon of the network', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const a = await daemonOnline(h)
  const count = h.registrations.length
  h.broker.disconnectNetwork(NETWORK_ID)
  await waitFor(() => h.disconnects.length === 1)
  // the token is still valid here, so the daemon comes back by itself
  await waitFor(() => h.registrations.length > count, { what: 'daemon rejoined' })
  t.ok(a.d.lines.some((l) => /^disconnected: .*; reconnecting in \d+\.\ds$/.test(l)), 'progress line for the reconnect')
  await a.d.stop()
})

t.test('forgetNetwork disconnects the daemons and drops the remembered host list', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const a = await daemonOnline(h)
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  await waitFor(() => a.d.lines.includes('declared hosts: 127.0.0.1'))
  const count = h.registrations.length
  h.broker.forgetNetwork(NETWORK_ID)
  // the token still authenticates in this harness, so the daemon rejoins and now hears
  // an empty list: a re-created network starts closed
  await waitFor(() => h.registrations.length > count, { what: 'rejoin' })
  await waitFor(() => a.d.lines.filter((l) => l.startsWith('declared hosts: (none')).length === 2, { what: 'empty list after rejoin' })
  t.pass('closed by default again')
  await a.d.stop()
})

t.test('errors are TunnelError instances with a code', async (t) => {
  const e = new TunnelError('refused')
  t.equal(e.code, 'refused')
  t.ok(isTunnelError(e, 'refused'))
  t.notOk(isTunnelError(new Error('x')))
})
