// Recordings, the api-server's side: start the pod's recorder, read what it recorded every
// few seconds off every request's path (and once more when the session ends), store each
// read as one blob, serve the timeline and delete past retention. Reads are idempotent: a
// blob's key is its first chunk's sequence number and the pod frees chunks only when a
// later read acknowledges them. Design: docs/sessions.md#recordings
import type { Config } from '../config.ts'
import type { FastifyBaseLogger } from 'fastify'
import type { Db, Queryable } from '../store/db.ts'
import type { PodClient } from '../sessions/pod-client.ts'
import { errors } from '../../contracts/errors.ts'
import { DirectoryRecordingStore, S3RecordingStore, type RecordingStore } from './store.ts'
import { join } from 'node:path'

const DAY_MS = 86_400_000
const FINAL_READ_MS = 5_000

export interface RecordingSettings {
  retentionDays: number
  pollMs: number
  store: RecordingStore
}

/** the store and timings from the configuration (docs/sessions.md, "Recordings") */
export function recordingSettings(config: Pick<Config, 'dataDir' | 'recordings'>): RecordingSettings {
  const r = config.recordings
  const store: RecordingStore = r.store === 's3' && r.s3
    ? new S3RecordingStore({ bucket: r.s3.bucket, prefix: r.s3.prefix, region: r.s3.region, endpoint: r.s3.endpoint })
    : new DirectoryRecordingStore(join(config.dataDir, 'recordings'))
  return { retentionDays: r.retentionDays, pollMs: r.pollMs, store }
}

export interface RecordingRow {
  sessionId: string
  orgId: string
  storageKey: string
  startedAt: string
  endedAt: string | null
  bytes: number
  events: number
  chunks: number
  dropped: number
  lastSeq: number
}

function toRow(r: Record<string, unknown>): RecordingRow {
  return {
    sessionId: r.session_id as string,
    orgId: r.org_id as string,
    storageKey: r.storage_key as string,
    startedAt: new Date(r.started_at as string).toISOString(),
    endedAt: r.ended_at ? new Date(r.ended_at as string).toISOString() : null,
    bytes: Number(r.bytes),
    events: Number(r.events),
    chunks: Number(r.chunks),
    dropped: Number(r.dropped),
    lastSeq: Number(r.last_seq),
  }
}

/** The recording of a session of this org; null when the session was not recorded (or is another org's). */
export async function getRecording(db: Queryable, orgId: string, sessionId: string): Promise<RecordingRow | null> {
  const r = await db.query('select * from recordings where session_id = $1 and org_id = $2', [sessionId, orgId])
  return r.rows[0] ? toRow(r.rows[0]) : null
}

export async function listRecordings(db: Queryable, orgId: string, limit = 200): Promise<RecordingRow[]> {
  const r = await db.query('select * from recordings where org_id = $1 order by started_at desc limit $2', [orgId, limit])
  return r.rows.map(toRow)
}

export async function insertRecording(db: Queryable, row: { sessionId: string; orgId: string; startedAt: string }): Promise<RecordingRow> {
  const r = await db.query(
    `insert into recordings (session_id, org_id, storage_key, started_at) values ($1, $2, $3, $4)
     on conflict (session_id) do update set session_id = excluded.session_id returning *`,
    [row.sessionId, row.orgId, `${row.orgId}/${row.sessionId}`, row.startedAt],
  )
  return toRow(r.rows[0])
}

/** The blob key of the read whose first chunk is `seq`. */
export const chunkKey = (storageKey: string, seq: number) => `${storageKey}/${String(seq).padStart(10, '0')}.json`

/** Deletes recordings that started more than `retentionDays` ago: blobs first, then the row. Returns the session ids. */
export async function sweepRecordings(deps: { db: Db; store: RecordingStore; now: () => number }, retentionDays: number): Promise<string[]> {
  const cutoff = new Date(deps.now() - retentionDays * DAY_MS).toISOString()
  const r = await deps.db.query('select session_id, storage_key from recordings where started_at < $1 order by started_at limit 500', [cutoff])
  const gone: string[] = []
  for (const row of r.rows) {
    await deps.store.deletePrefix(row.storage_key as string)
    await deps.db.query('delete from recordings where session_id = $1', [row.session_id])
    gone.push(row.session_id as string)
  }
  return gone
}

/** Every event of a recording, in order. */
export async function readTimeline(store: RecordingStore, row: RecordingRow): Promise<unknown[]> {
  const events: unknown[] = []
  for (const key of await store.list(row.storageKey)) {
    const blob = await store.get(key)
    if (!blob) continue
    const part = JSON.parse(blob.toString('utf8')) as unknown[]
    for (const e of part) events.push(e)
  }
  return events
}

export interface RecordingsDeps {
  db: Db
  log: FastifyBaseLogger
  now: () => number
  /** the pod client of a live session's pod */
  pod: (sessionId: string) => Promise<PodClient>
  settings: RecordingSettings
}

interface Active {
  orgId: string
  timer: ReturnType<typeof setInterval>
  running?: Promise<void>
}

export class Recordings {
  readonly #active = new Map<string, Active>()
  #sweeper?: ReturnType<typeof setInterval>
  private readonly deps: RecordingsDeps
  constructor(deps: RecordingsDeps) {
    this.deps = deps
  }

