// Opening and ending sessions. Start = checks → bind (lease) → row → resource →
// wait until the operator reports Live. Anything that fails after the lease was
// taken gives it back, so a failed start never leaves an identity locked.
import type { AuthStateDirectory, NetworkDirectory, ResolvedNetwork } from './directories.ts'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.ts'
import type { Db } from '../store/db.ts'
import type { OrgEvents } from '../events/port.ts'
import type { SessionRuntime } from './runtime.ts'
import type { AuthContext } from '../auth/context.ts'
import { ANNOTATIONS, LABELS, type BrowserKind, type BrowserSession, type EgressMode } from '../../crds/types.ts'
import { newId } from '../../contracts/ids.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import {
  allowedProxy, bindIdentity, getGovernance, identityDefaultProxy, openProxyAuth, platformProxy, release, sealProxyAuth, urlIsAdvisorOrigin, type ProxyRequest, type StartPath,
} from '../personas/index.ts'
import type { Sealer } from '../kms/index.ts'
import type { Admission } from './admission.ts'
import { bindSessionIdentity, deleteSession, getSession, journal, sessionProxySealedAuth, setLive, setSessionProxy, setStarter, setStatus, type SessionRow } from './store.ts'
import { sessionView, type SessionView } from './view.ts'
import { isNotFound } from '../../ports/errors.ts'
import { boundedLabel, sessionFailures, sessionStarts, sessionStartSeconds } from '../metrics/product.ts'
import { currentTraceparent, failSpan, startSpan, withSpan } from '../../telemetry/tracing.ts'

export interface StartInput {
  identity?: string
  egress?: EgressMode
  network?: string
  viewport?: { width: number; height: number }
  url?: string
  browserKind?: BrowserKind
  warmResume?: boolean
  fromVersion?: string
  idleTimeoutSecs?: number
  maxDurationSecs?: number
  /** record the session (docs/sessions.md, "Recordings"); left out, the org's governance default decides */
  record?: boolean
  /** an upstream proxy (docs/proxy.md); left out, the bound identity's default, if any */
  proxy?: ProxyRequest
}

export type { AuthStateDirectory, NetworkDirectory, ResolvedNetwork } from './directories.ts'


/** What opening and ending sessions use (the app passes its Services, which has each). */
export interface SessionDeps {
  config: Config
  db: Db
  /** seals a session's proxy credentials, opens them for the hand-over to its pod */
  sealer: Sealer
  log: FastifyBaseLogger
  now: () => number
  sessions: SessionRuntime
  networks: NetworkDirectory
  authStates: AuthStateDirectory
  admission: Admission
  /** the recorder, seen from a session's start and end (recordings/service.ts is one; it reads sessions, so sessions names only what it calls) */
  recordings: SessionRecorder
  /** where a start going live or failing, and an end, are reported (session.live, session.failed, session.ended) */
  events: OrgEvents
}

export interface SessionRecorder {
  /** starts recording a session that went live; the start fails if this does */
  begin(session: { id: string; orgId: string }): Promise<void>
  /** reads a recording's last seconds before the pod stops; never throws */
  finish(sessionId: string): Promise<void>
}

/** a session's own lifetimes: the server's values unless it asks for shorter ones */
function lifetimes(services: SessionDeps, input: StartInput): { idleTimeoutSecs: number; maxDurationSecs: number } {
  const { idleTimeoutSecs: idleMax, maxDurationSecs: durationMax } = services.config.lifetimes
  if (input.idleTimeoutSecs !== undefined && input.idleTimeoutSecs > idleMax) {
    throw errors.idleTimeoutTooLong(idleMax)
  }
  if (input.maxDurationSecs !== undefined && input.maxDurationSecs > durationMax) {
    throw errors.maxDurationTooLong(durationMax)
  }
  return { idleTimeoutSecs: input.idleTimeoutSecs ?? idleMax, maxDurationSecs: input.maxDurationSecs ?? durationMax }
}

