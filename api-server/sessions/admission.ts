// Admission control for session starts: the org's quota and the deployment's cap are
// checked in Postgres, against open-session counts a trigger keeps (migration 027), under
// one transaction-scoped advisory lock (a database function, so
// the lock never spans a client round trip), so a burst on any number of replicas admits
// exactly up to the quota. Then a per-process launch slot (a cold launch is CPU-bound): a
// bounded FIFO, refused at once with 429 when it would not fit. Design: docs/sessions.md#capacity-and-lifetimes
import { errors, type ApiError } from '../../contracts/errors.ts'
import type { Db } from '../store/db.ts'
import type { EgressMode } from '../../crds/types.ts'
import { newSessionValues, type RequestedSession } from './store.ts'

/** the advisory lock key of admission (any fixed 64-bit number; 'njadmit' in ASCII) */
const ADMISSION_LOCK = '31079213967436148'

export interface AdmissionLimits {
  startConcurrency: number
  startQueue: number
  startQueueWaitMs: number
  maxLiveSessions: number
  orgMaxLiveSessions: number
}

export interface AdmissionStats {
  inFlight: number
  queued: number
  refused: Record<RefusalReason, number>
}

/** a refusal's reason, as the 429 body and the metric's label spell it */
export type RefusalReason = 'org_session_quota' | 'session_capacity' | 'start_queue_full' | 'start_queue_timeout'

interface Waiter {
  sessionId: string
  grant: () => void
  timer: NodeJS.Timeout
}

/** a reserved slot or place in line: granted resolves once the start may launch */
export interface Ticket {
  granted: Promise<Admitted>
  /** gives the slot or the place in line back (a start refused or failed before launching); idempotent */
  cancel(): void
  /** the caller was answered 202 pending: the place in line is kept until a slot frees, with no queue deadline */
  detach(): void
}

/** one admitted start; release() exactly once when the start settled (live or failed) */
export interface Admitted {
  release(): void
}

/** what admission decided for a start that left them out: written on the row, or the session's */
export interface StartDefaults {
  egress: EgressMode
  record: boolean
  /** whether the session has a video (docs/sessions.md, "Video") */
  video: boolean
}


export class Admission {
  private inFlight = 0
  private readonly queue: Waiter[] = []
  private readonly refused: Record<RefusalReason, number> = { org_session_quota: 0, session_capacity: 0, start_queue_full: 0, start_queue_timeout: 0 }
  /** recent start durations, to tell a refused caller when a slot is likely free */
  private avgStartMs = 1000

  private readonly limits: AdmissionLimits
  constructor(limits: AdmissionLimits) {
    this.limits = limits
  }

  get stats(): AdmissionStats {
    return { inFlight: this.inFlight, queued: this.queue.length, refused: { ...this.refused } }
  }

  /** 1-based position of a waiting start, undefined when it is not queued */
  queuePosition(sessionId: string): number | undefined {
    const i = this.queue.findIndex((w) => w.sessionId === sessionId)
    return i < 0 ? undefined : i + 1
  }

  /**
   * With a ticket reserved first (reserve(), synchronously — so a burst is sorted by the
   * event loop and every start beyond the queue is refused without touching the database):
   * the quotas are checked and the session's row written under the lock (pending, so a
   * queued start shows its place in line). The slot is the caller's to await (granted);
   * a refusal there (the queue deadline) is the caller's to clean up. A refusal here gives
   * the reservation back and leaves no row. The same call fills in what the start left out (the
   * agent's egress, the org's recording default): one round trip, not two.
   */
  async admit(db: Db, row: RequestedSession, asked: { record: boolean | null; video: boolean | null }, ticket: Ticket): Promise<{ granted: Promise<Admitted>; defaults: StartDefaults }> {
    let defaults: StartDefaults
    try {
      const r = await db.query(
        `select nightjar_admit_start_v2($1, $2, $3, $4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18, $19, $20) as answer`,
        [ADMISSION_LOCK, this.limits.orgMaxLiveSessions, this.limits.maxLiveSessions, ...newSessionValues(row), asked.record, asked.video],
      )
      const answer = r.rows[0]?.answer as { verdict?: string; egress?: EgressMode; record?: boolean; video?: boolean } | undefined
      this.verdict(answer?.verdict)
      defaults = { egress: answer!.egress!, record: answer!.record === true, video: answer!.video === true }
    } catch (e) {
      ticket.cancel()
      throw e
    }
    return { granted: ticket.granted, defaults }
  }

  private verdict(v: unknown): void {
    if (v === 'admitted') return
    if (v === 'org_session_quota') throw this.refuse(errors.orgSessionQuota(30, this.limits.orgMaxLiveSessions))
    if (v === 'session_capacity') throw this.refuse(errors.sessionCapacity(30))
    throw new Error(`admission: unexpected verdict ${String(v)}`)
  }

  private queueFull(): ApiError {
    // the expected wait for a place in line, so the caller knows when to come back
    const expectedMs = Math.ceil((this.queue.length + 1) / this.limits.startConcurrency) * this.avgStartMs
    return this.refuse(errors.startQueueFull(expectedMs / 1000))
  }

  /** a slot now, or a place in line (granted when a slot frees), or start_queue_full; synchronous */
  reserve(sessionId: string): Ticket {
    const started = Date.now()
    const admitted: Admitted = {
      release: once(() => {
        this.avgStartMs = 0.8 * this.avgStartMs + 0.2 * (Date.now() - started)
        this.inFlight--
        this.next()
      }),
    }
    if (this.inFlight < this.limits.startConcurrency && this.queue.length === 0) {
      this.inFlight++
      return { granted: Promise.resolve(admitted), cancel: () => admitted.release(), detach: () => {} }
    }
    // (cancel may be called twice — by admit() and by its caller — and is idempotent)
    if (this.queue.length >= this.limits.startQueue) throw this.queueFull()
    let waiter!: Waiter
    let granted = false
    const promise = new Promise<Admitted>((resolve, reject) => {
      waiter = {
        sessionId,
        grant: () => {
          clearTimeout(waiter.timer)
          this.inFlight++
          granted = true
          resolve(admitted)
        },
        timer: setTimeout(() => {
          const i = this.queue.indexOf(waiter)
          if (i >= 0) this.queue.splice(i, 1)
          reject(this.refuse(errors.startQueueTimeout(this.avgStartMs / 1000)))
        }, this.limits.startQueueWaitMs),
      }
      this.queue.push(waiter)
    })
    promise.catch(() => {}) // a cancelled or timed-out place in line is the caller's to report
    return {
      granted: promise,
      cancel: () => {
        if (granted) return admitted.release() // once(): a second call does nothing
        clearTimeout(waiter.timer)
        const i = this.queue.indexOf(waiter)
        if (i >= 0) this.queue.splice(i, 1)
      },
      detach: () => clearTimeout(waiter.timer),
    }
  }

  private next(): void {
    while (this.inFlight < this.limits.startConcurrency && this.queue.length) this.queue.shift()!.grant()
  }

  /** counts a 429 (one of the four refusals) by its reason */
  private refuse(e: ApiError): ApiError {
    this.refused[e.reason as RefusalReason]++
    return e
  }
}

function once(fn: () => void): () => void {
  let done = false
  return () => {
    if (done) return
    done = true
    fn()
  }
}
