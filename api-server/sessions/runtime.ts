// The session side of the server, built whole by the app: the BrowserSession resources,
// the pod clients of live sessions and the shared watch, started and stopped as one.
// A process without a session plane gets NO_SESSIONS instead of nothing: the same
// shape, and every use answers the one 503.
import type { FastifyBaseLogger } from 'fastify'
import type { BrowserSession } from '../../crds/types.ts'
import type { DaemonCounts, Logger, ResourceClient } from '../../ports/ports.ts'
import { errors } from '../../contracts/errors.ts'
import type { Db } from '../store/db.ts'
import type { OrgEvents } from '../events/port.ts'
import type { SessionPlane } from './plane.ts'
import { PodClients } from './pods.ts'
import { sessionWatcher, type SessionWatcher } from './watcher.ts'
import { startReaper, type Reaper, type SessionActivity } from './expiry.ts'

/** What the app hands the operator side when it starts it. */
export interface PlanePorts {
  /** daemon counts for the Network reconciler, fed by this app's tunnel broker */
  daemonCounts: DaemonCounts
  /** the app's logger for the operator and its pods: `npm start` shows why a pod died */
  log: Logger
}

/** Starts the operator side (embedded or Kubernetes) with the app's ports; the app stops it when it closes. */
export type PlaneFactory<P extends SessionPlane = SessionPlane> = (ports: PlanePorts) => Promise<P>

export interface SessionRuntime {
  /** BrowserSession resources: the operator acts on them */
  readonly resources: ResourceClient<BrowserSession>
  /** keep-alive clients of live sessions' browser pods */
  readonly pods: PodClients
  /** the shared watch session starts wait on */
  readonly watcher: SessionWatcher
  /** the plane's hand-over of a warm-resume auth-state (SessionPlane.handOverAuthState), where it has one */
  readonly handOverAuthState?: (session: BrowserSession) => Promise<boolean>
  /** this api-server replica: a start records it, so another replica can fail it if this one dies */
  readonly replicaId: string
}

/** The one answer of a process that runs no browser sessions (503 unavailable, no_session_plane). */
export const sessionsUnavailable = () => errors.noSessionPlane()

/**
 * The session runtime of a process without a session plane (tests, tools that build the
 * app for its HTTP surface only). Every use throws the 503 — reading any part of it, so a
 * session start is refused before it does any work.
 */
export const NO_SESSIONS: SessionRuntime = Object.freeze({
  get resources(): never {
    throw sessionsUnavailable()
  },
  get pods(): never {
    throw sessionsUnavailable()
  },
  get watcher(): never {
    throw sessionsUnavailable()
  },
  get handOverAuthState(): never {
    throw sessionsUnavailable()
  },
  get replicaId(): never {
    throw sessionsUnavailable()
  },
})

export interface LiveSessionsDeps {
  db: Db
  plane: SessionPlane
  activity: SessionActivity
  log: FastifyBaseLogger
  /** how often the reaper ends sessions past their idle timeout or maximum duration */
  reaperIntervalMs: number
  /** where a session's failure or end on its own is reported (session.failed, session.ended) */
  events: OrgEvents
  /** this replica, and how long a silent one takes to count as dead (replicas/registry.ts) */
  replica: { id: string; deadAfterMs: number; deadAfterSql: string }
  /** what the reaper reads from a pod before ending its session (the recordings' finish) */
  finishing?: (sessionId: string) => Promise<void>
}

/** The session runtime over a real plane: built at once, started in the app's onReady. */
export class LiveSessions implements SessionRuntime {
  readonly resources: ResourceClient<BrowserSession>
  readonly pods: PodClients
  readonly watcher: SessionWatcher
  readonly handOverAuthState?: (session: BrowserSession) => Promise<boolean>
  readonly replicaId: string
  #reaper: Reaper | undefined

  private readonly deps: LiveSessionsDeps
  constructor(deps: LiveSessionsDeps) {
    this.deps = deps
    this.resources = deps.plane.sessions
    const { plane } = deps
    if (plane.handOverAuthState) this.handOverAuthState = (session) => plane.handOverAuthState!(session)
    this.pods = new PodClients(deps.plane.pods)
    this.replicaId = deps.replica.id
    this.watcher = sessionWatcher({ db: deps.db, plane: deps.plane, podClients: this.pods, log: deps.log, events: deps.events, replica: deps.replica })
  }

  /** the shared watch (with its start-up sweeps), then the reaper */
  async start(): Promise<void> {
    await this.watcher.start()
    const { db, plane, activity, log, reaperIntervalMs, events, finishing } = this.deps
    this.#reaper ??= startReaper({ db, plane, podClients: this.pods, activity, log, intervalMs: reaperIntervalMs, events, finishing })
  }

  /** stops what runs here, then the plane itself (the app started it, the app stops it) */
  async stop(): Promise<void> {
    this.#reaper?.stop()
    this.watcher.stop()
    this.pods.closeAll()
    await this.deps.plane.stop()
  }
}
