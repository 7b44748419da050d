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
import { getVideo, insertVideo, VIDEO_DEFAULT_FPS, videoLost, videoStored } from './video.ts'
import type { VideoRequest } from '../sessions/start.ts'
import { getGovernance, type Governance } from '../personas/governance.ts'
import { readLiveTrail, readStoredTrail, storeTrail, type Trail } from './trail.ts'

const DAY_MS = 86_400_000
const FINAL_READ_MS = 5_000
/** ending a session waits this long at most for its pod to close the video file */
const VIDEO_FINISH_MS = 30_000

/** `work`, or a rejection naming `what` once `ms` have passed: a session's end waits on its pod this long at most */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timeout: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => { timeout = setTimeout(() => reject(new Error(`${what} timed out`)), ms) })
  return Promise.race([work, late]).finally(() => clearTimeout(timeout))
}

export interface RecordingSettings {
  retentionDays: number
  pollMs: number
  store: RecordingStore
  /** what one session's video may last and weigh at most */
  video: { maxDurationMs: number; maxBytes: number }
}

/** the store and timings from the configuration (docs/sessions.md, "Recordings") */
export function recordingSettings(config: Pick<Config, 'dataDir' | 'recordings' | 'video'>): RecordingSettings {
  const r = config.recordings
  const store: RecordingStore = r.store === 's3' && r.s3
    ? new S3RecordingStore({ bucket: r.s3.bucket, prefix: r.s3.prefix, region: r.s3.region, endpoint: r.s3.endpoint })
    : new DirectoryRecordingStore(join(config.dataDir, 'recordings'))
  return { retentionDays: r.retentionDays, pollMs: r.pollMs, store, video: config.video }
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
const CHUNK_NAME = /\/\d{10}\.json$/

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
  // videos: the object sits under the session's prefix, beside any rrweb blobs of the same age
  const v = await deps.db.query('select session_id, org_id from session_videos where started_at < $1 order by started_at limit 500', [cutoff])
  for (const row of v.rows) {
    await deps.store.deletePrefix(`${row.org_id as string}/${row.session_id as string}`)
    await deps.db.query('delete from session_videos where session_id = $1', [row.session_id])
    if (!gone.includes(row.session_id as string)) gone.push(row.session_id as string)
  }
  return gone
}

