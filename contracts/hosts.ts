// Host allowlists: the one place that says what "this host is allowed" means.
// Entries are hosts, optionally with :port — never URLs, wildcards or userinfo.
// Matching is exact or a subdomain at a dot boundary, so `login.example.com`
// matches `example.com` but `evil-example.com` does not.
import { isIP } from 'node:net'
import { hiddenCharacter, hiddenCharacterMessage } from './person-text.ts'

export interface HostPattern {
  host: string // lower-case; IPv6 without brackets
  port?: number
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** Parses `host`, `host:port`, `1.2.3.4:80`, `[::1]:8080` or `::1`. Returns null when it is not a bare host. */
export function parseHostPattern(input: string): HostPattern | null {
  if (typeof input !== 'string') return null
  const s = input.trim().toLowerCase()
  if (!s || s.length > 260) return null
  if (/[\s/?#@*\\]/.test(s) || s.includes('://')) return null
  let host = s
  let portText: string | undefined
  if (s.startsWith('[')) {
    const end = s.indexOf(']')
    if (end < 0) return null
    host = s.slice(1, end)
    const rest = s.slice(end + 1)
    if (rest) {
      if (!rest.startsWith(':')) return null
      portText = rest.slice(1)
    }
    if (isIP(host) !== 6) return null
  } else if (isIP(s) === 6) {
    host = s
  } else {
    const i = s.lastIndexOf(':')
    if (i >= 0) {
      host = s.slice(0, i)
      portText = s.slice(i + 1)
    }
    if (isIP(host) !== 4) {
      const labels = host.split('.')
      if (!labels.every((l) => LABEL.test(l))) return null
    }
  }
  const pattern: HostPattern = { host }
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText)) return null
    const port = Number(portText)
    if (port < 1 || port > 65535) return null
    pattern.port = port
  }
  return pattern
}

export function formatHostPattern(p: HostPattern): string {
  const h = isIP(p.host) === 6 ? `[${p.host}]` : p.host
  return p.port ? `${h}:${p.port}` : h
}

// What a host entry may be at request time (an allowlist a person reads, a network's
// declared hosts). DNS allows 253 characters in 127 labels; a sign-in host needs far fewer
// labels, and a deep name serves only to push the part that decides where a password goes
// out of sight. Entries stored before these limits still parse (parseHostPattern).
/** the most characters of a host name, without its port (DNS's own limit) */
export const HOST_MAX_CHARS = 253
/** the most labels (dot-separated parts) of a host name */
export const HOST_MAX_LABELS = 10
/** the most hosts one credential_request may name (each is shown to the person who answers) */
export const REQUEST_MAX_HOSTS = 20

/** the rule a malformed entry breaks (its message) */
export const HOST_SHAPE = 'must be a host, optionally with :port (no scheme, path, wildcard or userinfo)'

/** Why `input` is not an acceptable host entry (the rule broken, value-free), or null. */
export function hostEntryProblem(input: string): string | null {
  if (typeof input !== 'string') return HOST_SHAPE
  const hidden = hiddenCharacter(input)
  if (hidden) return hiddenCharacterMessage(hidden)
  const p = parseHostPattern(input)
  if (!p) {
    // a name whose only fault is a label over 63 characters: say so
    const name = input.trim().toLowerCase().replace(/:\d{1,5}$/, '')
    if (/^[a-z0-9.-]+$/.test(name) && name.split('.').some((l) => l.length > 63)) return 'each label (dot-separated part) must be at most 63 characters'
    return HOST_SHAPE
  }
  if (isIP(p.host)) return null
  if (p.host.length > HOST_MAX_CHARS) return `must be at most ${HOST_MAX_CHARS} characters`
  if (p.host.split('.').length > HOST_MAX_LABELS) return `must have at most ${HOST_MAX_LABELS} labels (dot-separated parts)`
  return null
}

/** Canonical string form of a host entry, or null when invalid. */
export function normalizeHostEntry(input: string): string | null {
  const p = parseHostPattern(input)
  return p ? formatHostPattern(p) : null
}

function hostCovers(allowed: string, host: string): boolean {
  if (allowed === host) return true
  // IP literals only ever match exactly
  if (isIP(allowed) || isIP(host)) return false
  return host.endsWith('.' + allowed)
}

/** Does `pattern` allow `target`? A pattern without a port allows every port. */
export function patternCovers(pattern: HostPattern, target: HostPattern): boolean {
  if (!hostCovers(pattern.host, target.host)) return false
  if (pattern.port === undefined) return true
  return pattern.port === target.port
}

/** Is the live host (and port) allowed by any entry of the list? */
export function hostAllowed(host: string, port: number | undefined, allowlist: readonly string[]): boolean {
  const target: HostPattern = { host: host.toLowerCase().replace(/^\[|\]$/g, ''), port }
  return allowlist.some((entry) => {
    const p = parseHostPattern(entry)
    return p !== null && patternCovers(p, target)
  })
}

/**
 * Effective fill origins: the credential allowlist narrowed by the grant's allowedOrigins.
 * An empty grant list narrows nothing. Where one entry covers another, the narrower wins.
 */
export function intersectAllowlists(credential: readonly string[], grant: readonly string[]): string[] {
  if (grant.length === 0) return [...credential]
  const c = credential.map(parseHostPattern).filter((p): p is HostPattern => p !== null)
  const g = grant.map(parseHostPattern).filter((p): p is HostPattern => p !== null)
  const out = new Set<string>()
  for (const cp of c) for (const gp of g) {
    if (patternCovers(gp, cp)) out.add(formatHostPattern(cp))
    else if (patternCovers(cp, gp)) out.add(formatHostPattern(gp))
  }
  return [...out]
}
