// Which grant wins when an agent holds several on one identity. Bind, lease TTL and
// fill narrowing all use the same winner, so they can never disagree.
import { errors } from '../../contracts/errors.ts'
import { grantState, type Grant } from './grants.ts'
import { DEFAULT_LEASE_TTL_SECS } from './lease-ttl.ts'

const ROLE_RANK = { assume: 0, manage: 1 } as const
const PROPAGATION_RANK = { none: 0, same_conversation: 1, descendants: 1 } as const

/**
 * Most restrictive first: assume before manage, propagation none first, a narrowing
 * origin list before none (fewer hosts first), a shorter session cap, an earlier
 * expiry; the id breaks ties so the choice is deterministic.
 */
export function compareRestrictiveness(a: Grant, b: Grant): number {
  const origins = (g: Grant) => (g.allowedOrigins.length === 0 ? Number.MAX_SAFE_INTEGER : g.allowedOrigins.length)
  const cap = (g: Grant) => g.maxSessionDurationSecs ?? DEFAULT_LEASE_TTL_SECS
  return (
    ROLE_RANK[a.role] - ROLE_RANK[b.role] ||
    PROPAGATION_RANK[a.propagation] - PROPAGATION_RANK[b.propagation] ||
    origins(a) - origins(b) ||
    cap(a) - cap(b) ||
    Date.parse(a.expiresAt) - Date.parse(b.expiresAt) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  )
}

export const grantNotLive = (reason: 'grant_expired' | 'grant_revoked') => errors.grantNotLive(reason)
export const noGrant = () => errors.noGrant()

/**
 * The winning live grant, or the typed 403 that explains why there is none: expired
 * when a non-revoked grant has lapsed, revoked when only revoked grants remain.
 */
export function pickWinningGrant(grants: readonly Grant[], nowMs: number): Grant {
  const live = grants.filter((g) => grantState(g, nowMs) === 'live')
  if (live.length) return [...live].sort(compareRestrictiveness)[0]
  if (grants.some((g) => grantState(g, nowMs) === 'expired')) throw grantNotLive('grant_expired')
  if (grants.length) throw grantNotLive('grant_revoked')
  throw noGrant()
}