  get store(): RecordingStore {
    return this.deps.settings.store
  }

  /** Starts recording a session that just went live: the row, then the pod's recorder, then polling. */
  async begin(session: { id: string; orgId: string }): Promise<void> {
    const { db, now, settings } = this.deps
    await insertRecording(db, { sessionId: session.id, orgId: session.orgId, startedAt: new Date(now()).toISOString() })
    const pod = await this.deps.pod(session.id)
    await pod.recordingStart()
    if (this.#active.has(session.id)) return
    // a failed read (the store unreachable, the pod busy) is retried by the next poll; say so rather than lose it
    const timer = setInterval(() => void this.drain(session.id).catch((err) => this.deps.log.warn({ err, session: session.id }, 'reading a recording failed; the next poll reads it again')), settings.pollMs)
    timer.unref()
    this.#active.set(session.id, { orgId: session.orgId, timer })
  }

  /** Whether this process polls the session's recorder. */
  recording(sessionId: string): boolean {
    return this.#active.has(sessionId)
  }

  /** Reads what the pod recorded since the last read (one read at a time per session). */
  drain(sessionId: string, opts: { flush?: boolean } = {}): Promise<void> {
    const a = this.#active.get(sessionId)
    if (!a) return Promise.resolve()
    // behind the read in flight, whatever became of it (its own caller saw its failure)
    const run = (a.running ?? Promise.resolve()).catch(() => undefined).then(() => this.#read(sessionId, a.orgId, opts.flush ?? false))
    a.running = run
    return run
  }

  async #read(sessionId: string, orgId: string, flush: boolean): Promise<void> {
    const { db } = this.deps
    let row = await getRecording(db, orgId, sessionId)
    if (!row) return
    let pod: PodClient
    try {
      pod = await this.deps.pod(sessionId)
    } catch (e) {
      // the session is no longer live (ended on its own, or elsewhere): nothing more to read
      await this.#close(sessionId)
      throw e
    }
    for (let first = true; ; first = false) {
      const r = await pod.recordingRead({ after: row.lastSeq, flush: flush && first })
      if (r.chunks.length) {
        const events = r.chunks.flatMap((c) => c.events)
        const body = Buffer.from(JSON.stringify(events))
        await this.store.put(chunkKey(row.storageKey, r.chunks[0].seq), body)
        const last = r.chunks[r.chunks.length - 1].seq
        const u = await db.query(
          `update recordings set last_seq = greatest(last_seq, $3), bytes = bytes + $4, events = events + $5, chunks = chunks + 1, dropped = $6
           where session_id = $1 and org_id = $2 returning *`,
          [sessionId, orgId, last, body.length, events.length, r.dropped],
        )
        row = toRow(u.rows[0])
      }
      if (!r.more) break
    }
  }

  /** The session ends: one last read, flushed from its pages, then the row is closed. */
  async finish(sessionId: string): Promise<void> {
    if (!this.#active.has(sessionId)) return
    let timeout: ReturnType<typeof setTimeout> | undefined
    try {
      await Promise.race([
        this.drain(sessionId, { flush: true }),
        new Promise((_, reject) => { timeout = setTimeout(() => reject(new Error('final read timed out')), FINAL_READ_MS) }),
      ])
    } catch (err) {
      // ending the session matters more than its last seconds of recording: log, go on
      this.deps.log.warn({ err, session: sessionId }, 'the last read of a recording failed; it ends with what was read before')
    } finally {
      clearTimeout(timeout)
      await this.#close(sessionId)
    }
  }

  async #close(sessionId: string): Promise<void> {
    const a = this.#active.get(sessionId)
    if (a) clearInterval(a.timer)
    this.#active.delete(sessionId)
    await this.deps.db.query('update recordings set ended_at = coalesce(ended_at, $2) where session_id = $1', [sessionId, new Date(this.deps.now()).toISOString()])
  }

  /** The timeline of a recording of this org (a live session's is read up to now first); the one 404 otherwise. */
  async timeline({ orgId, sessionId }: { orgId: string; sessionId: string }): Promise<{ row: RecordingRow; events: unknown[] }> {
    if (this.#active.has(sessionId)) await this.drain(sessionId, { flush: true }).catch(() => undefined) // what was stored is served regardless
    const row = await getRecording(this.deps.db, orgId, sessionId)
    if (!row) throw errors.notFound('session')
    return { row, events: await readTimeline(this.store, row) }
  }

  /** Deletes recordings past the retention (see sweepRecordings). */
  sweep(): Promise<string[]> {
    return sweepRecordings({ db: this.deps.db, store: this.store, now: this.deps.now }, this.deps.settings.retentionDays)
  }

  /** The retention sweep: once now, then hourly. */
  startSweeper(): void {
    if (this.#sweeper) return
    const run = () => void this.sweep().catch((err) => this.deps.log.warn({ err }, 'recording retention sweep failed; retried in an hour'))
    run()
    this.#sweeper = setInterval(run, 3_600_000)
    this.#sweeper.unref()
  }

  stop(): void {
    if (this.#sweeper) clearInterval(this.#sweeper)
    this.#sweeper = undefined
    for (const a of this.#active.values()) clearInterval(a.timer)
    this.#active.clear()
    if (this.store instanceof S3RecordingStore) this.store.destroy()
  }
}