/** Checks that need no database writes, in a fixed order: input shape, cloak gate, network, proxy allowlist. */
async function precheck(services: SessionDeps, auth: AuthContext, input: StartInput) {
  if ((input.warmResume || input.fromVersion) && !input.identity) {
    throw errors.identityRequired()
  }
  if (input.warmResume && input.browserKind !== 'cloak') throw errors.cloakRequired()
  if (input.browserKind === 'cloak') {
    const gov = await getGovernance(services.db, auth.orgId)
    if (!gov.cloakEnabled) throw errors.cloakDisabled()
    if (!input.url || !urlIsAdvisorOrigin(input.url, gov.declaredAdvisorOrigins)) {
      throw errors.originNotDeclared()
    }
  }
  let network: ResolvedNetwork | null = null
  if (input.network) {
    network = await services.networks.resolve(auth.orgId, input.network)
    if (!network) throw errors.networkNotFound()
  }
  const proxy = input.proxy ? await allowedProxy(services.db, auth.orgId, input.proxy.url, services.config) : null
  return { network, proxy }
}

/** What opening a session needs: who asks, what they ask for, how it was admitted (direct or a spawned child), and as which agent. */
export interface StartRequest {
  auth: AuthContext
  input: StartInput
  admission: StartPath
  /** the agent the session runs as: the caller's own, or a spawned child's */
  actingAgentId?: string
}

/**
 * A start in two halves. The first is awaited by startSession and decides everything a
 * caller is refused for: the checks, admission (quotas, a place in line; the row is written
 * pending) and the identity bind (lease). The second, `live`, waits for a launch slot, the
 * browser and the recording, and resolves with the live view; the caller may stop waiting
 * for it (detach) and the start goes on, visible as pending until it is live or failed.
 */
export interface StartedSession {
  id: string
  orgId: string
  live: Promise<SessionView>
  /** the caller answered 202: the start keeps its place in line with no queue deadline */
  detach(): void
}

/** Starts a session and waits until it is live (or refused or failed). */
export async function startSession(services: SessionDeps, req: StartRequest): Promise<SessionView> {
  return (await beginStart(services, req)).live
}

/** In-flight starts of this process, so a caller asking to wait for one awaits it instead of polling. */
const starting = new Map<string, Promise<SessionView>>()

/** Resolves when the session `id`, started by this process, settles; undefined when it is not starting here. */
export function startInFlight(id: string): Promise<SessionView> | undefined {
  return starting.get(id)
}

/**
 * Opens a start (see StartedSession), counted and traced: one span from the request to
 * live (or its refusal or failure), whose trace the BrowserSession carries to the operator.
 */
export async function beginStart(services: SessionDeps, req: StartRequest): Promise<StartedSession> {
  const span = startSpan('session.start', { attributes: { 'nightjar.admission': req.admission } })
  const began = performance.now()
  let started: StartedSession
  try {
    started = await withSpan(span, () => openStart(services, req))
  } catch (e) {
    sessionStarts.inc({ outcome: 'refused' })
    failSpan(span, e)
    span.end()
    throw e
  }
  span.setAttribute('nightjar.session.id', started.id)
  started.live.then(() => {
    sessionStarts.inc({ outcome: 'live' })
    sessionStartSeconds.observe((performance.now() - began) / 1000)
    span.setAttribute('nightjar.outcome', 'ok')
    span.end()
  }, (e: unknown) => {
    // a queued start whose deadline passed is a 429 like any refusal; the rest failed after admission
    sessionStarts.inc({ outcome: isApiError(e) && e.status === 429 ? 'refused' : 'failed' })
    failSpan(span, e)
    span.end()
  })
  return started
}

