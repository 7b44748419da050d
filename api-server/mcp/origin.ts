// DNS-rebinding protection for /mcp: the Host and Origin headers are checked before
// anything else (before authentication), in this one place — the SDK transport's own
// allowedHosts/allowedOrigins options stay off.
//
// Host: a DNS name must be the base URL's host (or localhost, or one of the extra
// allowed origins' hosts). IP literals always pass: a DNS-rebinding request always
// carries the attacker's DNS name in Host (evil.example.com resolving to 127.0.0.1),
// never an address, so addresses (a Service's cluster IP, 127.0.0.1) are safe.
// Origin (browsers send it on every POST; other clients usually send none): absent
// passes. Present, it must be the base URL's origin or an extra allowed origin; a
// loopback deployment (its base URL names a loopback host) also accepts any loopback
// origin (http(s)://localhost|127.x.y.z|[::1] on any port), e.g. a local MCP inspector.
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
