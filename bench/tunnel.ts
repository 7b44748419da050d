// Tunnel benchmark: what local reach costs over talking to the local server directly, on
// loopback with one process per role (api-server side, daemon, local servers, a pod's egress
// gateway, a copy-only relay as the ceiling). Paths, in the same rounds: direct, relay, tunnel,
// egress (the real egress path of a session). Ratios are medians of per-round ratios, so a
// load change hits every path of a round alike. Topology and routes: bench/README.md#how-each-bench-measures
//   node --import tsx bench/tunnel.ts      prints the table
import http from 'node:http'
import net from 'node:net'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { Duplex } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { TunnelBroker } from '../api-server/tunnel-broker/broker.ts'
import { EgressRelay } from '../api-server/networks/egress-relay.ts'
import { ReplicaDialServer } from '../api-server/replicas/channel.ts'
import { TunnelError } from '../tunnel/errors.ts'
import type { SessionPlane } from '../api-server/sessions/plane.ts'
import { runDaemon } from '../cli/daemon.ts'
import { newToken } from '../contracts/ids.ts'
import { isEntryPoint } from '../contracts/entry-point.ts'

type Row = Record<string, string | number>

const NETWORK = 'bench'
const NETWORK_ID = 'nnet_bench'
const SESSION_ID = 'nses_bench'
const DECLARED = ['127.0.0.1']
const THROUGHPUT_BYTES = 64 * 1024 * 1024
const THROUGHPUT_RUNS = 9
const LATENCY_REQUESTS = 300
const REGISTRATIONS = 20
const CHILD_ENV = 'NIGHTJAR_BENCH_TUNNEL_CHILD'

interface ChildPorts {
  source: number
  http: number
}

/**
 * One way for a pod's gateway into the tunnel: the /ws/egress URL it dials. The first
 * route is the owner replica (the one holding the daemon); later routes are compared to it.
 */
export interface EgressRoute {
  /** key in the rows and in the pod child's answer */
  name: string
  /** how the rows name the path, e.g. "egress via the owner replica" */
  label: string
  /** the hops after the pod's gateway, for the throughput row */
  hops: string
  /** ws://…/ws/egress of the replica the gateway dials */
  relayUrl: string
}

// ---------------------------------------------------------------- children

/** Answers the parent's CPU-time questions (every child's work counts per byte). */
function reportCpu(): void {
  process.on('message', (m) => {
    if (m === 'cpu') process.send!({ cpu: process.cpuUsage() })
  })
}

async function serversMain(): Promise<void> {
  const block = Buffer.alloc(256 * 1024, 0x5a)
  // source: sends `n` bytes (n = first 8 bytes the client sends), then closes
  const source = net.createServer((s) => {
    s.once('data', (head: Buffer) => {
      let left = Number(head.readBigUInt64BE(0))
      const pump = () => {
        while (left > 0) {
          const n = Math.min(left, block.length)
          left -= n
          if (!s.write(n === block.length ? block : block.subarray(0, n))) return void s.once('drain', pump)
        }
        s.end()
      }
      pump()
    })
    s.on('error', () => {})
  })
  const web = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain')
    res.end('ok')
  })
  await new Promise<void>((r) => source.listen(0, '127.0.0.1', r))
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r))
  process.on('disconnect', () => {
    source.close()
    web.close()
    process.exit(0)
  })
  reportCpu()
  const ports: ChildPorts = { source: (source.address() as net.AddressInfo).port, http: (web.address() as net.AddressInfo).port }
  process.send!(ports)
}

/**
 * The ceiling for any user-space relay: one extra loopback hop through a Node process that
 * only copies bytes (no framing, no WebSocket, no multiplexing), with large reads straight
 * into buffers as the daemon reads. It takes a fresh buffer per read: reusing each once
 * written, as the daemon does (see allocWithHeadroom), left a relay's throughput where it
 * was here and its CPU within a few percent.
 */
async function relayMain(): Promise<void> {
  const upstreamPort = Number(process.env.BENCH_RELAY_TO)
  const relay = net.createServer((client) => {
    let readSize = 16 * 1024
    const upstream = net.connect({
      host: '127.0.0.1',
      port: upstreamPort,
      onread: {
        buffer: () => Buffer.allocUnsafeSlow(readSize),
        callback: (n: number, buf: Uint8Array) => {
          if (n === buf.length) readSize = Math.min(readSize * 2, 256 * 1024)
          return client.write(n === buf.length ? buf : (buf as Buffer).subarray(0, n))
        },
      },
    })
    client.on('drain', () => upstream.resume())
    upstream.on('end', () => client.end())
    client.pipe(upstream)
    for (const s of [client, upstream]) s.on('error', () => { client.destroy(); upstream.destroy() })
  })
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r))
  process.on('disconnect', () => {
    relay.close()
    process.exit(0)
  })
  reportCpu()
  process.send!({ relay: (relay.address() as net.AddressInfo).port })
}

