// The abuse limits of the console, OAuth and daemon join surfaces, counted in Postgres
// so every replica shares one budget. The key is the socket's peer address: X-Forwarded-For
// is never read (no trusted-proxy setting), and IPv6 peers are keyed by their /64, since one
// host usually holds a whole /64. Design: docs/abuse-limits.md
import { isIPv6 } from 'node:net'
import { createHash } from 'node:crypto'
import type { JoinGate } from '../tunnel-broker/broker.ts'
import { LIMIT_DEFAULTS, type Config, type LimitSettings } from '../config.ts'
import { MemoryLimitStore, type LimitStore } from './store.ts'
import { BackoffLock, WindowLimit } from './policies.ts'

export { LIMIT_DEFAULTS, type LimitSettings }
export { BackoffLock, WindowLimit, strictest, type Verdict } from './policies.ts'
export { MemoryLimitStore, type LimitStore, type LimitRecord } from './store.ts'
export { PgLimitStore } from './pg-store.ts'

/** The limiter key of a peer address: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64. */
export function addressKey(ip: string | undefined): string {
  if (!ip) return 'unknown'
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) return mapped[1]
  if (!isIPv6(ip)) return ip
  const [head, tail = ''] = ip.split('%')[0].split('::')
  const h = head ? head.split(':') : []
  const tl = tail ? tail.split(':') : []
  const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - tl.length).fill('0'), ...tl] : h
  return groups.slice(0, 4).map((g) => parseInt(g || '0', 16).toString(16)).join(':') + '::/64'
}

/** The limiter key of an account: a hash of the normalised e-mail (keys never hold personal data in clear). */
export function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22)
}

export class Limits {
  readonly loginAccount: BackoffLock
  readonly loginAddress: WindowLimit
  readonly device: WindowLimit
  readonly userCodeAccount: WindowLimit
  readonly userCodeAddress: WindowLimit
  readonly joinAddress: WindowLimit
  readonly joinNetwork: WindowLimit
  readonly bearerAddress: WindowLimit
  readonly mcpInitialize: WindowLimit

  readonly settings: LimitSettings
  readonly store: LimitStore
  constructor(settings: LimitSettings, now: () => number, store: LimitStore = new MemoryLimitStore()) {
    this.settings = settings
    this.store = store
    const s = settings
    this.loginAccount = new BackoffLock(store, 'login-account', {
      freeFailures: s.loginLockoutThreshold, baseMs: s.loginLockoutBaseSecs * 1000, maxMs: s.loginLockoutMaxSecs * 1000,
      // a streak is forgotten after a quiet hour (or at least one full maximum lock)
      memoryMs: Math.max(3_600_000, s.loginLockoutMaxSecs * 1000),
    }, now)
    this.loginAddress = new WindowLimit(store, 'login-address', { limit: s.loginIpLimit, windowMs: s.loginIpWindowSecs * 1000 }, now)
    this.device = new WindowLimit(store, 'device-address', { limit: s.deviceLimit, windowMs: s.deviceWindowSecs * 1000 }, now)
    this.userCodeAccount = new WindowLimit(store, 'user-code-account', { limit: s.userCodeLimit, windowMs: s.userCodeWindowSecs * 1000 }, now)
    this.userCodeAddress = new WindowLimit(store, 'user-code-address', { limit: s.userCodeLimit, windowMs: s.userCodeWindowSecs * 1000 }, now)
    this.joinAddress = new WindowLimit(store, 'join-address', { limit: s.joinFailureLimit, windowMs: s.joinFailureWindowSecs * 1000 }, now)
    this.joinNetwork = new WindowLimit(store, 'join-network', { limit: s.joinNetworkFailureLimit, windowMs: s.joinFailureWindowSecs * 1000 }, now)
    this.bearerAddress = new WindowLimit(store, 'bearer-address', { limit: s.bearerFailureLimit, windowMs: s.bearerFailureWindowSecs * 1000 }, now)
    this.mcpInitialize = new WindowLimit(store, 'mcp-initialize', { limit: s.mcpInitializeLimit, windowMs: s.mcpInitializeWindowSecs * 1000 }, now)
  }
}

export function limitSettings(config: Config): LimitSettings {
  return { ...LIMIT_DEFAULTS, ...(config as { limits?: Partial<LimitSettings> }).limits }
}

/** The one Limits of an app, built by build() (shared by every limit and, through Postgres, by every replica). */
export function limitsFor(services: { limits: Limits }): Limits {
  return services.limits
}

/** The /ws/control join throttle: rejected join tokens per client address. */
export function joinGate(limits: Limits): JoinGate {
  return {
    check: (peer) => limits.joinAddress.check(addressKey(peer)),
    rejected: async (peer, network) => {
      const [, forNetwork] = await Promise.all([limits.joinAddress.hit(addressKey(peer)), limits.joinNetwork.hit(network.toLowerCase())])
      return forNetwork
    },
  }
}
