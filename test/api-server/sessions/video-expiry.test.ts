// A session that ends on its own keeps its video: real Chromium in a real pod, Debian's
// ffmpeg, the real API server, reaper and Postgres. A video-recorded session with a short
// idle timeout is driven once and left alone; the reaper ends it (idle_timeout), having
// read the video from the pod first, and the video downloads and decodes. The maximum
// duration ends a session through the same step of the reaper.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { waitFor } from '../../helpers/wait.ts'

const run = promisify(execFile)

t.test('[ISSUE-51] a session ended by its idle timeout keeps its video', async (t) => {
  const web = await startPublicWeb(t)
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify({ 'example.com': web.ip }) } })
  const acme = await s.bootstrap()
  const started = await s.request('POST', '/v1/sessions', { token: acme.apiKey, body: { video: { format: 'mp4', fps: 5, width: 640 }, idleTimeoutSecs: 10 } })
  t.equal(started.status, 201, started.text)
  const id = started.body.id as string
  t.teardown(() => s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey }))
  t.equal((await s.request('POST', `/v1/sessions/${id}/navigate`, { token: acme.apiKey, body: { url: 'http://example.com/index.html' } })).status, 200)

  // nothing more drives it: the reaper ends it, and the video's row says what became of it
  const row = await waitFor(async () => {
    const r = (await s.services.db.query('select stored, lost, frames, bytes, duration_ms from session_videos where session_id = $1 and (stored or lost)', [id])).rows[0]
    return r as { stored: boolean; lost: boolean; frames: number; bytes: string; duration_ms: number } | undefined
  }, { timeoutMs: 120_000, intervalMs: 250, what: 'the expired session’s video to be stored (or lost)' })
  const session = (await s.request('GET', `/v1/sessions/${id}`, { token: acme.apiKey })).body
  t.equal(session.status, 'ended')
  t.equal(session.endReason, 'idle_timeout')
  t.same({ stored: row.stored, lost: row.lost }, { stored: true, lost: false }, 'the video was read from the pod before it ended')

  const r = await fetch(`${s.url}/v1/sessions/${id}/video`, { headers: { authorization: `Bearer ${acme.apiKey}` } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('content-type'), 'video/mp4')
  const bytes = Buffer.from(await r.arrayBuffer())
  t.equal(bytes.length, Number(row.bytes))
  const dir = mkdtempSync(join(tmpdir(), 'video-expiry-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'session.mp4')
  writeFileSync(file, bytes)
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_name,width,nb_read_frames', '-of', 'json', file])
  const p = JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; nb_read_frames: string }> }
  t.comment(`ffprobe: ${p.streams[0].codec_name} ${p.streams[0].width} px, ${p.streams[0].nb_read_frames} frames; row: ${row.frames} frames, ${row.duration_ms} ms`)
  t.equal(p.streams[0].codec_name, 'h264')
  t.equal(Number(p.streams[0].nb_read_frames), Number(row.frames), 'every frame the pod wrote decodes')
  t.ok(Number(row.frames) > 0)
})
