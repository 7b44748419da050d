// Tunnel benchmark: what local reach costs over talking to the local server directly.
//
// Topology (loopback only), three processes as in real use: this one runs the broker and
// the consumer (api-server + browser side); a "daemon" child runs `runDaemon`; a "servers"
// child runs the developer's local servers (a byte source and a tiny HTTP server). The
// baseline talks from this process straight to the same servers. A fourth, "relay" child is
// the ceiling for any tunnel: one extra process hop that only copies bytes. On two cores a
// direct loopback copy runs its two ends in parallel, while a relay's middle process pays
// both a receive and a send for every byte, so even a relay that does nothing else lands
// far below direct (0.3–0.95x measured here).
//
//   node --import tsx bench/tunnel.ts      prints the table
import http from 'node:http'
import net from 'node:net'
import { spawn, type ChildProcess } from 'node:child_process'
import type { Duplex } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { TunnelBroker } from '../api-server/control/broker.ts'
import { runDaemon } from '../cli/daemon.ts'
import { newToken } from '../contracts/ids.ts'
import { isEntryPoint } from '../contracts/entry-point.ts'

type Row = Record<string, string | number>
const PATHS = ['direct', 'relay', 'tunnel'] as const
type Path = (typeof PATHS)[number]

const NETWORK = 'bench'
const NETWORK_ID = 'nnet_bench'
const THROUGHPUT_BYTES = 64 * 1024 * 1024
const THROUGHPUT_RUNS = 9
const LATENCY_REQUESTS = 300
const REGISTRATIONS = 20
const CHILD_ENV = 'NIGHTJAR_BENCH_TUNNEL_CHILD'

interface ChildPorts {
  source: number
  http: number
}

// ---------------------------------------------------------------- children

/** Answers the parent's CPU-time questions (both children's work counts per byte). */
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
 * only copies bytes (no framing, no WebSocket, no multiplexing), reading the upstream
 * socket the way the daemon does (large reads straight into fresh buffers).
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
    { network: NETWORK, token: process.env.BENCH_TOKEN!, controlUrl: process.env.BENCH_URL!, host: 'bench', log: () => {} },
    { signal: ac.signal },
  )
}

// ---------------------------------------------------------------- parent side

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

/** One GET; returns milliseconds. `agent` decides how the connection is made. */
function get(port: number, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(performance.now() - start))
    })
    req.on('error', reject)
  })
}

/** An http.Agent whose sockets are tunnel streams. */
class TunnelAgent extends http.Agent {
  constructor(private broker: TunnelBroker, opts: http.AgentOptions) {
    super(opts)
  }
  override createConnection(o: http.ClientRequestArgs, cb?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    this.broker.dial(NETWORK_ID, '127.0.0.1', Number(o.port)).then((s) => cb!(null, s), (e) => cb!(e, undefined as never))
    return undefined // the callback form: http waits for cb
  }
}

async function latency(port: number, agent: http.Agent): Promise<number[]> {
  for (let i = 0; i < 20; i++) await get(port, agent) // warm-up
  const xs: number[] = []
  for (let i = 0; i < LATENCY_REQUESTS; i++) xs.push(await get(port, agent))
  agent.destroy()
  return xs
}

