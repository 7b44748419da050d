// A session's upstream proxy, as callers name it and as the api-server and the browser
// pod read it (docs/proxy.md): `http://`, `https://` or `socks5://` host[:port], nothing
// else in the URL — credentials travel as their own fields, so a URL can be shown and
// logged as it is. Shared by the operation schemas, the api-server's allowlist check and
// the pod's API.
import { isIP } from 'node:net'
import { parseHostPattern } from './hosts.ts'

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
