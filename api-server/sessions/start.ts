// A start, as named steps: reserve → precheck → seal the proxy → admit → bind → launch
// (create → await live → hand over the proxy → record → mark live → emit). Anything that
// fails after the lease was taken gives it back, so a failed start never leaves an identity
// locked. Opening (counted, traced) and ending sessions: lifecycle.ts.
import type { StartDrain } from './start-drain.ts'
import type { AuthStateDirectory, NetworkDirectory, ResolvedNetwork } from './directories.ts'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.ts'
import type { Db } from '../store/db.ts'
import type { OrgEvents } from '../events/port.ts'
import type { SessionRuntime } from './runtime.ts'
import type { AuthContext } from '../auth/context.ts'
import { ANNOTATIONS, LABELS, type BrowserKind, type BrowserSession, type EgressMode, type SandboxKind } from '../../crds/types.ts'
import { newId } from '../../contracts/ids.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import {
  allowedProxy, bindIdentity, getGovernance, identityDefaultProxy, openProxyAuth, platformProxy, release, sealProxyAuth, urlIsAdvisorOrigin, type ProxyRequest, type StartPath,
} from '../personas/index.ts'
import type { Sealer } from '../kms/index.ts'
import type { VideoFormat } from '../../contracts/pod-api.ts'
import { DEFAULT_VIEWPORT } from '../../contracts/operations/fields.ts'
import type { Admission, Admitted as LaunchSlot, Ticket } from './admission.ts'
import { bindSessionIdentity, deleteSession, sessionProxySealedAuth, setLive, setSessionProxy, setStarter, setStatus } from './store.ts'
import { sessionView, type SessionView } from './view.ts'
import { isNotFound } from '../../ports/errors.ts'
import { boundedLabel, sessionFailures } from '../metrics/product.ts'
import { currentTraceparent } from '../../telemetry/tracing.ts'
import { checkExtensionIds, extensionFilesForPod, extensionsForStart } from '../extensions/service.ts'
import { setSessionExtensions } from '../extensions/store.ts'

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
  /** a video of the session (docs/sessions.md, "Video"): true for the defaults, false for none; left out, the org's governance default decides */
  video?: boolean | VideoRequest
  /** an upstream proxy (docs/proxy.md); left out, the bound identity's default, if any */
  proxy?: ProxyRequest
  /** browser extensions to load (docs/extensions.md); left out, the bound identity's default */
  extensions?: string[]
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
  /** this process's starts as it shuts down: waits answered early, starts in flight awaited */
  startDrain: StartDrain
}

/** what a session's video is asked to be (contracts/operations/sessions.ts) */
export interface VideoRequest { format?: VideoFormat; fps?: number; width?: number }

