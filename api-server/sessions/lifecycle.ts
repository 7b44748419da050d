// Opening and ending sessions: a start counted and traced from the request to live (its
// steps in start.ts), answered within a wait or left pending, and an end that really stops
// the browser. Design: docs/ARCHITECTURE.md#wiring
import { orClosing } from './start-drain.ts'
import type { AuthContext } from '../auth/context.ts'
import { isApiError } from '../../contracts/errors.ts'
import { release } from '../personas/index.ts'
import { getSession, journal, setStatus, type SessionRow } from './store.ts'
import { sessionView, type SessionView } from './view.ts'
import { isNotFound } from '../../ports/errors.ts'
import { sessionStarts, sessionStartSeconds } from '../metrics/product.ts'
import { failSpan, startSpan, withSpan } from '../../telemetry/tracing.ts'
import { openStart, startInFlight, type SessionDeps, type StartRequest, type StartedSession } from './start.ts'

export type { AuthStateDirectory, NetworkDirectory, ResolvedNetwork } from './directories.ts'
export type { SessionDeps, SessionRecorder, StartInput, StartRequest, StartedSession } from './start.ts'
export { startInFlight } from './start.ts'

/** Starts a session and waits until it is live (or refused or failed). */
export async function startSession(services: SessionDeps, req: StartRequest): Promise<SessionView> {
  return (await beginStart(services, req)).live
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
    // a replica shutting down answers now with the session as it stands; the start goes on
    const first = await orClosing(services.startDrain.closing, Promise.race([started.live, timedOut]))
    if (first !== 'timeout' && first !== 'closing') return { view: first, pending: false }
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
  while (view.status === 'pending' && Date.now() < deadline && !services.startDrain.closing.aborted) {
    const local = startInFlight(id)
    let timer: NodeJS.Timeout | undefined
    const pause = new Promise<void>((resolve) => { timer = setTimeout(resolve, local ? deadline - Date.now() : Math.min(250, deadline - Date.now())) })
    await orClosing(services.startDrain.closing, Promise.race([local?.then(() => {}, () => {}) ?? pause, pause]))
    clearTimeout(timer)
    view = await read()
  }
  return view
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
