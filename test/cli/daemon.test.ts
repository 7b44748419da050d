// The daemon: flags and env, its own host check, reconnects, and secret hygiene.
import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { lookup } from 'node:dns/promises'
import { WebSocketServer } from 'ws'
import type net from 'node:net'
import { waitFor } from '../helpers/wait.ts'
import { newToken } from '../../contracts/ids.ts'
import { DaemonUsageError, tunnelEndpoint, parseDaemonArgs, retryAfterMs, runDaemon, UNAUTHORIZED_MESSAGE } from '../../cli/daemon.ts'
import { createServer } from 'node:http'
import { TunnelSession } from '../../tunnel/session.ts'
import { isTunnelError } from '../../tunnel/errors.ts'
import type { TunnelStream } from '../../tunnel/stream.ts'
import {
  daemonOnline,
  pattern,
  readAll,
  spawnDaemon,
  startBroker,
  startDaemon,
  startEcho,
  startProxy,
  NETWORK,
  NETWORK_ID,
} from '../tunnel/fixtures/harness.ts'

const tmp = mkdtempSync(join(tmpdir(), 'nightjar-daemon-test-'))
const TOKEN = newToken('njt_')
const base = ['--control-url', 'ws://127.0.0.1:1']

t.test('[EP-26] --network / NIGHTJAR_NETWORK is required; the flag wins over the env', async (t) => {
  t.throws(() => parseDaemonArgs([...base, '--network-token', TOKEN], {}), DaemonUsageError)
  t.equal(parseDaemonArgs(base, { NIGHTJAR_NETWORK: 'from-env', NIGHTJAR_NETWORK_TOKEN: TOKEN }).network, 'from-env')
  t.equal(parseDaemonArgs([...base, '--network', 'from-flag'], { NIGHTJAR_NETWORK: 'from-env', NIGHTJAR_NETWORK_TOKEN: TOKEN }).network, 'from-flag')
  t.equal(parseDaemonArgs([...base, '--network=eq-form'], { NIGHTJAR_NETWORK_TOKEN: TOKEN }).network, 'eq-form')
  t.throws(() => parseDaemonArgs([...base, '--network', 'x', '--session', 's'], { NIGHTJAR_NETWORK_TOKEN: TOKEN }), /--session/)
  t.throws(() => parseDaemonArgs([...base, '--network', 'x', '--bogus', '1'], { NIGHTJAR_NETWORK_TOKEN: TOKEN }), /unknown option --bogus/)
})

t.test('[EP-27] the join token comes from --network-token, NIGHTJAR_NETWORK_TOKEN or --network-token-file', async (t) => {
  const env = { NIGHTJAR_NETWORK: 'n' }
  t.ok(parseDaemonArgs([...base, '--network-token', TOKEN], env).token === TOKEN, 'flag')
  t.ok(parseDaemonArgs(base, { ...env, NIGHTJAR_NETWORK_TOKEN: TOKEN }).token === TOKEN, 'env')
  const file = join(tmp, 'token')
  writeFileSync(file, TOKEN + '\n')
  t.ok(parseDaemonArgs([...base, '--network-token-file', file], env).token === TOKEN, 'file (trailing newline trimmed)')
  t.throws(() => parseDaemonArgs(base, env), /join token is required/)
  t.throws(() => parseDaemonArgs([...base, '--network-token', TOKEN, '--network-token-file', file], env), /not both/)
  t.throws(() => parseDaemonArgs([...base, '--network-token-file', join(tmp, 'missing')], env), /ENOENT/)
  // a malformed token is refused without echoing it
  const err = (() => {
    try {
      parseDaemonArgs([...base, '--network-token', 'hunter2-not-a-token'], env)
    } catch (e) {
      return e as Error
    }
  })()
  t.ok(err && !err.message.includes('hunter2'), 'usage error does not repeat the value')
})