async function openStart(services: SessionDeps, { auth, input, admission, actingAgentId = auth.agentId }: StartRequest): Promise<StartedSession> {
  // a process without a session plane refuses here, before any work (NO_SESSIONS: the one 503)
  const { resources, watcher, handOverAuthState } = services.sessions
  const life = lifetimes(services, input)
  const id = newId('nsess_')
  // A launch slot or a place in line first, synchronously and before any database work: in
  // a burst, every start beyond the queue is refused at once (429). Given back on any failure.
  const ticket = services.admission.reserve(id)
  const orCancel = <T>(p: Promise<T>): Promise<T> => p.catch((e) => { ticket.cancel(); throw e })
  const { network, proxy: askedProxy } = await orCancel(precheck(services, auth, input))
  // the credentials are sealed before anything waits: from here on only the envelope is held
  const sessionOwner = { orgId: auth.orgId, kind: 'session' as const, id }
  let proxy: { url: string; sealedAuth: string | null } | null = askedProxy && input.proxy
    ? { url: askedProxy.url, sealedAuth: await orCancel(sealProxyAuth(services.sealer, sessionOwner, input.proxy)) }
    : null
  const openedBy = { principalId: actingAgentId, credentialId: auth.principal.credentialId, name: auth.principal.name }

  const browserKind = input.browserKind ?? 'chromium'
  const createdAt = new Date(services.now()).toISOString()
  // The row exists before the lease is taken, so the lease reaper always sees a live holder,
  // and before a launch slot, so a queued start shows its place in line. Admission writes it
  // under its lock (quotas are exact under bursts); a refused start leaves no row. What the
  // start leaves out, admission fills in: the agent's egress; the org's recording default
  // (an org that records every session still lets a start say record: false).
  const row = {
    id, orgId: auth.orgId, agentId: actingAgentId, openedBy, admission, identityId: null, grantId: null,
    egress: input.egress ?? null, networkId: network?.id ?? null, browserKind, url: input.url ?? null, viewport: input.viewport ?? null, createdAt, ...life,
  }
  const { granted, defaults: { egress, record } } = await services.admission.admit(services.db, row, input.record ?? null, ticket)
  // local and split without a network are not rejected: nothing is declared, so nothing is tunnelled
  const declaredHosts = egress !== 'platform' && network ? network.declaredHosts : []

  // The bind comes before the launch slot, so every refusal a caller can get (no grant,
  // lease held …) is decided before it could be answered 202 pending.
  let bound: { identityId: string; grantId: string; leaseExpiresAt: string } | undefined
  try {
    await setStarter(services.db, id, services.sessions.replicaId)
    if (input.identity) {
      bound = await bindIdentity({ db: services.db, now: services.now }, {
        orgId: auth.orgId, agentId: actingAgentId, scopes: auth.scopes, identityRef: input.identity, sessionId: id, admission,
      })
      await bindSessionIdentity(services.db, id, bound.identityId, bound.grantId)
      // no proxy asked for: the identity's default, held to today's allowlist, its
      // credentials sealed again under this session
      const fallback = proxy ? null : await identityDefaultProxy(services.db, auth.orgId, bound.identityId)
      if (fallback) {
        const { url } = await allowedProxy(services.db, auth.orgId, fallback.url, services.config)
        let sealedAuth: string | null = null
        if (fallback.sealedAuth) {
          const creds = await openProxyAuth(services.sealer, { orgId: auth.orgId, kind: 'identity', id: bound.identityId }, fallback.sealedAuth)
          sealedAuth = await sealProxyAuth(services.sealer, sessionOwner, creds)
        }
        proxy = { url, sealedAuth }
      }
    }
    if (proxy) await setSessionProxy(services.db, id, proxy.url, proxy.sealedAuth)
  } catch (e) {
    // a refused bind opened nothing: no lease (a step after the lease may have refused),
    // no session row and no place in line remain
    ticket.cancel()
    await release(services.db, id)
    await deleteSession(services.db, id)
    throw e
  }
  const proxyView = proxy ? { url: proxy.url, authenticated: proxy.sealedAuth !== null } : null
  proxy = null // the envelope is read back from the row at the hand-over

  const live = (async () => {
    let admitted
    try {
      admitted = await granted
    } catch (e) {
      // the queue deadline passed while the caller still waited: a 429, and nothing remains
      await release(services.db, id)
      await deleteSession(services.db, id)
      throw e
    }
    try {
      return await launch()
    } finally {
      admitted.release()
    }
  })()
  starting.set(id, live)
  live.then(() => starting.delete(id), () => starting.delete(id))
  return { id, orgId: auth.orgId, live, detach: () => ticket.detach() }

  async function launch(): Promise<SessionView> {
    // the operator's condition reason (PodFailed, StartTimeout …) when the pod failed: a
    // field of the session view, not the error's reason
    let podFailure: string | undefined
    try {
      let warmVersion: string | undefined
      if (input.warmResume || input.fromVersion) {
        const v = await services.authStates.pick(auth.orgId, bound!.identityId, input.fromVersion)
        if (!v) throw errors.noAuthStateVersion()
        warmVersion = v.id
      }
      const labels: Record<string, string> = { [LABELS.org]: auth.orgId, [LABELS.agent]: actingAgentId }
      if (bound) labels[LABELS.identity] = bound.identityId
      // the start's trace crosses to the operator on the resource (W3C traceparent; none when not tracing)
      const traceparent = currentTraceparent()
      const created = await resources.create({
        metadata: { name: id, labels, annotations: { [ANNOTATIONS.requestedAt]: createdAt, ...(traceparent ? { [ANNOTATIONS.traceparent]: traceparent } : {}) } },
        spec: {
          orgId: auth.orgId, agentId: actingAgentId, openedBy, browserKind, egress, declaredHosts, desiredState: 'Live',
          ...(bound ? { identityId: bound.identityId, leaseExpiresAt: bound.leaseExpiresAt } : {}),
          ...(network ? { networkRef: { name: network.id } } : {}),
          ...(input.viewport ? { viewport: input.viewport } : {}),
          ...(input.url ? { url: input.url } : {}),
          ...(warmVersion ? { warmResume: { versionId: warmVersion } } : {}),
        },
      } as unknown as BrowserSession)
      // Kubernetes: the operator cannot open the version itself; it waits for this hand-over
      if (warmVersion && handOverAuthState && !(await handOverAuthState(created))) {
        throw errors.noAuthStateVersion()
      }
      const obj = await watcher.waitForPhase(id, ['Live', 'Failed', 'Ended'], services.config.capacity.startTimeoutMs)
      if (obj.status?.phase !== 'Live') {
        podFailure = obj.status?.conditions?.find((c) => c.type === 'Ready')?.reason ?? 'PodFailed'
        throw errors.sessionStartFailed()
      }
      // the proxy reaches the pod before the caller can drive, or the start fails
      if (proxyView) await handOverProxy(services, { orgId: auth.orgId, id }, proxyView.url)
      // asked for a recording: it runs before the caller can drive, or the start fails
      if (record) await services.recordings.begin({ id, orgId: auth.orgId })
      // the status (with the start's journal row) is written before the caller drives the
      // session; the view is built, not read back
      const liveAt = new Date(services.now()).toISOString()
      const sandbox = obj.status?.sandbox
      await setLive(services.db, { id, orgId: auth.orgId }, liveAt, { op: admission === 'spawned_child' ? 'spawn_and_start_session' : 'session_start', outcome: 'ok', detail: { egress, browserKind, ...(sandbox ? { sandbox } : {}), ...(proxyView ? { proxy: proxyView.url } : {}) } }, sandbox)
      await services.events.emit({ orgId: auth.orgId, type: 'session.live', data: { sessionId: id, agentId: actingAgentId, identityId: bound?.identityId ?? null, egress, browserKind, ...(sandbox ? { sandbox } : {}) } })
      return sessionView({
        id, orgId: auth.orgId, agentId: actingAgentId, openedBy, admission, identityId: bound?.identityId ?? null, grantId: bound?.grantId ?? null,
        egress, networkId: network?.id ?? null, browserKind, url: input.url ?? null, viewport: input.viewport ?? null,
        status: 'live', failureReason: null, sandbox: sandbox ?? null, createdAt, liveAt, endedAt: null, ...life, endReason: null, proxy: proxyView,
      })
    } catch (e) {
      await abandon(services, { id, orgId: auth.orgId, agentId: actingAgentId }, podFailure ?? (isApiError(e) ? e.reason ?? e.code : 'start_failed'))
      throw e
    }
  }
}