export async function benchTunnel(): Promise<Row[]> {
  // loaded here, not at the top: the child processes run this file too and need none of it
  const { percentile, progress } = await import('./harness.ts')
  const token = newToken('njt_')
  let onReg: (() => void) | null = null
  const broker = new TunnelBroker({
    authenticate: async (n, t) => (n === NETWORK && t === token ? { networkId: NETWORK_ID, orgId: 'norg_bench' } : null),
    onRegister: () => onReg?.(),
  })
  const server = http.createServer((_q, r) => r.writeHead(404).end())
  server.on('upgrade', (req, socket, head) => {
    if (!broker.handleUpgrade(req, socket, head)) socket.destroy()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  const registered = () => new Promise<void>((r) => (onReg = r))

  const children: ChildProcess[] = []
  const start = (role: 'servers' | 'daemon' | 'relay', extraEnv: Record<string, string> = {}) => {
    const c = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: { ...process.env, [CHILD_ENV]: role, BENCH_TOKEN: token, BENCH_URL: url, ...extraEnv },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(c)
    return c
  }
  const rows: Row[] = []
  try {
    const servers = start('servers')
    const ports = await new Promise<ChildPorts>((resolve, reject) => {
      servers.once('message', (m) => resolve(m as ChildPorts))
      servers.once('exit', (c) => reject(new Error(`bench servers exited with ${c}`)))
    })
    const relayChild = start('relay', { BENCH_RELAY_TO: String(ports.source) })
    const relayPort = await new Promise<number>((resolve, reject) => {
      relayChild.once('message', (m) => resolve((m as { relay: number }).relay))
      relayChild.once('exit', (c) => reject(new Error(`bench relay exited with ${c}`)))
    })
    const firstReg = registered()
    const daemon = start('daemon')
    await firstReg
    broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
    while (broker.listDaemons(NETWORK_ID).length === 0) await new Promise((r) => setTimeout(r, 1))
    // the push is in flight on the same socket as the dials below, so it lands first

    // throughput: warm every path up, then take them in turn (direct, relay, tunnel) so that
    // a load change on a shared machine hits all three of a round; a ratio is the median of
    // the per-round ratios to direct
    const paths: Record<Path, () => Promise<Duplex>> = {
      direct: () => directConnect(ports.source),
      relay: () => directConnect(relayPort),
      tunnel: () => broker.dial(NETWORK_ID, '127.0.0.1', ports.source),
    }
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
      const theirs = (await childCpu(servers)) + (await childCpu(daemon)) + (await childCpu(relayChild))
      const ours = process.cpuUsage()
      return (theirs + ours.user + ours.system) / 1000
    }
    progress(`tunnel throughput: ${THROUGHPUT_RUNS} rounds of ${THROUGHPUT_BYTES / 2 ** 20} MiB over direct, relay and tunnel`)
    for (const open of Object.values(paths)) await pull(await open(), THROUGHPUT_BYTES)
    const mbps: Record<Path, number[]> = { direct: [], relay: [], tunnel: [] }
    const cpu: Record<Path, number> = { direct: 0, relay: 0, tunnel: 0 }
    for (let i = 0; i < THROUGHPUT_RUNS; i++) {
      for (const name of PATHS) {
        const t0 = await cpuNow()
        mbps[name].push(await pull(await paths[name](), THROUGHPUT_BYTES))
        cpu[name] += (await cpuNow()) - t0
      }
    }
    const ratioToDirect = (name: Path) => median(mbps[name].map((v, i) => v / mbps.direct[i]))
    const MBps = (name: Path) => median(mbps[name]).toFixed(0)
    const ratio = ratioToDirect('tunnel')
    rows.push({
      bench: 'tunnel',
      metric: 'ceiling: plain TCP relay, one extra hop, no tunnel (median MB/s)',
      baseline: `${MBps('direct')} direct TCP`,
      nightjar: `${MBps('relay')} via relay`,
      result: `${ratioToDirect('relay').toFixed(2)}x`,
      target: 'report',
      pass: '-',
    })
    rows.push({
      bench: 'tunnel',
      metric: `throughput, ${THROUGHPUT_BYTES / 1024 / 1024} MiB x${THROUGHPUT_RUNS} (median MB/s)`,
      baseline: `${MBps('direct')} direct TCP`,
      nightjar: `${MBps('tunnel')} via tunnel`,
      result: `${ratio.toFixed(2)}x`,
      target: '>= 0.5x',
      pass: ratio >= 0.5 ? 'yes' : 'no',
    })
    // CPU per GiB over all processes: independent of how busy the machine is
    const perGiB = (ms: number) => (ms / ((THROUGHPUT_BYTES * THROUGHPUT_RUNS) / 2 ** 30)).toFixed(0)
    for (const name of ['tunnel', 'relay'] as const) {
      rows.push({
        bench: 'tunnel',
        metric: `CPU ms per GiB moved${name === 'relay' ? ', plain relay' : ''} (all processes)`,
        baseline: `${perGiB(cpu.direct)} direct TCP`,
        nightjar: `${perGiB(cpu[name])} via ${name}`,
        result: `${(cpu[name] / cpu.direct).toFixed(2)}x the CPU`,
        target: 'report',
        pass: '-',
      })
    }

    // latency per small HTTP request: new connection each time, then keep-alive
    progress(`tunnel latency: ${LATENCY_REQUESTS} GETs per path, new connection and keep-alive; ${REGISTRATIONS} registrations`)
    for (const keepAlive of [false, true]) {
      const dl = await latency(ports.http, new http.Agent({ keepAlive, maxSockets: 1 }))
      const tl = await latency(ports.http, new TunnelAgent(broker, { keepAlive, maxSockets: 1 }))
      for (const p of [50, 95]) {
        const added = percentile(tl, p) - percentile(dl, p)
        rows.push({
          bench: 'tunnel',
          metric: `HTTP GET p${p} ms, ${keepAlive ? 'keep-alive' : 'new connection'} (n=${LATENCY_REQUESTS})`,
          baseline: `${percentile(dl, p).toFixed(3)} direct`,
          nightjar: `${percentile(tl, p).toFixed(3)} via tunnel`,
          result: `+${added.toFixed(3)} ms`,
          target: p === 50 ? '< 2 ms added' : 'report',
          pass: p === 50 ? (added < 2 ? 'yes' : 'no') : '-',
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
      const done = runDaemon({ network: NETWORK, token, controlUrl: url, host: 'bench-reg', log }, { signal: ac.signal })
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
    await broker.close()
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
  }
  return rows
}



const role = process.env[CHILD_ENV]
if (role && process.send) {
  ;(role === 'servers' ? serversMain() : role === 'relay' ? relayMain() : daemonMain()).catch((e) => {
    console.error(e)
    process.exit(1)
  })
} else if (isEntryPoint(import.meta.url)) {
  Promise.all([benchTunnel(), import('./harness.ts')]).then(([rows, { printTable }]) => printTable('local reach tunnel vs direct loopback', rows), (e) => {
    console.error(e)
    process.exitCode = 1
  })
}