t.test('[EP-28] --control-url / NIGHTJAR_CONTROL_URL is required; the client appends /ws/control?network=', async (t) => {
  t.throws(() => parseDaemonArgs(['--network', 'n', '--network-token', TOKEN], {}), /control-url/)
  t.equal(parseDaemonArgs(['--network', 'n', '--network-token', TOKEN], { NIGHTJAR_CONTROL_URL: 'wss://c.example' }).tunnelUrl, 'wss://c.example')
  t.throws(() => parseDaemonArgs(['--network', 'n', '--network-token', TOKEN, '--control-url', 'ftp://x'], {}), /ws:\/\/ or wss:\/\//)
  t.equal(tunnelEndpoint('wss://c.example', 'dev net').href, 'wss://c.example/ws/control?network=dev+net')
  t.equal(tunnelEndpoint('wss://c.example/base/', 'dev').href, 'wss://c.example/base/ws/control?network=dev')
  t.equal(tunnelEndpoint('ws://c.example/ws/control?network=old', 'dev').href, 'ws://c.example/ws/control?network=dev')
  t.equal(tunnelEndpoint('https://c.example', 'dev').href, 'wss://c.example/ws/control?network=dev')
})

t.test('[EP-29] --daemon-host / NIGHTJAR_DAEMON_HOST labels the daemon; default unknown', async (t) => {
  const env = { NIGHTJAR_NETWORK: 'n', NIGHTJAR_NETWORK_TOKEN: TOKEN }
  t.equal(parseDaemonArgs(base, env).host, 'unknown')
  t.equal(parseDaemonArgs(base, { ...env, NIGHTJAR_DAEMON_HOST: 'env-host' }).host, 'env-host')
  t.equal(parseDaemonArgs([...base, '--daemon-host', 'flag-host'], { ...env, NIGHTJAR_DAEMON_HOST: 'env-host' }).host, 'flag-host')
  const h = await startBroker()
  t.teardown(() => h.close())
  const { d, id } = await daemonOnline(h, { host: parseDaemonArgs(base, env).host })
  t.equal(h.broker.listDaemons(NETWORK_ID).find((e) => e.id === id)!.host, 'unknown')
  await d.stop()
})

t.test('[EP-30] --daemon-id is reused on every reconnect; without it each connect gets a fresh id', async (t) => {
  t.equal(parseDaemonArgs(base, { NIGHTJAR_NETWORK: 'n', NIGHTJAR_NETWORK_TOKEN: TOKEN, NIGHTJAR_DAEMON_ID: 'ndmn_fixed' }).daemonId, 'ndmn_fixed')
  t.throws(() => parseDaemonArgs([...base, '--daemon-id', 'has space'], { NIGHTJAR_NETWORK: 'n', NIGHTJAR_NETWORK_TOKEN: TOKEN }), /daemon-id/)
  const h = await startBroker()
  t.teardown(() => h.close())
  const proxy = await startProxy(Number(new URL(h.url).port))
  t.teardown(() => proxy.close())
  const viaProxy = `ws://127.0.0.1:${proxy.port}`

  const fixed = await daemonOnline(h, { tunnelUrl: viaProxy, daemonId: 'alice-laptop' })
  t.equal(fixed.id, 'alice-laptop')
  proxy.cut()
  await waitFor(() => h.registrations.length === 2, { what: 'reconnect' })
  t.equal(h.registrations[1].daemonId, 'alice-laptop', 'onRegister got the same id after the reconnect')
  await fixed.d.stop()

  const minted = await daemonOnline(h, { tunnelUrl: viaProxy })
  proxy.cut()
  await waitFor(() => h.registrations.length === 4, { what: 'reconnect' })
  t.match(h.registrations[2].daemonId, /^ndmn_/)
  t.not(h.registrations[3].daemonId, h.registrations[2].daemonId, 'a fresh id per connect')
  await minted.d.stop()
})

t.test('[EP-31] --ready-file gets "ready" once the control task runs', async (t) => {
  t.equal(parseDaemonArgs([...base, '--ready-file', '/x/y'], { NIGHTJAR_NETWORK: 'n', NIGHTJAR_NETWORK_TOKEN: TOKEN }).readyFile, '/x/y')
  const h = await startBroker()
  t.teardown(() => h.close())
  const file = join(tmp, 'ready-' + Date.now())
  const { d } = await daemonOnline(h, { readyFile: file })
  await waitFor(() => existsSync(file), { what: 'ready file' })
  t.equal(readFileSync(file, 'utf8'), 'ready')
  await d.stop()
})

t.test('the daemon itself refuses an OPEN for an undeclared host (whatever the server asks)', async (t) => {
  // a broker that misbehaves: declares one host, then asks for another
  const echo = await startEcho()
  t.teardown(() => echo.close())
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await once(wss, 'listening')
  t.teardown(() => {
    for (const c of wss.clients) c.terminate()
    return new Promise<void>((r) => wss.close(() => r()))
  })
  const answers: string[] = []
  wss.on('connection', (ws) => {
    const s = new TunnelSession(ws, { role: 'broker' })
    const greet = async () => {
      s.sendWelcome({ daemonId: 'ndmn_x', heartbeatMs: 10_000 })
      s.sendDeclaredHosts(['localhost:1'])
      for (const [host, port] of [['127.0.0.1', echo.port], ['localhost', echo.port], ['LOCALHOST', 1]] as const) {
        await s.open(host, port).then(
          (st) => {
            answers.push(`${host}:${port} ok`)
            st.destroy()
          },
          (e) => answers.push(`${host}:${port} ${e.code}`),
        )
      }
    }
    s.once('hello', () => { void greet() })
  })
  const port = (wss.address() as net.AddressInfo).port
  const h = { url: `ws://127.0.0.1:${port}`, token: { value: TOKEN } } as Parameters<typeof startDaemon>[0]
  const d = startDaemon(h)
  t.teardown(() => d.stop())
  await waitFor(() => answers.length === 3, { what: 'three answers' })
  t.same(answers, [`127.0.0.1:${echo.port} not_declared`, `localhost:${echo.port} not_declared`, 'LOCALHOST:1 refused'])
  t.equal(echo.sockets.size, 0, 'the echo server never saw a connection')
})

t.test('[RULE-10] the daemon dials the declared host on its own machine: an IPv6-only server does not answer an IPv4 dial', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const v6 = await startEcho('::1')
  t.teardown(() => v6.close())
  const { d } = await daemonOnline(h)
  t.teardown(() => d.stop())
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1', '::1', 'localhost'])
  await waitFor(() => d.lines.some((l) => l.startsWith('declared hosts: 127.0.0.1')))
  await t.rejects(h.broker.dial(NETWORK_ID, '127.0.0.1', v6.port), { code: 'refused' }, 'IPv4 dial refused')
  for (const host of ['::1', '[::1]']) {
    const s = await h.broker.dial(NETWORK_ID, host, v6.port)
    s.end('hi')
    t.equal((await readAll(s)).toString(), 'hi', `${host} reaches the IPv6-only server`)
  }
  // localhost means whatever the daemon machine's resolver says (here: /etc/hosts)
  const addrs = await lookup('localhost', { all: true })
  if (addrs.some((a) => a.address === '::1')) {
    const s = await h.broker.dial(NETWORK_ID, 'localhost', v6.port)
    s.end('hi')
    t.equal((await readAll(s)).toString(), 'hi', 'localhost has ::1 here, so it reaches the server')
  } else {
    await t.rejects(h.broker.dial(NETWORK_ID, 'localhost', v6.port), { code: 'refused' }, 'localhost is IPv4-only here, so it is refused')
  }
})

