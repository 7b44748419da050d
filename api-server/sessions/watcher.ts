// Keeps session rows true to the resources: a session whose pod died (phase
// Failed) or whose resource vanished is marked failed and its lease freed. At
// start-up it sweeps rows left open by a previous process, and from then on the starts
// of a replica that died, so a restart never leaves an identity locked or a pod
// running for a session nobody runs.
import type { FastifyBaseLogger } from 'fastify'
import type { BrowserSession, SessionPhase } from '../../crds/types.ts'
import { errors } from '../../contracts/errors.ts'
import { Informer } from '../../watch/informer.ts'
import { isNotFound } from '../../ports/errors.ts'
import type { Db } from '../store/db.ts'
import type { OrgEvents } from '../events/port.ts'
import { release, reapDeadLeases } from '../personas/index.ts'
import type { SessionPlane } from './plane.ts'
import { findSessionAnyOrg, journal, openSessionIds, orphanedStarts, setStatus } from './store.ts'
import type { PodClients } from './pods.ts'
import { boundedLabel, sessionFailures } from '../metrics/product.ts'

export interface SessionWatcher {
  /** starts the shared watch and the start-up sweeps (the app's onReady); resolves once the cache is current */
  start(): Promise<void>
  /** resolves with the resource once it reaches one of `phases` (served from the shared watch) */
  waitForPhase(name: string, phases: readonly SessionPhase[], timeoutMs: number): Promise<BrowserSession>
  stop(): void
}

interface Waiter {
  phases: readonly SessionPhase[]
  resolve(obj: BrowserSession): void
  reject(err: Error): void
}

const REAP_INTERVAL_MS = 30_000

/** Built whole with the app; nothing runs until start(). */
/** What the watcher uses: the database, the session plane, the pod clients, the log, the events port and this replica. */
export interface WatcherDeps { db: Db; plane: SessionPlane; podClients: PodClients; log: FastifyBaseLogger; events: OrgEvents; replica: { id: string; deadAfterMs: number; deadAfterSql: string } }

export function sessionWatcher(deps: WatcherDeps): SessionWatcher {
  const { db, plane, log, replica } = deps

  const fail = (id: string, reason: string) => failSession(deps, id, reason)

  // session starts wait here rather than opening a watch each: one shared stream
  const waiters = new Map<string, Set<Waiter>>()
  const settle = (obj: BrowserSession) => {
    const set = waiters.get(obj.metadata.name)
    const phase = obj.status?.phase
    if (!set || !phase) return
    for (const w of set) if (w.phases.includes(phase)) {
      set.delete(w)
      w.resolve(obj)
    }
    if (!set.size) waiters.delete(obj.metadata.name)
  }

  const onObject = (obj: BrowserSession) => {
    settle(obj)
    if (obj.status?.phase === 'Failed') {
      const reason = obj.status.conditions?.find((c) => c.type === 'Ready')?.reason ?? 'PodFailed'
      fail(obj.metadata.name, reason).catch((err) => log.error({ err }, 'marking a session failed'))
    }
  }
  // its log says when a watch expired (410) and it relisted: after an etcd compaction or an
  // api-server restart, that is how a missed event is repaired
  const informer = new Informer(plane.sessions, { resyncMs: 60_000, log })
  informer.addHandler({
    onAdd: onObject,
    onUpdate: (_old, obj) => onObject(obj),
    onDelete: (obj) => {
      for (const w of waiters.get(obj.metadata.name) ?? []) w.reject(errors.sessionResourceGone())
      waiters.delete(obj.metadata.name)
      fail(obj.metadata.name, 'ResourceDeleted').catch((err) => log.error({ err }, 'marking a session failed'))
    },
  })

  const sweep = repairSweep(deps, fail)
  let timer: ReturnType<typeof setInterval> | undefined

  return {
    async start() {
      await informer.start()
      // rows open in the database with no resource behind them belong to a dead process
      for (const id of await openSessionIds(db)) {
        const obj = await plane.sessions.get(id)
        if (!obj || obj.status?.phase === 'Failed' || obj.status?.phase === 'Ended') await fail(id, 'Orphaned')
      }
      await sweep()
      // a dead starter's session is found within about twice the time a replica takes to count as dead
      timer = setInterval(() => { void sweep() }, Math.min(REAP_INTERVAL_MS, replica.deadAfterMs)) // each logs its own failure
      timer.unref()
    },
    waitForPhase(name, phases, timeoutMs) {
      return new Promise<BrowserSession>((resolve, reject) => {
        const w: Waiter = {
          phases,
          resolve: (obj) => { clearTimeout(t); resolve(obj) },
          reject: (err) => { clearTimeout(t); reject(err) },
        }
        const t = setTimeout(() => {
          waiters.get(name)?.delete(w)
          reject(errors.sessionStartTimeout())
        }, timeoutMs)
        if (!waiters.has(name)) waiters.set(name, new Set())
        waiters.get(name)!.add(w)
        // it may already be there (the cache is current up to the last event delivered)
        const cached = informer.get(name)
        if (cached) settle(cached)
      })
    },
    stop() {
      clearInterval(timer)
      informer.stop()
      for (const set of waiters.values()) for (const w of set) w.reject(errors.shuttingDown())
      waiters.clear()
    },
  }
}

/** A session the operator reports failed (or whose resource is gone): its lease freed first, then the row, the journal, the event. */
async function failSession({ db, podClients, log, events }: WatcherDeps, id: string, reason: string): Promise<void> {
  // the lease goes first: once a session reads as failed, its identity is already free
  await release(db, id)
  if (await setStatus(db, id, 'failed', reason)) {
    sessionFailures.inc({ reason: boundedLabel(reason) })
    const row = await findSessionAnyOrg(db, id)
    if (row) {
      await journal(db, row, { op: 'session_failed', outcome: 'error', errorCode: reason })
      await events.emit({ orgId: row.orgId, type: 'session.failed', data: { sessionId: id, agentId: row.agentId, reason } })
    }
    log.warn({ session: id, reason }, 'session failed')
  }
  podClients.drop(id)
}

/** The periodic repairs: dead leases freed, and the starts of a dead replica ended. Each logs its own failure. */
function repairSweep({ db, plane, log, replica }: WatcherDeps, fail: (id: string, reason: string) => Promise<void>): () => Promise<unknown> {
  // backstop: a lease whose holder is no longer open is freed (a live holder never is)
  const isAlive = async (sessionId: string) => {
    const r = await db.query(`select 1 from sessions where id = $1 and status in ('pending', 'live')`, [sessionId])
    return (r.rowCount ?? 0) > 0
  }
  // a freed lease is a repair (its holder closed without giving it back): say so, with whose
  const reap = () => reapDeadLeases(db, isAlive)
    .then((freed) => { for (const f of freed) log.warn({ session: f.sessionId, identity: f.identityId }, 'lease reaper freed the lease of a closed session') })
    .catch((err) => log.error({ err }, 'lease reaper'))
  // a start lives in its replica's memory: when that replica died mid-start, its browser is
  // told to end (the operator deletes the pod) and the session fails, so a caller polling a
  // 202 learns it and the identity is free again
  const endOrphanedStarts = async () => {
    for (const id of await orphanedStarts(db, replica.id, replica.deadAfterSql)) {
      await plane.sessions.patch(id, { spec: { desiredState: 'Ended' } }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err
      })
      await fail(id, 'Orphaned')
      log.warn({ session: id }, 'ended a start whose api-server replica died')
    }
  }
  return () => Promise.all([
    reap(),
    endOrphanedStarts().catch((err) => log.error({ err }, 'ending orphaned starts')),
  ])
}
