// Where a webhook may be sent: every delivery goes to an address a stranger chose, so it is
// held to what a platform-egress browser is (contracts/deny-floor.ts): https, never under
// the deny floor, never loopback, private or a localhost name unless
// NIGHTJAR_WEBHOOK_ALLOWED_HOSTS lists the host, judged on the addresses the socket dials
// (no re-binding between check and connect), and no redirects followed. Registration runs
// the same check once.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { DenyRules, isLocalName } from '../../contracts/deny-floor.ts'
import { errors } from '../../contracts/errors.ts'

export interface DestinationSettings {
  /** NIGHTJAR_DENY_CIDRS: added to the fixed floor */
  denyCidrs: readonly string[]
  /** NIGHTJAR_WEBHOOK_ALLOWED_HOSTS: hosts that may be loopback or private, and may use http */
  allowedHosts: readonly string[]
}

/** Why an address or URL is refused; the words go into the 400 and the delivery log (never the address). */
export type Refusal = 'not_https' | 'userinfo' | 'not_a_url' | 'deny_floor' | 'private_address'

const WORDS: Record<Refusal, string> = {
  not_a_url: 'it is not an absolute URL',
  not_https: 'it must use https',
  userinfo: 'it must not carry a user name or password',
  deny_floor: 'it reaches an address no request may reach (link-local, metadata, special-purpose or a denied range)',
  private_address: 'it reaches a loopback or private address',
}

export class DestinationRefused extends Error {
  readonly refusal: Refusal
  constructor(refusal: Refusal) {
    super(WORDS[refusal])
    this.refusal = refusal
    this.name = 'DestinationRefused'
  }
}

export class Destinations {
  private readonly deny: DenyRules
  private readonly allowed: ReadonlySet<string>

  constructor(settings: DestinationSettings) {
    this.deny = new DenyRules(settings.denyCidrs)
    this.allowed = new Set(settings.allowedHosts.map((h) => h.toLowerCase()))
  }

  /** The URL's own rules (no DNS): a parsed URL, or DestinationRefused. */
  parse(url: string): URL {
    let u: URL
    try {
      u = new URL(url)
    } catch {
      throw new DestinationRefused('not_a_url')
    }
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && this.allowed.has(hostOf(u)))) throw new DestinationRefused('not_https')
    if (u.username || u.password) throw new DestinationRefused('userinfo')
    return u
  }

  /** null when `address` may be dialled for `host`, else why not. */
  judge(host: string, address: string): Refusal | null {
    const refusal = this.deny.refusal(address)
    if (refusal === 'deny_floor') return 'deny_floor'
    if (this.allowed.has(host)) return null
    return refusal === 'local' || isLocalName(host) ? 'private_address' : null
  }

  /** A localhost name (any case, trailing dots, every *.localhost) is local before any lookup. */
  nameRefusal(host: string): Refusal | null {
    return !isIP(host) && !this.allowed.has(host) && isLocalName(host) ? 'private_address' : null
  }

  /**
   * The registration check: the URL's rules, then every address its host resolves to now.
   * A name that does not resolve yet is accepted (its DNS may come later): every delivery
   * judges the addresses again, and one that cannot resolve is a failed attempt.
   */
  async check(url: string): Promise<URL> {
    const u = this.parse(url)
    const host = hostOf(u)
    const named = this.nameRefusal(host)
    if (named) throw new DestinationRefused(named)
    const addresses = isIP(host) ? [host] : await resolveAll(host)
    for (const a of addresses) {
      const why = this.judge(host, a)
      if (why) throw new DestinationRefused(why)
    }
    return u
  }

  /** The same check as a catalogue 400, for the REST door and the console. */
  async checkForRegistration(url: string): Promise<URL> {
    try {
      return await this.check(url)
    } catch (e) {
      if (e instanceof DestinationRefused) throw errors.webhookUrlRefused(e.message)
      throw e
    }
  }

  /**
   * The lookup a delivery's request dials with: every address of the name is judged, and
   * the socket connects only to an address that passed (node:http calls it for names;
   * literals are judged by `literalRefusal` before the request).
   */
  guardedLookup(host: string): LookupFunction {
    return (hostname, options, callback) => {
      const named = this.nameRefusal(host)
      if (named) return callback(new DestinationRefused(named) as unknown as NodeJS.ErrnoException, '', 0)
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, '', 0)
        const list = addresses as LookupAddress[]
        const why = list.map((a) => this.judge(host, a.address)).find((r) => r !== null)
        if (!list.length) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '', 0)
        if (why) return callback(new DestinationRefused(why) as unknown as NodeJS.ErrnoException, '', 0)
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list)
        return callback(null, list[0].address, list[0].family)
      })
    }
  }

  /** An IP-literal host is judged before any request (no lookup runs for it). */
  literalRefusal(u: URL): Refusal | null {
    const host = hostOf(u)
    return isIP(host) ? this.judge(host, host) : null
  }
}

/** The URL's host, lower case, without IPv6 brackets. */
export const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, '').toLowerCase()

/** Every address of the name now; none when it does not resolve. */
function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve) => {
    dnsLookup(host, { all: true }, (err, list) => resolve(err ? [] : list.map((a) => a.address)))
  })
}