t.test('a dropped link mid-transfer fails the streams cleanly and the daemon restores service itself', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const echo = await startEcho()
  t.teardown(() => echo.close())
  const proxy = await startProxy(Number(new URL(h.url).port))
  t.teardown(() => proxy.close())
  const { d } = await daemonOnline(h, { tunnelUrl: `ws://127.0.0.1:${proxy.port}`, daemonId: 'dev-box' })
  t.teardown(() => d.stop())
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  await waitFor(() => d.lines.some((l) => l.startsWith('declared hosts: 127.0.0.1')))

  const streams = await Promise.all(Array.from({ length: 5 }, () => h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)))
  const outcome = streams.map((s) => endless(s))
  await waitFor(() => outcome.every((o) => o.received > 256 * 1024), { what: 'data flowing on every stream' })
  proxy.cut()
  const errors = await Promise.all(outcome.map((o) => o.error))
  t.ok(errors.every((e) => isTunnelError(e, 'closed')), 'every stream failed with a TunnelError(closed)')
  await waitFor(() => h.registrations.length === 2, { what: 'daemon back' })
  t.equal(h.registrations[1].daemonId, 'dev-box')
  const p = pattern(300_000, 11)
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  s.end(p)
  t.ok((await readAll(s)).equals(p), 'service restored after the reconnect')
  t.ok(d.lines.some((l) => /^disconnected: .*; reconnecting in \d+\.\ds$/.test(l)))
})

