// The deny floor: every special-purpose range no browser should reach is refused with
// `deny_floor`, in every egress mode, before any connection. The real-socket half runs in
// a network namespace that has loopback only and holds the sample addresses on `lo`
// beside a trap server, so a gap in the floor shows as a trap connection — never as
// traffic off this machine.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { CompiledPolicy, decide, normalizeAddress, type EgressMode } from '../../browser-pod/egress-policy.ts'
import { loopbackNamespace } from '../helpers/netns.ts'
import { fakeTunnel } from './harness.ts'

const PROBE = fileURLToPath(new URL('./deny-floor-probe.ts', import.meta.url))

/** the URL parser's spelling of an address, which the gateway records decisions under */
function canonical(address: string): string {
  return address.includes(':') ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address
}

// One sample per range (both ends where a range is new), in the README's table order.
const FLOOR_SAMPLES: Array<[range: string, address: string]> = [
  ['0.0.0.0/8', '0.0.0.0'],
  ['0.0.0.0/8', '0.255.255.254'],
  ['100.64.0.0/10', '100.64.0.1'],
  ['100.64.0.0/10', '100.127.255.254'],
  ['169.254.0.0/16', '169.254.169.254'],
  ['192.0.0.0/24', '192.0.0.9'],
  ['192.0.0.0/24', '192.0.0.254'],
  ['192.0.2.0/24', '192.0.2.1'],
  ['192.88.99.0/24', '192.88.99.1'],
  ['198.51.100.0/24', '198.51.100.1'],
  ['203.0.113.0/24', '203.0.113.1'],
  ['224.0.0.0/4', '224.0.0.1'],
  ['224.0.0.0/4', '239.255.255.250'],
  ['240.0.0.0/4', '240.0.0.1'],
  ['255.255.255.255/32', '255.255.255.255'],
  ['::/128', '::'],
  ['::ffff:0:0/96 (as its IPv4)', '::ffff:169.254.169.254'],
  ['::ffff:0:0:0/96 (as its IPv4)', '::ffff:0:100.64.0.1'],
  ['::/96 IPv4-compatible (as its IPv4)', '::192.0.0.9'],
  ['64:ff9b::/96 (as its IPv4)', '64:ff9b::169.254.169.254'],
  ['64:ff9b::/96 (as its IPv4)', '64:ff9b::100.64.0.1'],
  ['64:ff9b:1::/48', '64:ff9b:1::1'],
  ['64:ff9b:1::/48', '64:ff9b:1:ffff::8.8.8.8'],
  ['100::/64', '100::1'],
  ['2001::/23 (Teredo 2001::/32)', '2001::1'],
  ['2001::/23', '2001:1::1'],
  ['2001::/23', '2001:2::1'],
  ['2001:db8::/32', '2001:db8::1'],
  ['2002::/16 (as its IPv4)', '2002:a9fe:a9fe::1'],
  ['2002::/16 (as its IPv4)', '2002:c058:6301::1'],
  ['3fff::/20', '3fff::1'],
  ['5f00::/16', '5f00::1'],
  ['fe80::/10', 'fe80::1'],
  ['fec0::/10', 'fec0::1'],
  ['ff00::/8', 'ff02::1'],
  ['outside 2000::/3', '4000::1'],
  ['outside 2000::/3', 'e000::1'],
]

// Embedding forms that carry a loopback or LAN address are judged as that address: local.
const LOCAL_SAMPLES = ['10.255.255.1', '172.31.0.1', 'fd00::1', '64:ff9b::127.0.0.1', '2002:7f00:1::1', '::ffff:10.0.0.1', '64:ff9b::192.168.1.1']

// Still reachable: the tests' "public web" range, and the global unicast space.
const PUBLIC_SAMPLES = ['198.18.0.1', '198.19.255.254', '64:ff9b::8.8.8.8', '2606:4700::1111', '192.31.196.1']

t.test('policy: every special-purpose range is deny_floor in every mode', async (t) => {
  const dns = async () => { throw new Error('no DNS in this test') }
  const tunnel = fakeTunnel()
  const policy = (mode: EgressMode, declaredHosts: string[] = []) =>
    new CompiledPolicy({ mode, declaredHosts, denyCidrs: [], hostAliases: {}, tunnel })
  let checked = 0
  for (const [range, address] of FLOOR_SAMPLES) {
    for (const mode of ['platform', 'split', 'local'] as const) {
      // declared, so local and split would otherwise send it to the tunnel
      const p = policy(mode, [address.includes(':') ? `[${address}]` : address])
      t.same(await decide(p, address, 80, dns), { action: 'deny', reason: 'deny_floor' }, `${mode} ${address} (${range})`)
      checked++
    }
    const named = new CompiledPolicy({ mode: 'platform', declaredHosts: [], denyCidrs: [], hostAliases: { 'meta.example': address } })
    t.same(await decide(named, 'meta.example', 443, dns), { action: 'deny', reason: 'deny_floor' }, `a name mapped to ${address} is judged on the address`)
  }
  t.equal(checked, FLOOR_SAMPLES.length * 3)
  const platform = policy('platform')
  for (const address of LOCAL_SAMPLES) {
    t.same(await decide(platform, address, 80, dns), { action: 'refuse', reason: 'local_address' }, `${address} is judged as the local address it carries`)
  }
  for (const address of PUBLIC_SAMPLES) {
    t.same(await decide(platform, address, 80, dns), { action: 'direct', address, family: address.includes(':') ? 6 : 4 }, `${address} stays reachable`)
  }
})