async function daemonMain(): Promise<void> {
  const ac = new AbortController()
  process.on('disconnect', () => ac.abort())
  reportCpu()
  await runDaemon(
    { network: NETWORK, token: process.env.BENCH_TOKEN!, tunnelUrl: process.env.BENCH_URL!, host: 'bench', log: () => {} },
    { signal: ac.signal },
  )
}

/**
 * A browser pod's egress: one gateway per route, each configured as a session with
 * `local` egress and the bench's declared hosts, tunnelling through the pod's real dialer.
 */
async function podMain(): Promise<void> {
  const { EgressGateway } = await import('../browser-pod/egress-gateway.ts')
  const { RelayTunnelDialer } = await import('../browser-pod/tunnel-dialer.ts')
  const routes = JSON.parse(process.env.BENCH_EGRESS_ROUTES!) as EgressRoute[]
  const gateways: Record<string, number> = {}
  const running: Array<{ close(): Promise<void> }> = []
  for (const route of routes) {
    const gw = new EgressGateway()
    gateways[route.name] = await gw.listen()
    gw.configure({
      mode: 'local',
      declaredHosts: DECLARED,
      denyCidrs: [],
      hostAliases: {},
      tunnel: new RelayTunnelDialer(route.relayUrl, process.env.BENCH_NODE_TOKEN!, () => SESSION_ID),
    })
    running.push(gw)
  }
  process.on('disconnect', () => {
    void Promise.all(running.map((g) => g.close())).finally(() => process.exit(0))
  })
  reportCpu()
  process.send!({ gateways })
}

// ---------------------------------------------------------------- the api-server side

export type UpgradeHandler = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => boolean

/** One api-server replica as the bench runs it: an HTTP server whose upgrades go to the first handler that takes them. */
export interface BenchReplica {
  /** http://127.0.0.1:port */
  url: string
  close(): Promise<void>
}

export async function startReplica(handlers: UpgradeHandler[]): Promise<BenchReplica> {
  const server = http.createServer((_q, r) => r.writeHead(404).end())
  server.on('upgrade', (req, socket, head) => {
    for (const h of handlers) if (h(req, socket, head)) return
    socket.destroy()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/**
 * The two plane lookups the egress relay makes, answered for the bench's one session:
 * its pod's token, and its network and launch-time declared hosts.
 */
export function benchPlane(podToken: string): SessionPlane {
  const session = { metadata: { name: SESSION_ID }, spec: { networkRef: { name: NETWORK_ID }, declaredHosts: DECLARED } }
  return {
    pods: { lookup: async (id: string) => (id === SESSION_ID ? { token: podToken } : undefined) },
    sessions: { get: async (id: string) => (id === SESSION_ID ? session : undefined) },
  } as unknown as SessionPlane
}

// ---------------------------------------------------------------- measuring

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Reads `bytes` from a source connection; returns MB/s. */
async function pull(conn: Duplex, bytes: number): Promise<number> {
  const head = Buffer.alloc(8)
  head.writeBigUInt64BE(BigInt(bytes))
  const start = performance.now()
  conn.write(head)
  let got = 0
  for await (const c of conn) got += (c as Buffer).length
  const secs = (performance.now() - start) / 1000
  if (got !== bytes) throw new Error(`short read: ${got} of ${bytes}`)
  return bytes / 1e6 / secs
}

function directConnect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s))
    s.on('error', reject)
  })
}

