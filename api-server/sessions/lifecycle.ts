// Opening and ending sessions. Start = checks → bind (lease) → row → resource →
// wait until the operator reports Live. Anything that fails after the lease was
// taken gives it back, so a failed start never leaves an identity locked.
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { LABELS, type BrowserSession, type EgressMode } from '../../crds/types.ts'
import { newId } from '../../contracts/ids.ts'
import { ApiError, badRequest, forbidden, isApiError } from '../../contracts/errors.ts'
import { bindIdentity, release, getGovernance, urlIsAdvisorOrigin, type Admission } from '../personas/index.ts'
import { waitForPhase, type SessionPlane } from './plane.ts'
import { bindSessionIdentity, deleteSession, getSession, insertSession, journal, journalLater, setStatus, type SessionRow } from './store.ts'
import { sessionView, type SessionView } from './view.ts'
import type { Admitted } from './admission.ts'

export interface StartInput {
  identity?: string
  egress?: EgressMode
  network?: string
  viewport?: { width: number; height: number }
  url?: string
  browserKind?: 'chromium' | 'cloak'
  warmResume?: boolean
  fromVersion?: string
  idleTimeoutSecs?: number
  maxDurationSecs?: number
}

export interface ResolvedNetwork { id: string; declaredHosts: string[] }

/** Network lookup inside the caller's org (the local-reach module provides it). */
export interface NetworkDirectory {
  resolve(orgId: string, ref: string): Promise<ResolvedNetwork | null>
}

/** Captured auth-state versions (the cloak module provides it). */
export interface AuthStateDirectory {
  /** the version to restore (latest when versionId is absent), or null when none exists */
  pick(orgId: string, identityId: string, versionId?: string): Promise<{ id: string } | null>
}

const START_TIMEOUT_MS = 60_000

function requirePlane(services: Services): SessionPlane {
  if (!services.plane) throw new ApiError(503, 'unavailable', 'browser sessions are not available in this process', 'NO_SESSION_PLANE')
  return services.plane
}

async function agentDefaultEgress(services: Services, agentId: string): Promise<EgressMode> {
  const r = await services.db.query('select default_egress from agents where id = $1', [agentId])
  return (r.rows[0]?.default_egress as EgressMode | undefined) ?? 'platform'
}

/** a session's own lifetimes: the server's values unless it asks for shorter ones */
function lifetimes(services: Services, input: StartInput): { idleTimeoutSecs: number; maxDurationSecs: number } {
  const { idleTimeoutSecs: idleMax, maxDurationSecs: durationMax } = services.config.lifetimes
  if (input.idleTimeoutSecs !== undefined && input.idleTimeoutSecs > idleMax) {
    throw badRequest(`invalid request: idleTimeoutSecs: at most ${idleMax} on this server`, 'idle_timeout_too_long')
  }
  if (input.maxDurationSecs !== undefined && input.maxDurationSecs > durationMax) {
    throw badRequest(`invalid request: maxDurationSecs: at most ${durationMax} on this server`, 'max_duration_too_long')
  }
  return { idleTimeoutSecs: input.idleTimeoutSecs ?? idleMax, maxDurationSecs: input.maxDurationSecs ?? durationMax }
}

/** Checks that need no database writes, in a fixed order: input shape, cloak gate, network. */
async function precheck(services: Services, auth: AuthContext, input: StartInput) {
  if ((input.warmResume || input.fromVersion) && !input.identity) {
    throw badRequest('warmResume and fromVersion need an identity', 'identity_required')
  }
  if (input.warmResume && input.browserKind !== 'cloak') throw badRequest('warmResume needs browserKind cloak', 'cloak_required')
  if (input.browserKind === 'cloak') {
    const gov = await getGovernance(services.db, auth.orgId)
    if (!gov.cloakEnabled) throw forbidden('cloak browsers are not enabled for this org', 'cloak_disabled')
    if (!input.url || !urlIsAdvisorOrigin(input.url, gov.declaredAdvisorOrigins)) {
      throw forbidden('the session url is not a declared advisor origin', 'origin_not_declared')
    }
  }
  let network: ResolvedNetwork | null = null
  if (input.network) {
    network = (await services.networks?.resolve(auth.orgId, input.network)) ?? null
    if (!network) throw forbidden('network not found', 'network_not_found')
  }
  return { network }
}