/** Every event of a recording, in order. */
export async function readTimeline(store: RecordingStore, row: RecordingRow): Promise<unknown[]> {
  const events: unknown[] = []
  for (const key of await store.list(row.storageKey)) {
    // the session's video and trail live under the same prefix (video.ts, trail.ts): the timeline is the numbered blobs
    if (!CHUNK_NAME.test(key)) continue
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

  /** Starts a live session's video at its pod: the row, then the encoder (the start fails if either does). */
  async beginVideo(session: { id: string; orgId: string; video: VideoRequest; viewportWidth: number }): Promise<void> {
    const { db, now, settings } = this.deps
    const format = session.video.format ?? 'webm'
    const fps = session.video.fps ?? VIDEO_DEFAULT_FPS
    const width = session.video.width ?? Math.min(1920, Math.max(320, session.viewportWidth))
    const bounds = videoBounds(settings.video, await getGovernance(db, session.orgId))
    await insertVideo(db, session.orgId, { sessionId: session.id, format, fps, width, startedAt: new Date(now()).toISOString() })
    const pod = await this.deps.pod(session.id)
    await pod.videoStart({ format, fps, width, ...bounds })
  }

  /** The session ends: its pod finishes the file, which is read whole into the store. Returns its first frame's time, when it has one. */
  async #finishVideo(sessionId: string): Promise<number | null> {
    const { db, now } = this.deps
    // by the row, not this process's memory: any replica may end a session another started
    const open = await db.query('select org_id from session_videos where session_id = $1 and not stored and not lost', [sessionId])
    const orgId = open.rows[0]?.org_id as string | undefined
    if (!orgId) return null
    const endedAt = () => new Date(now()).toISOString()
    try {
      const row = await getVideo(db, orgId, sessionId)
      if (!row) return null
      const pod = await this.deps.pod(sessionId)
      const done = await within(pod.videoFinish(), VIDEO_FINISH_MS, 'finishing the video')
      const parts: Buffer[] = []
      for (let offset = 0; ;) {
        const r = await pod.videoRead({ offset })
        const b = Buffer.from(r.data, 'base64')
        parts.push(b)
        offset += b.length
        if (r.eof || !b.length) break
      }
      const file = Buffer.concat(parts)
      await this.store.put(row.storageKey, file)
      await videoStored(db, orgId, sessionId, { bytes: file.length, durationMs: done.durationMs, frames: done.frames, truncated: done.truncated, endedAt: endedAt() })
      return done.startedAt
    } catch (err) {
      // the pod is gone or the store refused: the video is lost, and its row says so
      this.deps.log.warn({ err, session: sessionId }, 'a session video could not be read from its pod; it is lost')
      await videoLost(db, orgId, sessionId, endedAt()).catch(() => undefined) // the warning above already says it is lost
      return null
    }
  }

  /**
   * The session ends: a recorded or filmed session's trail (network log, console, dialogs)
   * is read from its pod before the video is finished, and kept beside them (trail.ts).
   * Bounded like the video's finish; a pod already gone keeps no trail, and the end goes on.
   */
  async #finishWithTrail(sessionId: string): Promise<void> {
    const { db } = this.deps
    const kept = await db.query(
      `select org_id from recordings where session_id = $1 union select org_id from session_videos where session_id = $1 limit 1`, [sessionId])
    const orgId = kept.rows[0]?.org_id as string | undefined
    if (!orgId) {
      await this.#finishVideo(sessionId)
      return
    }
    const read = within(this.deps.pod(sessionId).then((pod) => readLiveTrail(pod)), FINAL_READ_MS, 'reading the trail')
    const trail = await read.catch((err: unknown) => {
      this.deps.log.warn({ err, session: sessionId }, 'the session’s network log and console could not be read from its pod; its inspector shows its calls only')
      return null
    })
    const videoStartedAt = await this.#finishVideo(sessionId)
    if (!trail) return
    await storeTrail(this.store, orgId, sessionId, { ...trail, videoStartedAt })
      .catch((err: unknown) => this.deps.log.warn({ err, session: sessionId }, 'the session’s trail could not be stored; its inspector shows its calls only'))
  }

  /**
   * A session's trail for its inspector: a live one's from its pod (null if the pod does not
   * answer), an ended one's as kept when it ended (null if none was).
   */
  async trail({ orgId, sessionId, live }: { orgId: string; sessionId: string; live: boolean }): Promise<Trail | null> {
    if (!live) return readStoredTrail(this.store, orgId, sessionId)
    try {
      return { ...(await readLiveTrail(await this.deps.pod(sessionId))), videoStartedAt: null }
    } catch (err) {
      this.deps.log.debug({ err, session: sessionId }, 'a live session’s trail could not be read for its inspector')
      return null
    }
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

  /** The session ends: its video is read whole; one last read of the timeline, flushed from its pages, then the row is closed. */
  async finish(sessionId: string): Promise<void> {
    await this.#finishWithTrail(sessionId)
    if (!this.#active.has(sessionId)) return
    try {
      await within(this.drain(sessionId, { flush: true }), FINAL_READ_MS, 'final read')
    } catch (err) {
      // ending the session matters more than its last seconds of recording: log, go on
      this.deps.log.warn({ err, session: sessionId }, 'the last read of a recording failed; it ends with what was read before')
    } finally {
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

/** a video's bounds: the platform's, lowered by the org's own where it set them (docs/sessions.md#video) */
export function videoBounds(platform: { maxDurationMs: number; maxBytes: number }, org: Pick<Governance, 'videoMaxSeconds' | 'videoMaxMiB'>): { maxDurationMs: number; maxBytes: number } {
  return {
    maxDurationMs: org.videoMaxSeconds === null ? platform.maxDurationMs : Math.min(platform.maxDurationMs, org.videoMaxSeconds * 1000),
    maxBytes: org.videoMaxMiB === null ? platform.maxBytes : Math.min(platform.maxBytes, org.videoMaxMiB * 1024 * 1024),
  }
}