t.test('policy: embedded IPv4 addresses are read from every textual form', async (t) => {
  t.same(normalizeAddress('64:ff9b::a9fe:a9fe'), { address: '169.254.169.254', type: 'ipv4' })
  t.same(normalizeAddress('[64:FF9B:0:0:0:0:7F00:1]'), { address: '127.0.0.1', type: 'ipv4' })
  t.same(normalizeAddress('::ffff:7f00:1'), { address: '127.0.0.1', type: 'ipv4' })
  t.same(normalizeAddress('2002:0a00:0001:0::1'), { address: '10.0.0.1', type: 'ipv4' })
  t.same(normalizeAddress('::1'), { address: '::1', type: 'ipv6' }, 'loopback is not an IPv4-compatible address')
  t.same(normalizeAddress('2606:4700::1111'), { address: '2606:4700::1111', type: 'ipv6' })
})

t.test('configured ranges still match an embedding address as written', async (t) => {
  const dns = async () => { throw new Error('no DNS in this test') }
  const p = new CompiledPolicy({ mode: 'platform', declaredHosts: [], denyCidrs: ['64:ff9b::/96', '198.18.0.0/15'], hostAliases: {} })
  t.same(await decide(p, '64:ff9b::8.8.8.8', 80, dns), { action: 'deny', reason: 'deny_floor' }, 'NIGHTJAR_DENY_CIDRS can close NAT64 whole')
  t.same(await decide(p, '198.18.0.1', 80, dns), { action: 'deny', reason: 'deny_floor' }, 'and the benchmarking range')
  t.same(await decide(p, '::ffff:198.18.0.1', 80, dns), { action: 'deny', reason: 'deny_floor' }, 'in any spelling')
})

t.test('through the gateway, in a loopback-only namespace: refused before any connection', async (t) => {
  const floor = FLOOR_SAMPLES.map(([, a]) => canonical(a))
  const local = LOCAL_SAMPLES.map(canonical)
  const control = ['198.18.0.1', '2606:4700::1111']
  // every sample lives on the namespace's loopback beside the trap: a gap would connect there
  const space = await loopbackNamespace(t, [...floor, ...local, ...control].filter((a) => !a.startsWith('::ffff:')))
  t.ok(space.assigned.includes('100.64.0.1') && space.assigned.includes('64:ff9b::a9fe:a9fe'), 'the new ranges sit on the trap’s loopback')

  const run = async (targets: string[]) => {
    const child = space.spawn(process.execPath, ['--import', 'tsx', PROBE], { PROBE_TARGETS: JSON.stringify(targets) })
    let out = ''
    let err = ''
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (err += d))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    t.equal(code, 0, `the probe ran (${err.slice(0, 300)})`)
    return JSON.parse(out.trim().split('\n').pop()!) as {
      trapConnections: number
      results: Array<Record<'get' | 'connect' | 'alias', { status: number; egress?: string; outcome?: string; reason?: string }> & { address: string }>
    }
  }

  // the control proves the harness would see a gap: allowed addresses do reach the trap
  const open = await run(control)
  for (const r of open.results) {
    for (const how of ['get', 'connect', 'alias'] as const) t.match(r[how], { status: 200, outcome: 'allowed' }, `${how} ${r.address} is reachable through the gateway`)
  }
  // (the gateway keeps upstream connections alive, so GETs may share one)
  t.ok(open.trapConnections >= control.length * 2, 'and the allowed requests reached the trap')

  const denied = await run(floor)
  t.equal(denied.results.length, floor.length)
  for (const r of denied.results) {
    for (const how of ['get', 'connect', 'alias'] as const) {
      t.match(r[how], { status: 403, egress: 'denied', outcome: 'denied', reason: 'deny_floor' }, `${how} ${r.address}`)
    }
  }
  t.equal(denied.trapConnections, 0, 'no denied target was ever connected to')

  const refused = await run(local)
  for (const r of refused.results) {
    for (const how of ['get', 'connect', 'alias'] as const) {
      t.match(r[how], { status: 502, egress: 'refused', outcome: 'refused', reason: 'local_address' }, `${how} ${r.address}`)
    }
  }
  t.equal(refused.trapConnections, 0, 'no embedded loopback or LAN address was connected to')
})
