// Errors of a session's upstream proxy (docs/proxy.md). The proxy's
// host must be on the org's allowlist (governance proxyHosts) when a session or an
// identity names it; a navigation whose connection the proxy could not carry says which
// way it failed, never with the proxy's credentials.
import type { ApiEntry } from './entry.ts'

export const PROXY_ERRORS = {
  proxyHostNotAllowed: {
    status: 400, code: 'bad_request', reason: 'proxy_host_not_allowed', args: ['host'], spec: null,
    message: (host: string) =>
      `proxy host ${host} is not on the org's proxy allowlist; an org admin adds it with PUT /v1/governance {"proxyHosts": [...]}`,
    when: 'a session start, or an identity default proxy, naming a proxy whose host (and port) the org admin has not allowlisted (the list is empty by default: no proxy is allowed)',
  },
  proxyAuthFailed: {
    status: 502, code: 'E_UPSTREAM', reason: 'proxy_auth_failed', args: ['url', 'detail'], spec: null,
    message: (url: string, detail: string) => `navigation to ${url} failed: the session's proxy refused its credentials (${detail})`,
    when: 'navigating a session whose proxy answered 407 to CONNECT or failed the SOCKS5 username/password step (wrong or missing credentials)',
  },
  proxyUnreachable: {
    status: 502, code: 'E_UPSTREAM', reason: 'proxy_unreachable', args: ['url', 'detail'], spec: null,
    message: (url: string, detail: string) => `navigation to ${url} failed: the session's proxy could not be reached (${detail})`,
    when: 'navigating a session whose proxy refused the connection, did not answer in time, failed TLS (https://) or whose name did not resolve',
  },
  proxyRefused: {
    status: 502, code: 'E_UPSTREAM', reason: 'proxy_refused', args: ['url', 'detail'], spec: null,
    message: (url: string, detail: string) => `navigation to ${url} failed: the session's proxy would not open the connection (${detail})`,
    when: 'navigating a session whose proxy answered CONNECT with another status than 200 or 407, or a SOCKS5 reply other than success',
  },
} as const satisfies Record<string, ApiEntry>
