// Sessions end on their own, so a crashed agent never leaves a browser running: an idle
// timeout and a maximum duration. Activity reaches Postgres at most once per touchEveryMs
// per session (cheap for a busy agent, one clock for every replica's reaper); the reaper
// ends a session only if its row is still live, so two replicas reaping end it once.
// Design: docs/sessions.md#capacity-and-lifetimes
import type { FastifyBaseLogger } from 'fastify'
import { release } from '../personas/index.ts'
import type { Db } from '../store/db.ts'
import type { OrgEvents } from '../events/port.ts'
import type { SessionPlane } from './plane.ts'
import type { PodClients } from './pods.ts'
import { expiredSessions, expireSession, findSessionAnyOrg, journal, touchSession } from './store.ts'

export class SessionActivity {
  private readonly lastWrite = new Map<string, number>()

  /** `touchEveryMs` must stay well below the shortest idle timeout a session can have */
  private readonly db: Db
  private readonly log: FastifyBaseLogger
  private readonly touchEveryMs: number
  private readonly now: () => number
  constructor(db: Db, log: FastifyBaseLogger, touchEveryMs: number, now: () => number = Date.now) {
    this.db = db
    this.log = log
    this.touchEveryMs = touchEveryMs
    this.now = now
  }

  /** a driving call on this session; never delays the call */
  touch(sessionId: string): void {
    const t = this.now()
    if (t - (this.lastWrite.get(sessionId) ?? 0) < this.touchEveryMs) return
    this.lastWrite.set(sessionId, t)
    if (this.lastWrite.size > 10_000) this.lastWrite.delete(this.lastWrite.keys().next().value!)
    touchSession(this.db, sessionId).catch((err) => this.log.warn({ err, session: sessionId }, 'could not record session activity'))
  }

  forget(sessionId: string): void {
    this.lastWrite.delete(sessionId)
  }
}

export interface Reaper {
  /** one pass now (tests); resolves with the ids it ended */
  sweep(): Promise<string[]>
  stop(): void
}

export interface ReaperDeps {
  db: Db
  plane: SessionPlane
  podClients: PodClients
  activity: SessionActivity
  log: FastifyBaseLogger
  intervalMs: number
  events: OrgEvents
  /** what is read from a session's pod before it is told to end: the video, the recording's last read (never throws) */
  finishing?: (sessionId: string) => Promise<void>
}

export function startReaper(deps: ReaperDeps): Reaper {
  const { db, plane, podClients, activity, log, events } = deps
  let running: Promise<string[]> | undefined
  /** expired sessions whose resource has not yet been told to end: retried every pass */
  const untold = new Set<string>()
  const tellOperator = async (id: string) => {
    try {
      await plane.sessions.patch(id, { spec: { desiredState: 'Ended' } })
      untold.delete(id)
    } catch (err) {
      if ((err as { code?: number }).code === 404) return void untold.delete(id) // no resource: nothing runs
      untold.add(id)
      log.warn({ err, session: id }, 'could not tell the operator to end an expired session; retrying')
    }
  }
  const sweep = async (): Promise<string[]> => {
    for (const id of [...untold]) await tellOperator(id)
    const ended: string[] = []
    for (const { id, reason } of await expiredSessions(db)) {
      if (!(await expireSession(db, id, reason))) continue
      ended.push(id)
      const row = await findSessionAnyOrg(db, id)
      if (row) {
        await journal(db, row, { op: 'session_end', outcome: 'ok', detail: { reason } })
        await events.emit({ orgId: row.orgId, type: 'session.ended', data: { sessionId: id, agentId: row.agentId, reason } })
      }
      await release(db, id)
      // as DELETE does: the pod still runs, so its video and recording are kept (docs/sessions.md#video)
      await deps.finishing?.(id)
      await tellOperator(id)
      podClients.drop(id)
      activity.forget(id)
      log.info({ session: id, reason }, 'session ended on its own')
    }
    return ended
  }
  const once = () => {
    running ??= sweep().finally(() => (running = undefined))
    return running
  }
  const timer = setInterval(() => void once().catch((err) => log.error({ err }, 'session reaper')), deps.intervalMs)
  timer.unref()
  return { sweep: once, stop: () => clearInterval(timer) }
}
