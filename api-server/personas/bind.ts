// Session bind checks (RULE-15), as a pipeline: each step owns one concern and
// throws its own typed ApiError, and the order below is the spec's order. A later
// step never runs when an earlier one refused, so e.g. a revoked grant on a leased
// identity reports the grant, not the lease.
import type { Queryable } from '../store/db.ts'
import { errors } from '../../contracts/errors.ts'
import { recordAudit } from '../audit/audit.ts'
import { requireScopes } from '../auth/scopes.ts'
import { findIdentity, identityNotFound, type Identity } from './identities.ts'
import { grantsFor, type Grant } from './grants.ts'
import { pickWinningGrant } from './grant-selection.ts'
import { grantPrincipalFor } from './principal.ts'
import { acquire, type Lease } from './leases.ts'
import { leaseTtlSecs } from './lease-ttl.ts'

/** How the session is being opened: by the agent itself, or as a spawned child (not to be confused with sessions/admission.ts, the quota and launch-slot gate). */
export type StartPath = 'direct' | 'spawned_child'

/** Binding happens as part of opening a session. */
export const BIND_SCOPES = ['sessions:write'] as const

export interface BindDeps {
  db: Queryable
  now: () => number
}

export interface BindInput {
  orgId: string
  agentId: string
  scopes: ReadonlySet<string> | readonly string[]
  /** an identity id (nident_…) or its name */
  identityRef: string
  sessionId: string
  admission: StartPath
}

export interface BindResult {
  identityId: string
  grantId: string
  /** the TTL cap recorded on the lease (RFC 3339) */
  leaseExpiresAt: string
}

interface BindState {
  deps: BindDeps
  input: BindInput
  identity?: Identity
  grant?: Grant
  lease?: Lease
}

type BindCheck = (s: BindState) => Promise<void>

export const checkScope: BindCheck = async ({ input }) => {
  requireScopes(input.scopes instanceof Set ? input.scopes : new Set(input.scopes as readonly string[]), BIND_SCOPES)
}

export const checkOrgOwnership: BindCheck = async (s) => {
  const identity = await findIdentity(s.deps.db, s.input.orgId, s.input.identityRef)
  if (!identity) throw identityNotFound() // the same 404 for foreign and unknown
  s.identity = identity
}

export const checkLiveGrant: BindCheck = async (s) => {
  const principal = await grantPrincipalFor(s.deps.db, s.input.orgId, s.input.agentId)
  const grants = await grantsFor(s.deps.db, s.input.orgId, s.identity!.id, principal.agentId)
  s.grant = pickWinningGrant(grants, s.deps.now())
}

export const checkPropagation: BindCheck = async ({ input, grant }) => {
  // Only a spawned child is limited by propagation; the direct create path never is.
  if (input.admission === 'spawned_child' && grant!.propagation === 'none') {
    throw errors.propagationNone()
  }
}

export const acquireLease: BindCheck = async (s) => {
  s.lease = await acquire(s.deps.db, {
    orgId: s.input.orgId,
    identityId: s.identity!.id,
    sessionId: s.input.sessionId,
    agentId: s.input.agentId,
    grantId: s.grant!.id,
    nowMs: s.deps.now(),
    ttlSecs: leaseTtlSecs(s.grant!.maxSessionDurationSecs),
  })
}

/** The spec's order; exported so a test can assert it. */
export const BIND_CHECKS: ReadonlyArray<readonly [string, BindCheck]> = [
  ['scope', checkScope],
  ['org_ownership', checkOrgOwnership],
  ['live_grant', checkLiveGrant],
  ['propagation', checkPropagation],
  ['lease', acquireLease],
]

export async function bindIdentity(deps: BindDeps, input: BindInput): Promise<BindResult> {
  if (input.admission !== 'direct' && input.admission !== 'spawned_child') throw new TypeError('admission must be direct or spawned_child')
  const state: BindState = { deps, input }
  for (const [, check] of BIND_CHECKS) await check(state)
  await recordAudit(deps.db, {
    orgId: input.orgId, actor: input.agentId, action: 'identity.bind', targetType: 'identity', targetId: state.identity!.id,
    identityId: state.identity!.id, grantId: state.grant!.id, sessionId: input.sessionId, reason: input.admission,
  })
  return { identityId: state.identity!.id, grantId: state.grant!.id, leaseExpiresAt: state.lease!.expiresAt }
}
