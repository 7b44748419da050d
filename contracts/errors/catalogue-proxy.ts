// Errors of a session's upstream proxy (docs/proxy.md). The proxy's host must be on the
// org's allowlist (governance proxyHosts) when a session or an identity names it, and its
// address must be one the platform lets a proxy have. A navigation the proxy could not
// carry fails with one error whatever the cause, never with the proxy's credentials.
import type { ApiEntry } from './entry.ts'

export const PROXY_ERRORS = {
  proxyHostNotAllowed: {
    status: 400, code: 'bad_request', reason: 'proxy_host_not_allowed', args: ['host'], spec: null,
    message: (host: string) =>
      `proxy host ${host} is not on the org's proxy allowlist; an org admin adds it with PUT /v1/governance {"proxyHosts": [...]}`,
    when: 'a session start, or an identity default proxy, naming a proxy whose host (and port) the org admin has not allowlisted (the list is empty by default: no proxy is allowed)',
  },
  proxyAddressRefused: {
    status: 400, code: 'bad_request', reason: 'proxy_address_refused', spec: null,
    message: 'proxy.url: the platform refuses this address for a proxy (loopback, private, link-local, a denied range or the service\'s own); no org allowlist can allow it, only the platform\'s own list of proxies (NIGHTJAR_PLATFORM_PROXIES)',
    when: 'a session start, or an identity default proxy, naming a proxy by an address (or a localhost name) the platform refuses: the deny floor, NIGHTJAR_DENY_CIDRS, loopback, RFC 1918 or fc00::/7, or the api-server\'s own, unless NIGHTJAR_PLATFORM_PROXIES names it',
  },
  proxyFailed: {
    status: 502, code: 'E_UPSTREAM', reason: 'proxy_failed', args: ['url'], spec: null,
    message: (url: string) => `navigation to ${url} failed: the session's proxy could not be used`,
    when: 'navigating a session whose proxy could not carry the connection, whatever the cause: its address refused by the platform once resolved, the connection refused or reset, TLS, a CONNECT answer other than 200 (a 407 included), a SOCKS5 failure, or no answer within the deadline. One error for all, so naming a proxy probes nothing; the cause is in the pod\'s log',
  },
} as const satisfies Record<string, ApiEntry>
