// Egress policy: the pure decision "may the browser reach host:port, and how?".
// The gateway (egress-gateway.ts) asks this module once per connection and then
// connects to exactly the address that was checked, so DNS cannot be re-bound
// between the check and the connect.
import { BlockList, isIP } from 'node:net'
import type { Duplex } from 'node:stream'
import { hostAllowed } from '../contracts/hosts.ts'
import type { EgressMode } from '../crds/types.ts'

export type { EgressMode }

/** The local-reach tunnel (daemon stream) plugs in here. */
export interface TunnelDialer {
  dial(host: string, port: number): Promise<Duplex>
}

export interface EgressPolicy {
  mode: EgressMode
  /** Launch-time snapshot of the network's declared hosts (`host` or `host:port`). */
  declaredHosts: string[]
  /** Cluster and control-plane ranges, added to the fixed deny floor. */
  denyCidrs: string[]
  /** name -> IP, like a Pod's hostAliases; consulted before DNS. */
  hostAliases: Record<string, string>
  tunnel?: TunnelDialer
}

export type DenyReason = 'deny_floor' | 'host_not_declared' | 'not_configured'
export type RefuseReason = 'local_address' | 'no_tunnel'

export type Decision =
  | { action: 'direct'; address: string; family: 4 | 6 }
  | { action: 'tunnel' }
  /** Policy says no: surfaces as E_REACHABILITY_DENIED. */
  | { action: 'deny'; reason: DenyReason }
  /** Looks like a connection failure to the browser: E_UPSTREAM / net::ERR_CONNECTION_REFUSED. */
  | { action: 'refuse'; reason: RefuseReason }

export interface Resolved {
  address: string
  family: 4 | 6
}
export type Resolver = (host: string) => Promise<Resolved>

// Deny floor, every mode: link-local (cloud metadata lives at 169.254.169.254 and
// fe80::), "this network", multicast, broadcast, unspecified.
const FLOOR: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['169.254.0.0', 16, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['255.255.255.255', 32, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
  ['::', 128, 'ipv6'],
]

// "Local" targets: loopback and LAN (RFC 1918, IPv6 ULA). Platform egress refuses
// them; split egress sends them to the tunnel when declared.
const LOCAL: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
]

function blockList(entries: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']>): BlockList {
  const b = new BlockList()
  for (const [net, prefix, type] of entries) b.addSubnet(net, prefix, type)
  return b
}

const floorList = blockList(FLOOR)
const localList = blockList(LOCAL)

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

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. */
export function normalizeAddress(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  let a = address.replace(/^\[|\]$/g, '').toLowerCase()
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)
  if (mapped) a = mapped[1]
  return { address: a, type: isIP(a) === 4 ? 'ipv4' : 'ipv6' }
}

export function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost')
}

/** A compiled policy: CIDR lists parsed once at configure time. */
export class CompiledPolicy {
  readonly mode: EgressMode
  readonly declaredHosts: readonly string[]
  readonly tunnel?: TunnelDialer
  private readonly deny: BlockList
  private readonly aliases: Map<string, string>

  constructor(policy: EgressPolicy) {
    this.mode = policy.mode
    this.declaredHosts = [...policy.declaredHosts]
    this.tunnel = policy.tunnel
    this.deny = blockList(policy.denyCidrs.filter((c) => c.trim()).map(parseCidr))
    this.aliases = new Map()
    for (const [name, ip] of Object.entries(policy.hostAliases)) {
      if (!isIP(ip)) throw new Error(`hostAliases: ${name} must map to an IP address`)
      this.aliases.set(name.toLowerCase(), ip)
    }
  }

  alias(host: string): string | undefined {
    return this.aliases.get(host)
  }

  /** Deny floor plus the configured cluster/control-plane ranges. */
  denied(address: string): boolean {
    const n = normalizeAddress(address)
    return floorList.check(n.address, n.type) || this.deny.check(n.address, n.type)
  }

  /** Only the fixed floor: used for tunnelled targets, whose addresses live on the
   * developer's machine where the cluster ranges mean nothing. */
  floorDenied(address: string): boolean {
    const n = normalizeAddress(address)
    return floorList.check(n.address, n.type)
  }

  isLocalAddress(address: string): boolean {
    const n = normalizeAddress(address)
    return localList.check(n.address, n.type)
  }

  declared(host: string, port: number): boolean {
    return hostAllowed(host, port, this.declaredHosts)
  }
}

/**
 * Decide one connection. `host` is lower-case without IPv6 brackets; `resolve` (DNS)
 * is called at most once, and never for literals, aliases or tunnelled targets (those
 * resolve on the daemon side).
 */
export async function decide(policy: CompiledPolicy | null, host: string, port: number, resolve: Resolver): Promise<Decision> {
  if (!policy) return { action: 'deny', reason: 'not_configured' }
  const literal = isIP(host) !== 0

  if (literal && policy.floorDenied(host)) return { action: 'deny', reason: 'deny_floor' }

  const tunnelOr = (): Decision => (policy.tunnel ? { action: 'tunnel' } : { action: 'refuse', reason: 'no_tunnel' })

  if (policy.mode === 'local') {
    // Everything exits through the daemon; the tunnel is closed unless declared.
    return policy.declared(host, port) ? tunnelOr() : { action: 'deny', reason: 'host_not_declared' }
  }

  if (policy.mode === 'split') {
    // A declared host is by definition a local-reach target.
    if (policy.declared(host, port)) return tunnelOr()
    if (isLocalName(host) || (literal && policy.isLocalAddress(host))) return { action: 'deny', reason: 'host_not_declared' }
  } else if (isLocalName(host)) {
    return { action: 'refuse', reason: 'local_address' }
  }

  // Direct from the node: resolve once (literal, then hostAliases, then DNS), judge the
  // resolved address, and the gateway connects to exactly that address.
  const alias = policy.alias(host)
  const r: Resolved = literal
    ? { address: host, family: isIP(host) === 6 ? 6 : 4 }
    : alias
      ? { address: alias, family: isIP(alias) === 6 ? 6 : 4 }
      : await resolve(host)
  if (policy.denied(r.address)) return { action: 'deny', reason: 'deny_floor' }
  if (policy.isLocalAddress(r.address)) {
    return policy.mode === 'split' ? { action: 'deny', reason: 'host_not_declared' } : { action: 'refuse', reason: 'local_address' }
  }
  return { action: 'direct', address: r.address, family: r.family }
}
