// DNS-rebinding protection for /mcp, in this one place and before authentication (the SDK
// transport's own allowedHosts/allowedOrigins stay off). A DNS name in Host must be ours;
// IP literals pass, because a rebinding request always carries the attacker's DNS name.
// An Origin, when sent, must be ours (a loopback deployment also accepts any loopback
// origin, e.g. a local MCP inspector). Rules: docs/mcp.md#mcp-transport-rules
import { isIP } from 'node:net'
import { errors, type ApiError } from '../../contracts/errors.ts'

const stripDot = (h: string) => (h.endsWith('.') ? h.slice(0, -1) : h)
const bare = (h: string) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h)

export function isLoopbackHostname(hostname: string): boolean {
  const h = bare(stripDot(hostname.toLowerCase()))
  if (h === 'localhost' || h === '::1') return true
  return isIP(h) === 4 && h.startsWith('127.')
}

function hostnameOf(hostHeader: string): string | null {
  try {
    const u = new URL(`http://${hostHeader}`)
    // a Host header is host[:port] only
    if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return null
    return stripDot(u.hostname.toLowerCase())
  } catch {
    return null
  }
}

function originOf(value: string): { origin: string; hostname: string; protocol: string } | null {
  try {
    const u = new URL(value)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null
    return { origin: u.origin, hostname: stripDot(u.hostname.toLowerCase()), protocol: u.protocol }
  } catch {
    return null
  }
}

export interface RebindingGuard {
  /** null when the request may go on; else the 403 to answer */
  check(host: string | undefined, origin: string | undefined): ApiError | null
  readonly loopback: boolean
}

export const hostNotAllowed = () => errors.hostNotAllowed()
export const originNotAllowed = () => errors.originNotAllowed()

export function rebindingGuard(baseUrl: string, extraOrigins: readonly string[] = []): RebindingGuard {
  const base = originOf(baseUrl)
  if (!base) throw new Error('base URL must be an http(s) URL')
  const origins = new Set<string>([base.origin])
  const hosts = new Set<string>([base.hostname, 'localhost'])
  for (const o of extraOrigins) {
    const parsed = originOf(o)
    if (!parsed) throw new Error('an allowed origin must be an http(s) origin')
    origins.add(parsed.origin)
    hosts.add(parsed.hostname)
  }
  const loopback = isLoopbackHostname(base.hostname)
  return {
    loopback,
    check(host, origin) {
      const hostname = host ? hostnameOf(host) : null
      if (!hostname) return hostNotAllowed()
      if (!hosts.has(hostname) && isIP(bare(hostname)) === 0) return hostNotAllowed()
      if (origin === undefined) return null
      const o = originOf(origin)
      if (!o) return originNotAllowed() // "null" (sandboxed frames, file:) and the like
      if (origins.has(o.origin)) return null
      if (loopback && isLoopbackHostname(o.hostname)) return null
      return originNotAllowed()
    },
  }
}