export interface SessionRecorder {
  /** starts recording a session that went live; the start fails if this does */
  begin(session: { id: string; orgId: string }): Promise<void>
  /** starts a session's video once it is live; the start fails if this does */
  beginVideo(session: { id: string; orgId: string; video: VideoRequest; viewportWidth: number }): Promise<void>
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

/** In-flight starts of this process, so a caller asking to wait for one awaits it instead of polling. */
const starting = new Map<string, Promise<SessionView>>()

/** Resolves when the session `id`, started by this process, settles; undefined when it is not starting here. */
export function startInFlight(id: string): Promise<SessionView> | undefined {
  return starting.get(id)
}

// ── a start, step by step ───────────────────────────────────────────────────
// reserve → precheck → seal the proxy → admit → bind → launch (create → await live → hand
// over the proxy → record → mark live → emit). Each step is a function of (deps, state) that
// returns the state it adds to; a step's undo, where it has one, is written beside it.

type Lifetimes = ReturnType<typeof lifetimes>
/** a session's upstream proxy: its URL and its credentials sealed under the session (or none) */
type SessionProxy = { url: string; sealedAuth: string | null }

/** reserve's state: who asks for what, the session's id, its lifetimes and its admission ticket */
interface Reserved { auth: AuthContext; input: StartInput; admission: StartPath; agentId: string; id: string; life: Lifetimes; ticket: Ticket }
interface Checked extends Reserved { network: ResolvedNetwork | null; allowedProxyUrl: string | null }
interface Sealed extends Checked { proxy: SessionProxy | null }
interface Admitted extends Sealed {
  openedBy: { principalId: string; credentialId: AuthContext['principal']['credentialId']; name: string }
  browserKind: BrowserKind
  createdAt: string
  granted: Promise<LaunchSlot>
  egress: EgressMode
  record: boolean
  video: boolean
  declaredHosts: string[]
}
/** after bind: the lease, and the proxy as the caller sees it (the sealed envelope is read back from the row at the hand-over) */
interface Bound extends Omit<Admitted, 'proxy'> {
  lease?: { identityId: string; grantId: string; leaseExpiresAt: string }
  proxyView: { url: string; authenticated: boolean } | null
  /** the extensions the session loads (asked, or the identity's default) */
  extensions: string[]
}

/**
 * 1. reserve: a launch slot or a place in line, synchronously and before any database work,
 * so in a burst every start beyond the queue is refused at once (429). Undo: unreserve.
 */
function reserve(deps: SessionDeps, { auth, input, admission, actingAgentId = auth.agentId }: StartRequest): Reserved {
  // a process without a session plane refuses here, before any work (NO_SESSIONS: the one 503)
  void deps.sessions.resources
  const life = lifetimes(deps, input)
  const id = newId('nsess_')
  return { auth, input, admission, agentId: actingAgentId, id, life, ticket: deps.admission.reserve(id) }
}

/** undo of reserve: the slot or the place in line goes back (idempotent) */
const unreserve = (s: Reserved) => s.ticket.cancel()

/** 2. precheck: checks that need no database writes, in a fixed order: input shape, cloak gate, network, proxy allowlist. */
async function precheck(deps: SessionDeps, s: Reserved): Promise<Checked> {
  const { auth, input } = s
  if ((input.warmResume || input.fromVersion) && !input.identity) {
    throw errors.identityRequired()
  }
  if (input.warmResume && input.browserKind !== 'cloak') throw errors.cloakRequired()
  // before the cloak gate: an org with cloak off still learns extensions need chromium
  if (input.extensions?.length && input.browserKind === 'cloak') throw errors.extensionsNeedChromium()
  if (input.browserKind === 'cloak') {
    const gov = await getGovernance(deps.db, auth.orgId)
    if (!gov.cloakEnabled) throw errors.cloakDisabled()
    if (!input.url || !urlIsAdvisorOrigin(input.url, gov.declaredAdvisorOrigins)) {
      throw errors.originNotDeclared()
    }
  }
  let network: ResolvedNetwork | null = null
  if (input.network) {
    network = await deps.networks.resolve({ orgId: auth.orgId, ref: input.network })
    if (!network) throw errors.networkNotFound()
  }
  if (input.extensions?.length) await checkExtensionIds(deps.db, { orgId: auth.orgId, ids: input.extensions })
  const allowed = input.proxy ? await allowedProxy(deps.db, auth.orgId, input.proxy.url, deps.config) : null
  return { ...s, network, allowedProxyUrl: allowed?.url ?? null }
}

const sessionOwner = (s: Reserved) => ({ orgId: s.auth.orgId, kind: 'session' as const, id: s.id })

/** 3. seal the proxy: its credentials are sealed before anything waits; from here on only the envelope is held. */
async function sealProxy(deps: SessionDeps, s: Checked): Promise<Sealed> {
  const asked = s.input.proxy
  const proxy = s.allowedProxyUrl !== null && asked ? { url: s.allowedProxyUrl, sealedAuth: await sealProxyAuth(deps.sealer, sessionOwner(s), asked) } : null
  return { ...s, proxy }
}

/**
 * 4. admit: admission writes the row under its lock (quotas are exact under bursts) before
 * the lease is taken, so the lease reaper always sees a live holder, and before a launch
 * slot, so a queued start shows its place in line; a refused start leaves no row. What the
 * start leaves out, admission fills in: the agent's egress, the org's recording default (an
 * org that records every session still lets a start say record: false).
 */
async function admit(deps: SessionDeps, s: Sealed): Promise<Admitted> {
  const { auth, input, network } = s
  const openedBy = { principalId: s.agentId, credentialId: auth.principal.credentialId, name: auth.principal.name }
  const browserKind = input.browserKind ?? 'chromium'
  const createdAt = new Date(deps.now()).toISOString()
  const row = {
    id: s.id, orgId: auth.orgId, agentId: s.agentId, openedBy, admission: s.admission, identityId: null, grantId: null,
    egress: input.egress ?? null, networkId: network?.id ?? null, browserKind, url: input.url ?? null, viewport: input.viewport ?? null, createdAt, ...s.life,
  }
  const asked = { record: input.record ?? null, video: input.video === undefined ? null : input.video !== false }
  const { granted, defaults: { egress, record, video } } = await deps.admission.admit(deps.db, row, asked, s.ticket)
  // local and split without a network are not rejected: nothing is declared, so nothing is tunnelled
  const declaredHosts = egress !== 'platform' && network ? network.declaredHosts : []
  return { ...s, openedBy, browserKind, createdAt, granted, egress, record, video, declaredHosts }
}

/**
 * 5. bind: the identity's lease, and its default proxy when none was asked for. It comes
 * before the launch slot, so every refusal a caller can get (no grant, lease held …) is
 * decided before it could be answered 202 pending. Undo: unadmit.
 */
async function bind(deps: SessionDeps, s: Admitted): Promise<Bound> {
  const { auth, input } = s
  await setStarter(deps.db, s.id, deps.sessions.replicaId)
  let proxy = s.proxy
  let lease: Bound['lease']
  if (input.identity) {
    lease = await bindIdentity({ db: deps.db, now: deps.now }, {
      orgId: auth.orgId, agentId: s.agentId, scopes: auth.scopes, identityRef: input.identity, sessionId: s.id, admission: s.admission,
    })
    await bindSessionIdentity(deps.db, s.id, lease.identityId, lease.grantId)
    proxy ??= await identityProxy(deps, s, lease.identityId)
  }
  if (proxy) await setSessionProxy(deps.db, s.id, proxy.url, proxy.sealedAuth)
  // fixed here, on the row the sealed fill reads: what the session loads is never what a page says
  const extensions = await extensionsForStart(deps.db, { orgId: auth.orgId, asked: input.extensions, identityId: lease?.identityId })
  if (extensions.length && s.browserKind === 'cloak') throw errors.extensionsNeedChromium()
  if (extensions.length) await setSessionExtensions(deps.db, s.id, extensions)
  const { proxy: _envelope, ...rest } = s
  return { ...rest, lease, proxyView: proxy ? { url: proxy.url, authenticated: proxy.sealedAuth !== null } : null, extensions }
}

/** the identity's default proxy, held to today's allowlist, its credentials sealed again under this session */
async function identityProxy(deps: SessionDeps, s: Admitted, identityId: string): Promise<SessionProxy | null> {
  const fallback = await identityDefaultProxy(deps.db, s.auth.orgId, identityId)
  if (!fallback) return null
  const { url } = await allowedProxy(deps.db, s.auth.orgId, fallback.url, deps.config)
  if (!fallback.sealedAuth) return { url, sealedAuth: null }
  const creds = await openProxyAuth(deps.sealer, { orgId: s.auth.orgId, kind: 'identity', id: identityId }, fallback.sealedAuth)
  return { url, sealedAuth: await sealProxyAuth(deps.sealer, sessionOwner(s), creds) }
}

/** undo of admit and bind: no lease (a step after the lease may have refused), no row and no place in line remain */
async function unadmit(deps: SessionDeps, s: Reserved): Promise<void> {
  unreserve(s)
  await release(deps.db, s.id)
  await deleteSession(deps.db, s.id)
}

export async function openStart(deps: SessionDeps, req: StartRequest): Promise<StartedSession> {
  const reserved = reserve(deps, req)
  let admitted: Admitted
  try {
    admitted = await admit(deps, await sealProxy(deps, await precheck(deps, reserved)))
  } catch (e) {
    unreserve(reserved)
    throw e
  }
  let bound: Bound
  try {
    bound = await bind(deps, admitted)
  } catch (e) {
    await unadmit(deps, admitted)
    throw e
  }
  const live = launchWhenGranted(deps, bound)
  starting.set(bound.id, live)
  deps.startDrain.track(live)
  live.then(() => starting.delete(bound.id), () => starting.delete(bound.id))
  return { id: bound.id, orgId: bound.auth.orgId, live, detach: () => bound.ticket.detach() }
}

/** 6. launch, once admission grants a slot; the slot is given back however the launch ends. */
async function launchWhenGranted(deps: SessionDeps, s: Bound): Promise<SessionView> {
  let slot: LaunchSlot
  try {
    slot = await s.granted
  } catch (e) {
    // the queue deadline passed while the caller still waited: a 429, and nothing remains
    await release(deps.db, s.id)
    await deleteSession(deps.db, s.id)
    throw e
  }
  try {
    return await launch(deps, s)
  } finally {
    slot.release()
  }
}

/** create → await live → hand over the proxy → record → mark live → emit; a failure abandons the start. */
async function launch(deps: SessionDeps, s: Bound): Promise<SessionView> {
  // the operator's condition reason (PodFailed, StartTimeout …) when the pod failed: a
  // field of the session view, not the error's reason
  const failure: { pod?: string } = {}
  try {
    await create(deps, s)
    const obj = await awaitLive(deps, s, failure)
    // the proxy reaches the pod before the caller can drive, or the start fails
    if (s.proxyView) await handOverProxy(deps, { orgId: s.auth.orgId, id: s.id }, s.proxyView.url)
    // the extensions run before the caller can drive, and before a recording attaches to the pages
    if (s.extensions.length) await loadExtensions(deps, { orgId: s.auth.orgId, id: s.id }, s.extensions)
    // asked for a recording: it runs before the caller can drive, or the start fails
    if (s.record) await deps.recordings.begin({ id: s.id, orgId: s.auth.orgId })
    if (s.video) {
      const asked = typeof s.input.video === 'object' ? s.input.video : {}
      await deps.recordings.beginVideo({ id: s.id, orgId: s.auth.orgId, video: asked, viewportWidth: s.input.viewport?.width ?? DEFAULT_VIEWPORT.width })
    }
    const marked = await markLive(deps, s, obj.status?.sandbox)
    await emitLive(deps, s, marked.sandbox)
    return liveView(s, marked)
  } catch (e) {
    await abandon(deps, { id: s.id, orgId: s.auth.orgId, agentId: s.agentId }, failure.pod ?? (isApiError(e) ? e.reason ?? e.code : 'start_failed'))
    throw e
  }
}

/** 6a. create: the BrowserSession resource (and, on Kubernetes, the warm resume's auth state handed over). */
async function create(deps: SessionDeps, s: Bound): Promise<void> {
  const { auth, input, lease, network } = s
  let warmVersion: string | undefined
  if (input.warmResume || input.fromVersion) {
    const v = await deps.authStates.pick({ orgId: auth.orgId, identityId: lease!.identityId, versionId: input.fromVersion })
    if (!v) throw errors.noAuthStateVersion()
    warmVersion = v.id
  }
  const labels: Record<string, string> = { [LABELS.org]: auth.orgId, [LABELS.agent]: s.agentId }
  if (lease) labels[LABELS.identity] = lease.identityId
  // the start's trace crosses to the operator on the resource (W3C traceparent; none when not tracing)
  const traceparent = currentTraceparent()
  const created = await deps.sessions.resources.create({
    metadata: { name: s.id, labels, annotations: { [ANNOTATIONS.requestedAt]: s.createdAt, ...(traceparent ? { [ANNOTATIONS.traceparent]: traceparent } : {}) } },
    spec: {
      orgId: auth.orgId, agentId: s.agentId, openedBy: s.openedBy, browserKind: s.browserKind, egress: s.egress, declaredHosts: s.declaredHosts, desiredState: 'Live',
      ...(lease ? { identityId: lease.identityId, leaseExpiresAt: lease.leaseExpiresAt } : {}),
      ...(network ? { networkRef: { name: network.id } } : {}),
      ...(input.viewport ? { viewport: input.viewport } : {}),
      ...(input.url ? { url: input.url } : {}),
      ...(warmVersion ? { warmResume: { versionId: warmVersion } } : {}),
      ...(s.extensions.length ? { extensions: true } : {}),
    },
  } as unknown as BrowserSession)
  // Kubernetes: the operator cannot open the version itself; it waits for this hand-over
  const { handOverAuthState } = deps.sessions
  if (warmVersion && handOverAuthState && !(await handOverAuthState(created))) {
    throw errors.noAuthStateVersion()
  }
}

/** 6b. await live: the operator reports Live, or the pod's failure reason is kept for the view. */
async function awaitLive(deps: SessionDeps, s: Bound, failure: { pod?: string }): Promise<BrowserSession> {
  const obj = await deps.sessions.watcher.waitForPhase(s.id, ['Live', 'Failed', 'Ended'], deps.config.capacity.startTimeoutMs)
  if (obj.status?.phase !== 'Live') {
    failure.pod = obj.status?.conditions?.find((c) => c.type === 'Ready')?.reason ?? 'PodFailed'
    throw errors.sessionStartFailed()
  }
  return obj
}

/** 6c. mark live: the status, with the start's journal row, is written before the caller drives the session. */
async function markLive(deps: SessionDeps, s: Bound, sandbox: SandboxKind | undefined): Promise<{ liveAt: string; sandbox: SandboxKind | undefined }> {
  const liveAt = new Date(deps.now()).toISOString()
  const detail = {
    egress: s.egress, browserKind: s.browserKind, ...(sandbox ? { sandbox } : {}), ...(s.proxyView ? { proxy: s.proxyView.url } : {}),
    ...(s.extensions.length ? { extensions: s.extensions } : {}),
  }
  await setLive(deps.db, { id: s.id, orgId: s.auth.orgId }, liveAt, { op: s.admission === 'spawned_child' ? 'spawn_and_start_session' : 'session_start', outcome: 'ok', detail }, sandbox)
  return { liveAt, sandbox }
}

/** 6d. emit: session.live to the org's webhooks */
async function emitLive(deps: SessionDeps, s: Bound, sandbox: SandboxKind | undefined): Promise<void> {
  await deps.events.emit({ orgId: s.auth.orgId, type: 'session.live', data: { sessionId: s.id, agentId: s.agentId, identityId: s.lease?.identityId ?? null, egress: s.egress, browserKind: s.browserKind, ...(sandbox ? { sandbox } : {}) } })
}

/** the live session's view, built, not read back */
function liveView(s: Bound, { liveAt, sandbox }: { liveAt: string; sandbox: SandboxKind | undefined }): SessionView {
  return sessionView({
    id: s.id, orgId: s.auth.orgId, agentId: s.agentId, openedBy: s.openedBy, admission: s.admission, identityId: s.lease?.identityId ?? null, grantId: s.lease?.grantId ?? null,
    egress: s.egress, networkId: s.network?.id ?? null, browserKind: s.browserKind, url: s.input.url ?? null, viewport: s.input.viewport ?? null,
    status: 'live', failureReason: null, sandbox: sandbox ?? null, createdAt: s.createdAt, liveAt, endedAt: null, ...s.life, endReason: null, proxy: s.proxyView,
    extensions: s.extensions,
  })
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

/** Hands the session's extensions to its pod, one at a time (each within the pod's body limit), then moves the session into the browser that loads them. */
async function loadExtensions(services: SessionDeps, session: { orgId: string; id: string }, ids: string[]): Promise<void> {
  const pod = await services.sessions.pods.get(session.id)
  for (const ext of await extensionFilesForPod(services.db, { orgId: session.orgId, ids })) await pod.extensionPut(ext)
  await pod.extensionsLoad()
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

