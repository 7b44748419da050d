// Session videos, the api-server's side: the row of each video (session_videos) and the
// one object the finished file becomes in the RecordingStore, beside the session's rrweb
// blobs. The pod encodes (browser-pod/video.ts); the file is read from it once, when the
// session ends, so a pod that dies first takes its video with it (the row says `lost`).
// Design: docs/sessions.md#video
import type { Queryable } from '../store/db.ts'
import type { VideoFormat } from '../../contracts/pod-api.ts'

/** the default frame rate of a video that does not choose one */
export const VIDEO_DEFAULT_FPS = 5

export interface VideoRow {
  sessionId: string
  orgId: string
  storageKey: string
  format: VideoFormat
  fps: number
  width: number
  startedAt: string
  endedAt: string | null
  stored: boolean
  bytes: number
  durationMs: number
  frames: number
  truncated: boolean
  lost: boolean
}

function toRow(r: Record<string, unknown>): VideoRow {
  return {
    sessionId: r.session_id as string,
    orgId: r.org_id as string,
    storageKey: r.storage_key as string,
    format: r.format as VideoFormat,
    fps: Number(r.fps),
    width: Number(r.width),
    startedAt: new Date(r.started_at as string).toISOString(),
    endedAt: r.ended_at ? new Date(r.ended_at as string).toISOString() : null,
    stored: r.stored === true,
    bytes: Number(r.bytes),
    durationMs: Number(r.duration_ms),
    frames: Number(r.frames),
    truncated: r.truncated === true,
    lost: r.lost === true,
  }
}

export const VIDEO_TYPES: Record<VideoFormat, string> = { webm: 'video/webm', mp4: 'video/mp4' }

/** The video of a session of this org; null when it has none (or is another org's). */
export async function getVideo(db: Queryable, orgId: string, sessionId: string): Promise<VideoRow | null> {
  const r = await db.query('select * from session_videos where session_id = $1 and org_id = $2', [sessionId, orgId])
  return r.rows[0] ? toRow(r.rows[0]) : null
}

export async function listVideos(db: Queryable, orgId: string, limit = 200): Promise<VideoRow[]> {
  const r = await db.query('select * from session_videos where org_id = $1 order by started_at desc limit $2', [orgId, limit])
  return r.rows.map(toRow)
}

export async function insertVideo(db: Queryable, orgId: string, row: { sessionId: string; format: VideoFormat; fps: number; width: number; startedAt: string }): Promise<VideoRow> {
  const r = await db.query(
    `insert into session_videos (session_id, org_id, storage_key, format, fps, width, started_at) values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (session_id) do update set session_id = excluded.session_id returning *`,
    [row.sessionId, orgId, `${orgId}/${row.sessionId}/video.${row.format}`, row.format, row.fps, row.width, row.startedAt],
  )
  return toRow(r.rows[0])
}

/** The file reached the store: its size, length and frames. */
export async function videoStored(db: Queryable, orgId: string, sessionId: string, v: { bytes: number; durationMs: number; frames: number; truncated: boolean; endedAt: string }): Promise<void> {
  await db.query(
    `update session_videos set stored = true, bytes = $3, duration_ms = $4, frames = $5, truncated = $6, ended_at = coalesce(ended_at, $7)
     where session_id = $1 and org_id = $2`,
    [sessionId, orgId, v.bytes, v.durationMs, v.frames, v.truncated, v.endedAt],
  )
}

/** The pod was gone (or failed) before the file was read: the row stays, saying so. */
export async function videoLost(db: Queryable, orgId: string, sessionId: string, endedAt: string): Promise<void> {
  await db.query('update session_videos set lost = true, ended_at = coalesce(ended_at, $3) where session_id = $1 and org_id = $2 and not stored', [sessionId, orgId, endedAt])
}
