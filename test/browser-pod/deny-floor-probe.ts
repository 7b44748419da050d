// Runs inside a loopback-only network namespace (deny-floor.test.ts starts it there): a
// trap HTTP server on every address of the namespace (port 80, IPv4 and IPv6), and a real
// egress gateway in platform mode. Every target is asked for twice through the gateway —
// a plain proxied GET and a CONNECT — by address and by a hostAliases name that maps to
// it. Prints one JSON line: each answer, the gateway's decision, and how many connections
// the trap saw. A gap in the deny floor shows as a trap connection (or a failed
// connect): the namespace has no route off this machine.
import http from 'node:http'
import type net from 'node:net'
import { EgressGateway } from '../../browser-pod/egress-gateway.ts'

interface Answer { status: number; egress?: string }

const targets = JSON.parse(process.env.PROBE_TARGETS ?? '[]') as string[]

function literal(address: string): string {
  return address.includes(':') ? `[${address}]` : address
}

function get(port: number, url: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, egress: res.headers['x-nightjar-egress'] as string | undefined }))
    })
    req.on('error', () => resolve({ status: 0 }))
    req.end()
  })
}

function connect(port: number, authority: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'CONNECT', path: authority, agent: false })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve({ status: res.statusCode!, egress: res.headers['x-nightjar-egress'] as string | undefined })
    })
    req.on('error', () => resolve({ status: 0 }))
    req.end()
  })
}

let trapConnections = 0
const trap = http.createServer((_req, res) => res.end('trap'))
trap.on('connection', (s: net.Socket) => { trapConnections++; s.on('error', () => {}) })
await new Promise<void>((resolve, reject) => {
  trap.once('error', reject)
  trap.listen({ host: '::', port: 80, ipv6Only: false }, () => resolve())
})

const gw = new EgressGateway({ connectTimeoutMs: 2000, dns: async () => { throw Object.assign(new Error('no DNS here'), { code: 'ENOTFOUND' }) } })
await gw.listen()
const hostAliases = Object.fromEntries(targets.map((a, i) => [`t${i}.example`, a]))
gw.configure({ mode: 'platform', declaredHosts: [], denyCidrs: [], hostAliases })

const results = []
for (const [i, address] of targets.entries()) {
  const byAddress = await get(gw.port, `http://${literal(address)}/`)
  const byAddressDecision = gw.lastDecision(address, 80)
  const tunnel = await connect(gw.port, `${literal(address)}:80`)
  const tunnelDecision = gw.lastDecision(address, 80)
  const byName = await get(gw.port, `http://t${i}.example/`)
  const byNameDecision = gw.lastDecision(`t${i}.example`, 80)
  results.push({
    address,
    get: { ...byAddress, outcome: byAddressDecision?.outcome, reason: byAddressDecision?.reason },
    connect: { ...tunnel, outcome: tunnelDecision?.outcome, reason: tunnelDecision?.reason },
    alias: { ...byName, outcome: byNameDecision?.outcome, reason: byNameDecision?.reason },
  })
}
await gw.close()
trap.close()
process.stdout.write(JSON.stringify({ results, trapConnections }) + '\n')