export async function startSession(
  services: Services,
  auth: AuthContext,
  input: StartInput,
  admission: Admission,
  actingAgentId: string = auth.agentId,
): Promise<SessionView> {
  const plane = requirePlane(services)
  const life = lifetimes(services, input)
  const id = newId('nsess_')
  // A launch slot or a place in line first, synchronously and before any database work: in
  // a burst, every start beyond the queue is refused at once (429). Given back on any failure.
  const ticket = services.admission?.reserve(id)
  const orCancel = <T>(p: Promise<T>): Promise<T> => p.catch((e) => { ticket?.cancel(); throw e })
  // the checks and the agent's default egress are independent reads: one round trip, not two
  const [{ network }, egress] = await orCancel(Promise.all([
    precheck(services, auth, input),
    input.egress ?? agentDefaultEgress(services, actingAgentId),
  ]))
  // local and split without a network are not rejected: nothing is declared, so nothing is tunnelled
  const declaredHosts = egress !== 'platform' && network ? network.declaredHosts : []
  const openedBy = { principalId: actingAgentId, credentialId: auth.principal.credentialId, name: auth.principal.name }

  const browserKind = input.browserKind ?? 'chromium'
  const createdAt = new Date().toISOString()
  // The row exists before the lease is taken, so the lease reaper always sees a live holder,
  // and before a launch slot, so a queued start shows its place in line. Admission writes it
  // under its lock (quotas are exact under bursts); a refused start leaves no row.
  const row = {
    id, orgId: auth.orgId, agentId: actingAgentId, openedBy, admission, identityId: null, grantId: null,
    egress, networkId: network?.id ?? null, browserKind, url: input.url ?? null, viewport: input.viewport ?? null, createdAt, ...life,
  }
  const admitted: Admitted | undefined = ticket
    ? await services.admission!.admit(services.db, auth.orgId, id, ticket, (c) => insertSession(c, row))
    : await insertSession(services.db, row).then(() => undefined)
  try {
    return await launch()
  } finally {
    admitted?.release()
  }

  async function launch(): Promise<SessionView> {
    let bound: { identityId: string; grantId: string; leaseExpiresAt: string } | undefined
    if (input.identity) {
      try {
        bound = await bindIdentity({ db: services.db, now: services.now }, {
          orgId: auth.orgId, agentId: actingAgentId, scopes: auth.scopes, identityRef: input.identity, sessionId: id, admission,
        })
      } catch (e) {
        // a refused bind opened nothing: no session row remains
        await deleteSession(services.db, id)
        throw e
      }
      await bindSessionIdentity(services.db, id, bound.identityId, bound.grantId)
    }
    try {
      let warmVersion: string | undefined
      if (input.warmResume || input.fromVersion) {
        const v = await services.authStates?.pick(auth.orgId, bound!.identityId, input.fromVersion)
        if (!v) throw new ApiError(404, 'not_found', 'no captured auth-state version for this identity')
        warmVersion = v.id
      }
      const labels: Record<string, string> = { [LABELS.org]: auth.orgId, [LABELS.agent]: actingAgentId }
      if (bound) labels[LABELS.identity] = bound.identityId
      await plane.sessions.create({
        metadata: { name: id, labels },
        spec: {
          orgId: auth.orgId, agentId: actingAgentId, openedBy, browserKind, egress, declaredHosts, desiredState: 'Live',
          ...(bound ? { identityId: bound.identityId, leaseExpiresAt: bound.leaseExpiresAt } : {}),
          ...(network ? { networkRef: { name: network.id } } : {}),
          ...(input.viewport ? { viewport: input.viewport } : {}),
          ...(input.url ? { url: input.url } : {}),
          ...(warmVersion ? { warmResume: { versionId: warmVersion } } : {}),
        },
      } as unknown as BrowserSession)
      const obj = services.sessionWatcher
        ? await services.sessionWatcher.waitForPhase(id, ['Live', 'Failed', 'Ended'], START_TIMEOUT_MS)
        : await waitForPhase(plane.sessions, id, ['Live', 'Failed', 'Ended'], START_TIMEOUT_MS)
      if (obj.status?.phase !== 'Live') {
        const reason = obj.status?.conditions?.find((c) => c.type === 'Ready')?.reason ?? 'PodFailed'
        throw new ApiError(503, 'unavailable', 'the browser pod failed to start', reason)
      }
      // the status must be written before the caller drives the session; the journal row
      // queues in order behind it (readers wait for pending rows); the view is built, not read back
      const liveAt = new Date().toISOString()
      journalLater(services.db, { id, orgId: auth.orgId }, { op: admission === 'spawned_child' ? 'spawn_and_start_session' : 'session_start', outcome: 'ok', detail: { egress, browserKind } },
        (err) => services.log.error({ err }, 'journal write failed'))
      await setStatus(services.db, id, 'live', undefined, liveAt)
      return sessionView({
        id, orgId: auth.orgId, agentId: actingAgentId, openedBy, admission, identityId: bound?.identityId ?? null, grantId: bound?.grantId ?? null,
        egress, networkId: network?.id ?? null, browserKind, url: input.url ?? null, viewport: input.viewport ?? null,
        status: 'live', failureReason: null, createdAt, liveAt, endedAt: null, ...life, endReason: null,
      })
    } catch (e) {
      await abandon(services, id, isApiError(e) ? e.reason ?? e.code : 'start_failed')
      throw e
    }
  }
}

/** A start that failed: the row (if any) fails, the lease goes back, the resource is told to end. */
async function abandon(services: Services, id: string, reason: string) {
  await setStatus(services.db, id, 'failed', reason).catch(() => {})
  await release(services.db, id).catch(() => {})
  await services.plane?.sessions.patch(id, { spec: { desiredState: 'Ended' } }).catch(() => {})
}

export async function endSession(services: Services, auth: AuthContext, sessionId: string): Promise<SessionView> {
  const row: SessionRow = await getSession(services.db, auth.orgId, sessionId)
  if (row.status === 'pending' || row.status === 'live') {
    await services.plane?.sessions.patch(sessionId, { spec: { desiredState: 'Ended' } }).catch(() => {})
    if (await setStatus(services.db, sessionId, 'ended')) {
      await journal(services.db, row, { op: 'session_end', outcome: 'ok' })
    }
  }
  // idempotent: ending an ended (or failed) session releases nothing twice and answers the same
  await release(services.db, sessionId)
  services.nodeClients?.drop(sessionId)
  return sessionView(await getSession(services.db, auth.orgId, sessionId))
}