/**
 * Hands the session's proxy to its pod's egress gateway: the sealed credentials are read
 * from the row and opened just for this call (PodClient zeroes the request bytes).
 */
async function handOverProxy(services: SessionDeps, session: { orgId: string; id: string }, url: string): Promise<void> {
  const sealed = await sessionProxySealedAuth(services.db, session.orgId, session.id)
  const creds = sealed ? await openProxyAuth(services.sealer, { orgId: session.orgId, kind: 'session', id: session.id }, sealed) : null
  const pod = await services.sessions.pods.get(session.id)
  await pod.egressProxy({ url, ...(creds ?? {}), platformProxy: platformProxy(services.config, url) })
}

/**
 * Starts a session and answers within `waitMs`: live, or — when the browser is not live
 * by then — the session as it stands (pending, with its place in line). Nothing is lost
 * either way: a start not live in time goes on, detached, until it is live or failed.
 * Refusals (4xx, 429) come before the wait, so they are never turned into a pending answer.
 */
export async function startSessionWithin(services: SessionDeps, req: StartRequest, waitMs: number): Promise<{ view: SessionView; pending: boolean }> {
  const deadline = Date.now() + waitMs
  const started = await beginStart(services, req)
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())) })
  try {
    const first = await Promise.race([started.live, timedOut])
    if (first !== 'timeout') return { view: first, pending: false }
  } finally {
    clearTimeout(timer)
  }
  started.detach()
  // a detached start that fails is marked failed on its row (abandon); here it is only logged
  started.live.catch((err) => services.log.warn({ err: isApiError(err) ? undefined : err, session: started.id, code: isApiError(err) ? err.code : undefined }, 'a pending session start failed after its caller was answered'))
  const view = sessionView(await getSession(services.db, started.orgId, started.id), services.admission.queuePosition(started.id))
  return { view, pending: view.status === 'pending' }
}

