// The deny floor: addresses no outbound connection of Nightjar may reach — a browser's
// (browser-pod/egress-policy.ts), a session's upstream proxy (contracts/proxy.ts), the
// api-server's webhook deliveries and client metadata fetches — and the "local" ranges
// and names (loopback, LAN, localhost) each of them refuses unless told otherwise. One
// table, so they cannot drift. Pure: node:net only.
import { BlockList, isIP } from 'node:net'

// The deny floor, every mode: from the IANA special-purpose registries, every block that is
// not globally reachable and not "local", plus multicast and broadcast (cloud metadata is
// link-local). Addresses carrying an IPv4 address are judged as it (normalizeAddress);
// 198.18.0.0/15 stays reachable on purpose (the tests' public web). Each block and why:
// docs/local-reach.md#the-deny-floor (the two tables must stay the same)
/** a CIDR (parseCidr reads it, as it reads NIGHTJAR_DENY_CIDRS), or a range that is no one CIDR */
type Block = string | { from: string; to: string }
const FLOOR_V4: ReadonlyArray<Block> = [
  '0.0.0.0/8',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4', // reserved; holds 255.255.255.255
]
const FLOOR_V6: ReadonlyArray<Block> = [
  '::/128',
  { from: '::2', to: '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' }, // below 2000::/3, ::1 excepted
  '4000::/2',
  '8000::/2',
  'c000::/3',
  'e000::/4',
  'f000::/5',
  'f800::/6', // fc00::/7 (local) sits between f800::/6 and fe00::/7
  'fe00::/7',
  '2001::/23',
  '2001:db8::/32',
  '3fff::/20',
]

// "Local" targets: loopback and LAN (RFC 1918, IPv6 ULA). Platform egress refuses
// them; split egress sends them to the tunnel when declared.
const LOCAL: ReadonlyArray<Block> = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '::1/128',
  'fc00::/7',
]

// One list per family: node's BlockList matches an IPv4 rule against its IPv4-mapped IPv6
// form and back, and the floor's IPv6 blocks must not judge IPv4 addresses.
function blockList(entries: ReadonlyArray<Block>): BlockList {
  const b = new BlockList()
  for (const e of entries) {
    if (typeof e === 'string') b.addSubnet(...parseCidr(e))
    else b.addRange(e.from, e.to, 'ipv6')
  }
  return b
}

const floorV4 = blockList(FLOOR_V4)
const floorV6 = blockList(FLOOR_V6)
const localList = blockList(LOCAL)

function inFloor(n: { address: string; type: 'ipv4' | 'ipv6' }): boolean {
  return n.type === 'ipv4' ? floorV4.check(n.address, 'ipv4') : floorV6.check(n.address, 'ipv6')
}

/** Parses `10.0.0.0/8`, `fd00::/8` or a bare address. Throws on anything else. */
export function parseCidr(text: string): [string, number, 'ipv4' | 'ipv6'] {
  const [addr, prefixText] = text.trim().split('/')
  const v = isIP(addr)
  if (!v) throw new Error(`invalid CIDR: ${text}`)
  const max = v === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`invalid CIDR: ${text}`)
  return [addr, prefix, v === 4 ? 'ipv4' : 'ipv6']
}

/** The 16-bit groups of an IPv6 address (any valid textual form, dotted tail included). */
function groups(address: string): number[] {
  let a = address
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(a)
  if (dotted) {
    const o = dotted[2].split('.').map(Number)
    a = `${dotted[1]}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`
  }
  const [head, tail] = a.includes('::') ? a.split('::') : [a, undefined]
  const h = head ? head.split(':') : []
  const t = tail === undefined ? [] : tail ? tail.split(':') : []
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0')
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16))
}

function v4(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/**
 * An IPv6 address that carries an IPv4 address is judged as that IPv4 address:
 * IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, the deprecated
 * IPv4-compatible ::a.b.c.d (not :: and ::1), NAT64 64:ff9b::a.b.c.d (RFC 6052, the
 * well-known /96) and 6to4 2002:aabb:ccdd::/48 (RFC 3056). Everything else stays IPv6.
 */
export function normalizeAddress(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase()
  const family = isIP(a)
  if (family === 4) return { address: a, type: 'ipv4' }
  if (family !== 6) return { address: a, type: 'ipv6' }
  const g = groups(a)
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 5) && g[5] === 0xffff) return { address: v4(g[6], g[7]), type: 'ipv4' } // mapped
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return { address: v4(g[6], g[7]), type: 'ipv4' } // translated
  if (zeros(0, 6) && (g[6] !== 0 || g[7] > 1)) return { address: v4(g[6], g[7]), type: 'ipv4' } // compatible
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return { address: v4(g[6], g[7]), type: 'ipv4' } // NAT64
  if (g[0] === 0x2002) return { address: v4(g[1], g[2]), type: 'ipv4' } // 6to4
  return { address: a, type: 'ipv6' }
}

/** Is this address (any textual form) under the fixed deny floor? */
export function inDenyFloor(address: string): boolean {
  return inFloor(normalizeAddress(address))
}

/** Is this address loopback or LAN (RFC 1918, IPv6 ULA), judged like the floor (IPv4 carried in IPv6 as IPv4)? */
export function isLocalAddress(address: string): boolean {
  const n = normalizeAddress(address)
  return localList.check(n.address, n.type)
}

/** `localhost` and every `*.localhost` name (RFC 6761), in any case, trailing dots or not. */
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.+$/, '')
  return h === 'localhost' || h.endsWith('.localhost')
}

/** The floor plus configured ranges (NIGHTJAR_DENY_CIDRS: the cluster's pod and service networks, the control plane). */
export class DenyRules {
  private readonly extra: BlockList
  constructor(denyCidrs: readonly string[]) {
    this.extra = blockList(denyCidrs.filter((c) => c.trim()))
  }

  denied(address: string): boolean {
    const n = normalizeAddress(address)
    if (inFloor(n) || this.extra.check(n.address, n.type)) return true
    // a configured IPv6 range (say 64:ff9b::/96 itself) also matches the address as written
    const raw = address.replace(/^\[|\]$/g, '').toLowerCase()
    return n.type === 'ipv4' && isIP(raw) === 6 && this.extra.check(raw, 'ipv6')
  }

  /** Why an outbound connection may not dial `address`: the floor or a configured range, or a local address; null when it may. */
  refusal(address: string): 'deny_floor' | 'local' | null {
    if (this.denied(address)) return 'deny_floor'
    return isLocalAddress(address) ? 'local' : null
  }
}
