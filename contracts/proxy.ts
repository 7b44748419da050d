// A session's upstream proxy, as callers name it and as the api-server and the browser
// pod read it (docs/proxy.md): `http://`, `https://` or `socks5://` host[:port], nothing
// else in the URL — credentials travel as their own fields, so a URL can be shown and
// logged as it is. Shared by the operation schemas, the api-server's allowlist check and
// the pod's API. Where a proxy may be is the platform's rule, not the org's (proxyReach).
import { BlockList, isIP } from 'node:net'
import { DenyRules, inDenyFloor, isLocalName, normalizeAddress } from './deny-floor.ts'
import { formatHostPattern, parseHostPattern } from './hosts.ts'

export const PROXY_SCHEMES = ['http', 'https', 'socks5'] as const
export type ProxyScheme = (typeof PROXY_SCHEMES)[number]

/** The default port of each scheme, when the URL names none. */
export const DEFAULT_PROXY_PORT: Record<ProxyScheme, number> = { http: 80, https: 443, socks5: 1080 }

export interface ProxyAddress {
  scheme: ProxyScheme
  /** lower-case, IPv6 without brackets */
  host: string
  port: number
}

/** What is wrong with a proxy URL (value-free: the rule, never the URL), or null. */
export function proxyUrlProblem(raw: string): string | null {
  const r = parseProxyUrl(raw)
  return typeof r === 'string' ? r : null
}

/** The URL's parts, or the rule it breaks. */
export function parseProxyUrl(raw: string): ProxyAddress | string {
  if (typeof raw !== 'string' || raw.length > 300) return 'must be a URL of at most 300 characters'
  const m = /^([a-z0-9]+):\/\//i.exec(raw)
  if (!m) return 'must be http://, https:// or socks5:// host[:port]'
  const scheme = m[1].toLowerCase()
  if (!(PROXY_SCHEMES as readonly string[]).includes(scheme)) return 'scheme must be http, https or socks5'
  let u: URL
  try {
    // URL parses special schemes only; parse every proxy as http to read host and port the same way
    u = new URL(`http://${raw.slice(m[0].length)}`)
  } catch {
    return 'must be http://, https:// or socks5:// host[:port]'
  }
  if (u.username || u.password || raw.slice(m[0].length).includes('@')) return 'must not carry credentials: send username and password as their own fields'
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || /[?#]/.test(raw)) return 'must be scheme://host[:port] with no path, query or fragment'
  const host = u.hostname.toLowerCase().replace(/^\[|\]$/g, '')
  if (!host) return 'must name a host'
  if (!isIP(host) && !parseHostPattern(host)) return 'must name a host'
  const port = u.port ? Number(u.port) : DEFAULT_PROXY_PORT[scheme as ProxyScheme]
  return { scheme: scheme as ProxyScheme, host, port }
}

/** The normalised URL: `scheme://host:port` (IPv6 in brackets), the form shown to callers. */
export function formatProxyUrl(a: ProxyAddress): string {
  return `${a.scheme}://${isIP(a.host) === 6 ? `[${a.host}]` : a.host}:${a.port}`
}

/**
 * Is the proxy on the org's allowlist? Entries are host[:port]; the host must match
 * exactly (no subdomains: an admin names each proxy), a port-less entry allows any port.
 */
export function proxyAllowed(a: ProxyAddress, allowlist: readonly string[]): boolean {
  return allowlist.some((entry) => {
    const p = parseHostPattern(entry)
    return p !== null && p.host === a.host && (p.port === undefined || p.port === a.port)
  })
}

/**
 * NIGHTJAR_PLATFORM_PROXIES: the platform's own proxies, `host:port` each (the port is
 * required: an entry opens that one port, not a host to scan). The normalised entries,
 * or the rule an entry breaks.
 */
export function parsePlatformProxies(text: string): string[] | string {
  const out: string[] = []
  for (const entry of text.split(',').map((e) => e.trim()).filter(Boolean)) {
    const p = parseHostPattern(entry)
    if (!p || p.port === undefined) return 'must be comma-separated host:port entries ([v6]:port for IPv6)'
    out.push(formatHostPattern(p))
  }
  return out
}

/** Does the platform name this proxy (host and port exactly)? */
export function isPlatformProxy(a: Pick<ProxyAddress, 'host' | 'port'>, platformProxies: readonly string[]): boolean {
  return platformProxies.includes(formatHostPattern({ host: a.host, port: a.port }))
}

/**
 * Where a session's upstream proxy may be: the platform's rule, which no org allowlist
 * can widen. Never under the fixed deny floor; unless the platform itself names the proxy
 * (NIGHTJAR_PLATFORM_PROXIES), also never in NIGHTJAR_DENY_CIDRS, local (loopback, LAN,
 * a localhost name) or one of this machine's own addresses. The api-server judges a
 * literal when the proxy is given; the pod judges the address it dials, names resolved.
 */
export class ProxyReach {
  private readonly deny: DenyRules
  private readonly own: () => Iterable<string>
  constructor(opts: { denyCidrs: readonly string[]; ownAddresses: () => Iterable<string> }) {
    this.deny = new DenyRules(opts.denyCidrs)
    this.own = opts.ownAddresses
  }

  /** May the proxy's address (a literal, or what its name resolved to) be dialled? */
  addressRefused(address: string, platformProxy: boolean): boolean {
    if (inDenyFloor(address)) return true
    if (platformProxy) return false
    if (this.deny.refusal(address) !== null) return true
    const own = new BlockList()
    for (const a of this.own()) {
      const o = normalizeAddress(a)
      if (isIP(o.address)) own.addAddress(o.address, o.type)
    }
    const n = normalizeAddress(address)
    return own.check(n.address, n.type)
  }

  /** Is the proxy's host refused before any lookup: a refused literal, or a localhost name? */
  hostRefused(host: string, platformProxy: boolean): boolean {
    if (isIP(host)) return this.addressRefused(host, platformProxy)
    return !platformProxy && isLocalName(host)
  }
}