/** A CONNECT tunnel through a pod's gateway, as Chromium opens one: resolves once the gateway answered 200. */
function connectVia(gatewayPort: number, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(gatewayPort, '127.0.0.1', () => s.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`))
    const onClose = () => reject(new Error('the gateway closed the connection before answering'))
    s.on('error', reject)
    s.once('close', onClose)
    let head = Buffer.alloc(0)
    // read the answer with read(), not 'data': once the 'readable' listener is gone the
    // socket is back in its initial mode, so whoever takes it next may read it either way
    const onReadable = () => {
      for (let c: Buffer | null; (c = s.read()) !== null; ) {
        head = Buffer.concat([head, c])
        const end = head.indexOf('\r\n\r\n')
        if (end < 0) continue
        s.off('readable', onReadable)
        s.off('error', reject)
        s.off('close', onClose)
        const status = head.toString('latin1', 0, head.indexOf('\r\n'))
        if (!/^HTTP\/1\.1 200 /.test(status)) {
          s.destroy()
          return reject(new Error(`gateway answered ${status}`))
        }
        if (end + 4 < head.length) s.unshift(head.subarray(end + 4))
        return resolve(s)
      }
    }
    s.on('readable', onReadable)
  })
}

/** One GET; returns milliseconds. `agent` decides how the connection is made; `viaProxy` sends it to a forward proxy. */
function get(port: number, agent: http.Agent, viaProxy?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const target = viaProxy === undefined ? { host: '127.0.0.1', port, path: '/' } : { host: '127.0.0.1', port: viaProxy, path: `http://127.0.0.1:${port}/`, headers: { host: `127.0.0.1:${port}` } }
    const req = http.get({ ...target, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET answered ${res.statusCode}`))
      res.resume()
      res.on('end', () => resolve(performance.now() - start))
    })
    req.on('error', reject)
  })
}

/** An http.Agent whose sockets come from `open` (a tunnel stream, a CONNECT through a gateway). */
class StreamAgent extends http.Agent {
  private open: (port: number) => Promise<Duplex>
  constructor(open: (port: number) => Promise<Duplex>, opts: http.AgentOptions) {
    super(opts)
    this.open = open
  }
  override createConnection(o: http.ClientRequestArgs, cb?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    this.open(Number(o.port)).then((s) => cb!(null, s), (e) => cb!(e, undefined as never))
    return undefined // the callback form: http waits for cb
  }
}

async function latency(port: number, agent: http.Agent, viaProxy?: number): Promise<number[]> {
  for (let i = 0; i < 20; i++) await get(port, agent, viaProxy) // warm-up
  const xs: number[] = []
  for (let i = 0; i < LATENCY_REQUESTS; i++) xs.push(await get(port, agent, viaProxy))
  agent.destroy()
  return xs
}

// ---------------------------------------------------------------- the benchmark

export async function benchTunnel(): Promise<Row[]> {
  // loaded here, not at the top: the child processes run this file too and need none of it
  const { percentile, progress } = await import('./harness.ts')
  const token = newToken('njt_')
  const podToken = randomBytes(24).toString('hex') // a pod's token (operator-minted)
  let onReg: (() => void) | null = null
  const broker = new TunnelBroker({
    authenticate: async (n, t) => (n === NETWORK && t === token ? { networkId: NETWORK_ID, orgId: 'norg_bench' } : null),
    onRegister: () => onReg?.(),
  })
  const egress = new EgressRelay({ plane: benchPlane(podToken), broker })
  // the owner replica: the daemon joins here, and the pod's egress lands here (upgrades go
  // to the first handler that takes them, as in api-server/app.ts)
  const ownerHandlers: UpgradeHandler[] = [(q, s, h) => broker.handleUpgrade(q, s, h), (q, s, h) => egress.handleUpgrade(q, s, h)]
  const owner = await startReplica(ownerHandlers)
  const wsUrl = (replica: BenchReplica, path: string) => replica.url.replace(/^http/, 'ws') + path
  const registered = () => new Promise<void>((r) => (onReg = r))
  const replicas: BenchReplica[] = [owner]
  const closers: Array<() => void> = [() => egress.close()]

  // Egress routes, in the order their rows appear. A replica that does not hold the daemon
  // plugs in here: push the owner's handler for forwarded dials onto `ownerHandlers`; start
  // the other replica with startReplica (its own EgressRelay over benchPlane(podToken), a
  // broker that holds no daemon, forwarding that names `owner.url`); push it to `replicas`
  // and its close to `closers`; add { name: 'egress-forwarded', label: 'egress via a
  // non-owner replica', hops: '/ws/egress → replica → owner → broker → daemon', relayUrl:
  // wsUrl(it, '/ws/egress') }. The pod child starts a gateway per route; the route's
  // throughput, CPU and latency rows, and its rows against the owner path (>= 0.7x
  // throughput, < 1 ms added p50), follow by themselves.
  const egressRoutes: EgressRoute[] = [
    { name: 'egress', label: 'egress via the owner replica', hops: '/ws/egress → broker → daemon', relayUrl: wsUrl(owner, '/ws/egress') },
  ]
  // a replica without the daemon: its egress relay forwards each dial to the owner over the
  // replica channel (api-server/replicas/channel.ts), as on a dial the Service sent elsewhere
  const replicaSecret = randomBytes(24).toString('hex')
  const forwardedDials = new ReplicaDialServer({ secret: replicaSecret, broker })
  ownerHandlers.push((q, s, h) => forwardedDials.handleUpgrade(q, s, h))
  const forwarder = new EgressRelay({
    plane: benchPlane(podToken),
    broker: { dial: async () => { throw new TunnelError('no_daemon') } },
    forwarding: { secret: replicaSecret, ownerOf: async () => ({ id: 'nrep_owner', address: owner.url }) },
  })
  const elsewhere = await startReplica([(q, s, h) => forwarder.handleUpgrade(q, s, h)])
  replicas.push(elsewhere)
  closers.push(() => forwarder.close(), () => forwardedDials.close())
  egressRoutes.push({ name: 'egress-forwarded', label: 'egress via a non-owner replica', hops: '/ws/egress → replica → owner → broker → daemon', relayUrl: wsUrl(elsewhere, '/ws/egress') })

  const children: ChildProcess[] = []
  const start = (role: 'servers' | 'daemon' | 'relay' | 'pod', extraEnv: Record<string, string> = {}) => {
    const c = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, [CHILD_ENV]: role, BENCH_TOKEN: token, BENCH_URL: wsUrl(owner, ''), ...extraEnv },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(c)
    return c
  }
  const answer = <T>(c: ChildProcess, what: string) =>
    new Promise<T>((resolve, reject) => {
      c.once('message', (m) => resolve(m as T))
      c.once('exit', (code) => reject(new Error(`bench ${what} exited with ${code}`)))
    })
  const rows: Row[] = []
  try {
    const servers = start('servers')
    const ports = await answer<ChildPorts>(servers, 'servers')
    const relayChild = start('relay', { BENCH_RELAY_TO: String(ports.source) })
    const relayPort = (await answer<{ relay: number }>(relayChild, 'relay')).relay
    const pod = start('pod', { BENCH_EGRESS_ROUTES: JSON.stringify(egressRoutes), BENCH_NODE_TOKEN: podToken })
    const gateways = (await answer<{ gateways: Record<string, number> }>(pod, 'pod')).gateways
    const firstReg = registered()
    const daemon = start('daemon')
    await firstReg
    broker.pushDeclaredHosts(NETWORK_ID, DECLARED)
    while (broker.listDaemons(NETWORK_ID).length === 0) await new Promise((r) => setTimeout(r, 1))
    // the push is in flight on the same socket as the dials below, so it lands first

    // throughput: warm every path up, then take them in turn so that a load change on a
    // shared machine hits all of a round; a ratio is the median of the per-round ratios
    const paths: Record<string, () => Promise<Duplex>> = {
      direct: () => directConnect(ports.source),
      relay: () => directConnect(relayPort),
      tunnel: () => broker.dial(NETWORK_ID, '127.0.0.1', ports.source),
    }
    for (const r of egressRoutes) paths[r.name] = () => connectVia(gateways[r.name], ports.source)
    const names = Object.keys(paths)
    const childCpu = (c: ChildProcess) =>
      new Promise<number>((r) => {
        const on = (m: unknown) => {
          if (m && typeof m === 'object' && 'cpu' in m) {
            c.off('message', on)
            const u = (m as { cpu: NodeJS.CpuUsage }).cpu
            r(u.user + u.system)
          }
        }
        c.on('message', on)
        c.send('cpu')
      })
    const cpuNow = async () => {
      let theirs = 0
      for (const c of [servers, daemon, relayChild, pod]) theirs += await childCpu(c)
      const ours = process.cpuUsage()
      return (theirs + ours.user + ours.system) / 1000
    }
    progress(`tunnel throughput: ${THROUGHPUT_RUNS} rounds of ${THROUGHPUT_BYTES / 2 ** 20} MiB over ${names.join(', ')}`)
    for (const open of Object.values(paths)) await pull(await open(), THROUGHPUT_BYTES)
    const mbps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
    const cpu: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]))
    for (let i = 0; i < THROUGHPUT_RUNS; i++) {
      for (const name of names) {
        const t0 = await cpuNow()
        mbps[name].push(await pull(await paths[name](), THROUGHPUT_BYTES))
        cpu[name] += (await cpuNow()) - t0
      }
    }
    const ratio = (name: string, to: string) => median(mbps[name].map((v, i) => v / mbps[to][i]))
    const MBps = (name: string) => median(mbps[name]).toFixed(0)
    rows.push({
      bench: 'tunnel',
      metric: 'ceiling: plain TCP relay, one extra hop, no tunnel (median MB/s)',
      baseline: `${MBps('direct')} direct TCP`,
      nightjar: `${MBps('relay')} via relay`,
      result: `${ratio('relay', 'direct').toFixed(2)}x`,
      target: 'report',
      pass: '-',
    })
    const tunnelToDirect = ratio('tunnel', 'direct')
    rows.push({
      bench: 'tunnel',
      metric: `throughput, ${THROUGHPUT_BYTES / 1024 / 1024} MiB x${THROUGHPUT_RUNS} (median MB/s)`,
      baseline: `${MBps('direct')} direct TCP`,
      nightjar: `${MBps('tunnel')} via tunnel`,
      result: `${tunnelToDirect.toFixed(2)}x`,
      target: '>= 0.5x',
      pass: tunnelToDirect >= 0.5 ? 'yes' : 'no',
    })
    const tunnelToRelay = ratio('tunnel', 'relay')
    rows.push({
      bench: 'tunnel',
      metric: 'throughput, tunnel vs the plain relay, same rounds (median MB/s)',
      baseline: `${MBps('relay')} via relay`,
      nightjar: `${MBps('tunnel')} via tunnel`,
      result: `${tunnelToRelay.toFixed(2)}x`,
      target: '>= 0.85x',
      pass: tunnelToRelay >= 0.85 ? 'yes' : 'no',
    })
    const [ownerRoute, ...otherRoutes] = egressRoutes
    for (const r of egressRoutes) {
      rows.push({
        bench: 'tunnel',
        metric: `throughput, ${r.label}: pod gateway → ${r.hops} (median MB/s)`,
        baseline: `${MBps('tunnel')} via tunnel`,
        nightjar: `${MBps(r.name)} via ${r.name}`,
        result: `${ratio(r.name, 'tunnel').toFixed(2)}x tunnel, ${ratio(r.name, 'direct').toFixed(2)}x direct`,
        target: 'report',
        pass: '-',
      })
    }
    for (const r of otherRoutes) {
      const x = ratio(r.name, ownerRoute.name)
      rows.push({
        bench: 'tunnel',
        metric: `throughput, ${r.label} vs ${ownerRoute.label} (median MB/s)`,
        baseline: `${MBps(ownerRoute.name)} via ${ownerRoute.name}`,
        nightjar: `${MBps(r.name)} via ${r.name}`,
        result: `${x.toFixed(2)}x`,
        target: '>= 0.7x',
        pass: x >= 0.7 ? 'yes' : 'no',
      })
    }
    // CPU per GiB over all processes: independent of how busy the machine is
    const perGiB = (ms: number) => (ms / ((THROUGHPUT_BYTES * THROUGHPUT_RUNS) / 2 ** 30)).toFixed(0)
    for (const name of ['tunnel', 'relay', ...egressRoutes.map((r) => r.name)]) {
      rows.push({
        bench: 'tunnel',
        metric: `CPU ms per GiB moved${name === 'tunnel' ? '' : name === 'relay' ? ', plain relay' : `, ${name}`} (all processes)`,
        baseline: `${perGiB(cpu.direct)} direct TCP`,
        nightjar: `${perGiB(cpu[name])} via ${name}`,
        result: `${(cpu[name] / cpu.direct).toFixed(2)}x the CPU`,
        target: 'report',
        pass: '-',
      })
    }

    // latency per small HTTP request: new connection each time, then keep-alive. Through a
    // pod's gateway, "new connection" is a plain proxied GET (the gateway dials the tunnel
    // for each one: a WebSocket to /ws/egress, OPEN, the daemon's connect), "keep-alive"
    // reuses one CONNECT tunnel through the gateway.
    progress(`tunnel latency: ${LATENCY_REQUESTS} GETs per path, new connection and keep-alive; ${REGISTRATIONS} registrations`)
    for (const keepAlive of [false, true]) {
      const how = keepAlive ? 'keep-alive' : 'new connection'
      const opts = { keepAlive, maxSockets: 1 }
      const dl = await latency(ports.http, new http.Agent(opts))
      const tl = await latency(ports.http, new StreamAgent((port) => broker.dial(NETWORK_ID, '127.0.0.1', port), opts))
      const el: Record<string, number[]> = {}
      for (const r of egressRoutes) {
        el[r.name] = keepAlive
          ? await latency(ports.http, new StreamAgent((port) => connectVia(gateways[r.name], port), opts))
          : await latency(ports.http, new http.Agent(opts), gateways[r.name])
      }
      const added = (xs: number[], base: number[], p: number) => percentile(xs, p) - percentile(base, p)
      for (const p of [50, 95]) {
        rows.push({
          bench: 'tunnel',
          metric: `HTTP GET p${p} ms, ${how} (n=${LATENCY_REQUESTS})`,
          baseline: `${percentile(dl, p).toFixed(3)} direct`,
          nightjar: `${percentile(tl, p).toFixed(3)} via tunnel`,
          result: `+${added(tl, dl, p).toFixed(3)} ms`,
          target: p === 50 ? '< 2 ms added' : 'report',
          pass: p === 50 ? (added(tl, dl, p) < 2 ? 'yes' : 'no') : '-',
        })
      }
      for (const r of egressRoutes) {
        for (const p of [50, 95]) {
          rows.push({
            bench: 'tunnel',
            metric: `HTTP GET p${p} ms, ${how}, ${r.label} (n=${LATENCY_REQUESTS})`,
            baseline: `${percentile(dl, p).toFixed(3)} direct`,
            nightjar: `${percentile(el[r.name], p).toFixed(3)} via ${r.name}`,
            result: `+${added(el[r.name], dl, p).toFixed(3)} ms`,
            target: 'report',
            pass: '-',
          })
        }
      }
      for (const r of otherRoutes) {
        const extra = added(el[r.name], el[ownerRoute.name], 50)
        rows.push({
          bench: 'tunnel',
          metric: `HTTP GET p50 ms, ${how}, ${r.label} vs ${ownerRoute.label}`,
          baseline: `${percentile(el[ownerRoute.name], 50).toFixed(3)} via ${ownerRoute.name}`,
          nightjar: `${percentile(el[r.name], 50).toFixed(3)} via ${r.name}`,
          result: `${extra >= 0 ? '+' : ''}${extra.toFixed(3)} ms`,
          target: '< 1 ms added',
          pass: extra < 1 ? 'yes' : 'no',
        })
      }
    }

    // registration: daemon start → the daemon's own "registered as" (WELCOME received)
    const regs: number[] = []
    for (let i = 0; i < REGISTRATIONS; i++) {
      const ac = new AbortController()
      let welcomed!: () => void
      const reg = new Promise<void>((r) => (welcomed = r))
      const log = (line: string) => line.startsWith('registered as ') && welcomed()
      const start = performance.now()
      const done = runDaemon({ network: NETWORK, token, tunnelUrl: wsUrl(owner, ''), host: 'bench-reg', log }, { signal: ac.signal })
      await reg
      regs.push(performance.now() - start)
      ac.abort()
      await done
    }
    rows.push({
      bench: 'tunnel',
      metric: `daemon registration ms (n=${REGISTRATIONS})`,
      baseline: 'spec: about 1 s',
      nightjar: `p50 ${percentile(regs, 50).toFixed(1)}, p95 ${percentile(regs, 95).toFixed(1)}`,
      result: `${percentile(regs, 50).toFixed(1)} ms p50`,
      target: '< 100 ms p50',
      pass: percentile(regs, 50) < 100 ? 'yes' : 'no',
    })
  } finally {
    for (const c of children) {
      if (c.connected) c.disconnect()
      c.kill()
    }
    for (const close of closers) close()
    await broker.close()
    for (const r of replicas) await r.close()
  }
  return rows
}

const role = process.env[CHILD_ENV]
if (role && process.send) {
  const main = { servers: serversMain, relay: relayMain, daemon: daemonMain, pod: podMain }[role]
  ;(main ?? daemonMain)().catch((e) => {
    console.error(e)
    process.exit(1)
  })
} else if (isEntryPoint(import.meta.url)) {
  Promise.all([benchTunnel(), import('./harness.ts')]).then(([rows, { printTable }]) => printTable('local reach tunnel vs direct loopback', rows), (e) => {
    console.error(e)
    process.exitCode = 1
  })
}
