// Egress policy: the pure decision "may the browser reach host:port, and how?".
// The gateway (egress-gateway.ts) asks this module once per connection and then
// connects to exactly the address that was checked, so DNS cannot be re-bound
// between the check and the connect.
import { isIP } from 'node:net'
import type { Duplex } from 'node:stream'
import { hostAllowed } from '../contracts/hosts.ts'
import { DenyRules, inDenyFloor, isLocalAddress, isLocalName } from '../contracts/deny-floor.ts'
import type { ProxyReach } from '../contracts/proxy.ts'
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

// The deny floor and the "local" ranges and names live in contracts/deny-floor.ts: the
// api-server's webhook deliveries and metadata fetches are held to the same table.
export { isLocalName, normalizeAddress, parseCidr } from '../contracts/deny-floor.ts'

/** A compiled policy: CIDR lists parsed once at configure time. */
export class CompiledPolicy {
  readonly mode: EgressMode
  readonly declaredHosts: readonly string[]
  readonly tunnel?: TunnelDialer
  private readonly deny: DenyRules
  private readonly aliases: Map<string, string>

  constructor(policy: EgressPolicy) {
    this.mode = policy.mode
    this.declaredHosts = [...policy.declaredHosts]
    this.tunnel = policy.tunnel
    this.deny = new DenyRules(policy.denyCidrs)
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
    return this.deny.denied(address)
  }

  /** Only the fixed floor: used for tunnelled targets, whose addresses live on the
   * developer's machine where the cluster ranges mean nothing. */
  floorDenied(address: string): boolean {
    return inDenyFloor(address)
  }

  isLocalAddress(address: string): boolean {
    return isLocalAddress(address)
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

  // Direct from the pod: resolve once (literal, then hostAliases, then DNS), judge the
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

/**
 * Judge the session's upstream proxy itself (docs/proxy.md) by the platform's rule
 * (contracts/proxy.ts ProxyReach), which the org's allowlist cannot widen: a literal as
 * given, a name once resolved (hostAliases, then DNS), so whoever controls a name's DNS
 * cannot point it inside either. The address judged is the address dialled.
 */
export async function decideProxy(
  policy: CompiledPolicy, reach: ProxyReach, proxy: { host: string; platformProxy?: boolean }, resolve: Resolver,
): Promise<{ action: 'direct'; address: string } | { action: 'deny' }> {
  const platform = proxy.platformProxy === true
  if (reach.hostRefused(proxy.host, platform)) return { action: 'deny' }
  const address = isIP(proxy.host) ? proxy.host : (policy.alias(proxy.host) ?? (await resolve(proxy.host)).address)
  return reach.addressRefused(address, platform) ? { action: 'deny' } : { action: 'direct', address }
}