t.test('a silent half-open link is detected by heartbeats on both sides', async (t) => {
  const h = await startBroker({ heartbeatMs: 50, heartbeatTimeoutMs: 200 })
  t.teardown(() => h.close())
  const proxy = await startProxy(Number(new URL(h.url).port))
  t.teardown(() => proxy.close())
  const { d, id } = await daemonOnline(h, { tunnelUrl: `ws://127.0.0.1:${proxy.port}` })
  t.teardown(() => d.stop())
  proxy.freeze() // nothing passes, nothing closes
  await waitFor(() => h.disconnects.some((x) => x.daemonId === id && /heartbeat/.test(x.reason)), { what: 'broker noticed' })
  await waitFor(() => d.lines.some((l) => l.startsWith('disconnected: heartbeat timeout')), { what: 'daemon noticed' })
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 1, { what: 'daemon rejoined' })
  t.pass('both sides dropped the dead link and the daemon rejoined')
})

/** Writes until failure, reading the echo back; resolves `error` with the stream's failure. */
function endless(s: TunnelStream) {
  const o = { received: 0, error: null as unknown as Promise<Error> }
  o.error = new Promise<Error>((r) => s.once('error', r))
  s.on('data', (c: Buffer) => (o.received += c.length))
  const chunk = pattern(64 * 1024, 1)
  const pump = () => {
    while (!s.destroyed && s.write(chunk));
    if (!s.destroyed) s.once('drain', pump)
  }
  pump()
  return o
}

t.test('a killed daemon process: streams error cleanly, a restart with the same id restores service', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const echo = await startEcho()
  t.teardown(() => echo.close())
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  const env = { NIGHTJAR_NETWORK: NETWORK, NIGHTJAR_NETWORK_TOKEN: h.token.value, NIGHTJAR_CONTROL_URL: h.url }
  const first = spawnDaemon(['--daemon-id', 'kill-me'], env)
  t.teardown(() => void first.child.kill('SIGKILL'))
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 1, { what: 'child daemon online' })

  const streams = await Promise.all(Array.from({ length: 4 }, () => h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)))
  const outcome = streams.map((s) => endless(s))
  await waitFor(() => outcome.every((o) => o.received > 256 * 1024), { what: 'data flowing' })
  first.child.kill('SIGKILL')
  const errors = await Promise.all(outcome.map((o) => o.error))
  t.ok(errors.every((e) => isTunnelError(e, 'closed')), 'streams failed with TunnelError(closed)')
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 0, { what: 'dead daemon unlisted' })
  t.equal(h.disconnects[0].daemonId, 'kill-me')

  const second = spawnDaemon(['--daemon-id', 'kill-me'], env)
  t.teardown(() => void second.child.kill('SIGKILL'))
  await waitFor(() => h.broker.listDaemons(NETWORK_ID).length === 1, { what: 'restarted daemon online' })
  t.equal(h.registrations[1].daemonId, 'kill-me', 'same registry id after the restart')
  const p = pattern(200_000, 2)
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  s.end(p)
  t.ok((await readAll(s)).equals(p), 'service restored')
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0, 'SIGTERM stops the daemon with exit code 0')
})