/**
 * The session, after waiting up to `waitMs` for it to leave pending: awaited directly when
 * this process is starting it, otherwise read again every 250 ms (another replica's start).
 */
export async function sessionWhenSettled(services: SessionDeps, orgId: string, id: string, waitMs: number): Promise<SessionView> {
  const read = async () => sessionView(await getSession(services.db, orgId, id), services.admission.queuePosition(id))
  let view = await read()
  const deadline = Date.now() + waitMs
  while (view.status === 'pending' && Date.now() < deadline) {
    const local = startInFlight(id)
    let timer: NodeJS.Timeout | undefined
    const pause = new Promise<void>((resolve) => { timer = setTimeout(resolve, local ? deadline - Date.now() : Math.min(250, deadline - Date.now())) })
    await Promise.race([local?.then(() => {}, () => {}) ?? pause, pause])
    clearTimeout(timer)
    view = await read()
  }
  return view
}

/** A start that failed: the row (if any) fails, the lease goes back, the resource is told to end. */
async function abandon(services: SessionDeps, session: { id: string; orgId: string; agentId: string }, reason: string) {
  const { id } = session
  // the start's own error is what the caller gets: these are logged, never thrown over it.
  // What a lost write leaves behind is repaired elsewhere (the watcher's start-up sweep fails
  // open rows without a running resource; the lease reaper frees leases of closed rows).
  const report = (what: string) => (err: unknown) => services.log.error({ err, session: id }, `abandoning a failed start: ${what}`)
  const failed = await setStatus(services.db, id, 'failed', reason).catch((err) => { report('could not mark the session failed')(err); return false })
  if (failed) sessionFailures.inc({ reason: boundedLabel(reason) })
  if (failed) await services.events.emit({ orgId: session.orgId, type: 'session.failed', data: { sessionId: id, agentId: session.agentId, reason } })
  await release(services.db, id).catch(report('could not release the lease'))
  await services.sessions.resources.patch(id, { spec: { desiredState: 'Ended' } }).catch((err) => {
    if (!isNotFound(err)) report('could not tell the operator to end the session')(err) // no resource (failed before it was written): nothing runs
  })
}

export async function endSession(services: SessionDeps, { auth, sessionId }: { auth: AuthContext; sessionId: string }): Promise<SessionView> {
  // a process without a session plane refuses here (NO_SESSIONS: the one 503)
  const { resources, pods } = services.sessions
  const row: SessionRow = await getSession(services.db, auth.orgId, sessionId)
  if (row.status === 'pending' || row.status === 'live') {
    // the recording's last seconds are read while the pod still runs (never throws)
    await services.recordings.finish(sessionId)
    // the browser must really stop: a failed patch fails the call (the row stays open, so the
    // caller's retry does it again); only a resource that is gone already is fine
    await resources.patch(sessionId, { spec: { desiredState: 'Ended' } }).catch((err) => {
      if (!isNotFound(err)) throw err
    })
    if (await setStatus(services.db, sessionId, 'ended')) {
      await journal(services.db, row, { op: 'session_end', outcome: 'ok' })
      await services.events.emit({ orgId: row.orgId, type: 'session.ended', data: { sessionId, agentId: row.agentId, reason: 'session_end' } })
    }
  }
  // idempotent: ending an ended (or failed) session releases nothing twice and answers the same
  await release(services.db, sessionId)
  pods.drop(sessionId)
  return sessionView(await getSession(services.db, auth.orgId, sessionId))
}
