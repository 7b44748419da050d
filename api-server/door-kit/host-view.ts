// A host as a person should judge it: the registrable domain (who controls the site, so
// where a typed password goes) first and prominent, then the full host small and wrapped,
// never clipped: `accounts.google.com.<…>.evil.test` reads "evil.test" first. The domain
// comes from the Public Suffix List through tldts, private suffixes included (x.github.io
// is not GitHub's); an IP or a name without a known suffix is its own site.
import { getDomain } from 'tldts'
import { isIP } from 'node:net'
import { parseHostPattern } from '../../contracts/hosts.ts'
import { html, type Html } from './html.ts'

/** The host name of a host entry (`host`, `host:port`, `[::1]:8080`), lower-case, without port or brackets. */
function hostName(entry: string): string {
  return parseHostPattern(entry)?.host ?? entry.toLowerCase()
}

/** The registrable domain of a host entry (eTLD+1 by the Public Suffix List), or the host itself when it has none. */
export function registrableDomain(entry: string): string {
  const host = hostName(entry)
  if (isIP(host)) return host
  return getDomain(host, { allowPrivateDomains: true }) ?? host
}

/**
 * One host for a person: the registrable domain in bold, then — when it says more — the
 * full entry beneath it, with the registrable part marked, wrapping anywhere. Hosts are
 * ASCII (punycode stays `xn--`, as the allowlist checks it), isolated from the text
 * around them.
 */
export function hostView(entry: string): Html {
  const site = registrableDomain(entry)
  const full = entry.toLowerCase()
  const at = full === site ? -1 : full.lastIndexOf(site)
  const detail = at <= 0
    ? (full === site ? html`` : html`<code class="host-full"><bdi dir="ltr">${full}</bdi></code>`)
    : html`<code class="host-full"><bdi dir="ltr">${full.slice(0, at)}<b>${full.slice(at, at + site.length)}</b>${full.slice(at + site.length)}</bdi></code>`
  return html`<span class="host"><bdi class="host-site" dir="ltr">${site}</bdi>${detail}</span>`
}

/** A list of hosts, one under another. */
export function hostsView(entries: readonly string[], id?: string): Html {
  return html`<ul class="hosts"${id ? html` id="${id}"` : html``}>${entries.map((h) => html`<li>${hostView(h)}</li>`)}</ul>`
}