t.test('the CLI daemon reads its token from a file and never prints it, not even when rejected', async (t) => {
  const h = await startBroker()
  t.teardown(() => h.close())
  const file = join(tmp, 'cli-token')
  writeFileSync(file, h.token.value + '\n', { mode: 0o600 })
  const ready = join(tmp, 'cli-ready')
  const child = spawnDaemon([
    '--network', NETWORK,
    '--network-token-file', file,
    '--control-url', h.url,
    '--daemon-host', 'ci-box',
    '--ready-file', ready,
  ])
  t.teardown(() => void child.child.kill('SIGKILL'))
  await waitFor(() => existsSync(ready), { what: 'ready file from the child' })
  const [entry] = h.broker.listDaemons(NETWORK_ID)
  t.equal(entry.host, 'ci-box')
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1:1'])
  await t.rejects(h.broker.dial(NETWORK_ID, '127.0.0.1', 1), { code: 'refused' })
  await t.rejects(h.broker.dial(NETWORK_ID, '127.0.0.1', 2), { code: 'not_declared' })
  const secret = h.token.value
  // rotation: the daemon is cut off, fails its rejoin with 401 and exits non-zero
  h.token.value = newToken('njt_')
  h.broker.disconnectNetwork(NETWORK_ID)
  const code = await child.exited
  t.not(code, 0, 'exit code is non-zero after 401')
  const out = child.output()
  for (const line of [`registered as ${entry.id}`, 'connected', 'dial 127.0.0.1:1: refused', 'dial 127.0.0.1:2: not_declared', UNAUTHORIZED_MESSAGE]) {
    t.ok(out.includes(line), `printed: ${line}`)
  }
  t.ok(!out.includes(secret), 'the token appears nowhere in the output')
  t.ok(!out.includes(secret.slice(4, 20)), 'not even a piece of it')
  t.ok(!h.logs.join('\n').includes(secret), 'nor in the broker log')

  // a usage error with the token on the command line does not echo it either
  const bad = spawnDaemon(['--network-token', secret, '--control-url', h.url])
  t.equal(await bad.exited, 2, 'usage error exits 2')
  t.ok(bad.output().includes('--network (or NIGHTJAR_NETWORK) is required'))
  t.ok(!bad.output().includes(secret), 'usage error output has no token')
})

t.test('a throttled join (429) waits as long as the server\'s Retry-After says, not its own shorter backoff', async (t) => {
  // the tunnel broker's join limiter answers 429 with Retry-After; the daemon's own
  // backoff here starts at 10 ms, so only the header can explain a longer pause
  const server = createServer((req, res) => {
    res.writeHead(429, { 'retry-after': '7', 'content-type': 'text/plain' })
    res.end('too many failed joins; retry later')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const lines: string[] = []
  const stop = new AbortController()
  const run = runDaemon(
    { network: NETWORK, token: TOKEN, host: 'ci-box', tunnelUrl: `ws://127.0.0.1:${port}`, backoff: { initialMs: 10, maxMs: 20 }, log: (l) => void lines.push(l) },
    { signal: stop.signal },
  )
  const waiting = await waitFor(() => lines.find((l) => l.includes('reconnecting in')), { what: 'the first reconnect line' })
  stop.abort()
  await run
  t.match(waiting, /join refused with HTTP 429/, 'says why')
  t.match(waiting, /reconnecting in 7\.0s/, 'waits the 7 s the server asked for')
  t.equal(lines.filter((l) => l.startsWith('connecting')).length, 1, 'no second attempt before that')
  t.equal(retryAfterMs(new Date(10_000 + 5_000).toUTCString(), 10_000), 5000, 'an HTTP-date Retry-After works too')
  t.equal(retryAfterMs('86400'), 3_600_000, 'a day is capped at an hour')
  t.equal(retryAfterMs('soon'), undefined, 'an unreadable header is ignored')
})
