// The org's video default: off for a new org; an admin turns it on with PUT /v1/governance
// (audited by name); then a start that leaves `video` out is filmed with the default
// settings and its video downloads and decodes, while a start that says video: false is
// not. Real Chromium, Debian's ffmpeg, the real API server and Postgres.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestServer } from '../../helpers/server.ts'
import { videoBounds } from '../../../api-server/recordings/service.ts'

const run = promisify(execFile)
const PAGE = 'data:text/html,' + encodeURIComponent('<title>Default</title><h1>Filmed by default</h1>')

t.test('[ISSUE-51] the org default for videos', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  const download = (id: string) => fetch(`${s.url}/v1/sessions/${id}/video`, { headers: { authorization: `Bearer ${acme.apiKey}` } })

  t.equal((await rest('GET', '/v1/governance')).body.videoSessions, false, 'off for a new org')
  const put = await rest('PUT', '/v1/governance', { videoSessions: true })
  t.equal(put.status, 200, put.text)
  t.equal(put.body.videoSessions, true)
  t.equal(put.body.recordSessions, false, 'the other flags keep their value')
  const audit = await s.testDb.db.query(`select reason from audit_events where action = 'governance.update' order by id desc limit 1`)
  t.equal(audit.rows[0]?.reason, 'videoSessions', 'the change is audited by name')
  t.equal((await rest('PUT', '/v1/governance', { videoSessions: 'yes' })).status, 400, 'a boolean, nothing else')

  const filmed = await rest('POST', '/v1/sessions', {})
  t.equal(filmed.status, 201, filmed.text)
  const off = await rest('POST', '/v1/sessions', { video: false })
  t.equal(off.status, 201, off.text)
  for (const id of [filmed.body.id as string, off.body.id as string]) {
    t.equal((await rest('POST', `/v1/sessions/${id}/navigate`, { url: PAGE })).status, 200)
    t.equal((await rest('DELETE', `/v1/sessions/${id}`)).status, 200)
  }

  const r = await download(filmed.body.id as string)
  t.equal(r.status, 200, 'a start that left video out was filmed')
  t.equal(r.headers.get('content-type'), 'video/webm', 'with the default format')
  const dir = mkdtempSync(join(tmpdir(), 'video-default-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'session.webm')
  writeFileSync(file, Buffer.from(await r.arrayBuffer()))
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_name,nb_read_frames', '-of', 'json', file])
  const p = JSON.parse(stdout) as { streams: Array<{ codec_name: string; nb_read_frames: string }> }
  t.equal(p.streams[0].codec_name, 'vp9')
  t.ok(Number(p.streams[0].nb_read_frames) > 0, 'its frames decode')
  const row = (await s.services.db.query('select fps, format from session_videos where session_id = $1', [filmed.body.id])).rows[0]
  t.same(row, { fps: 5, format: 'webm' }, 'the default settings')

  const none = await download(off.body.id as string)
  t.equal(none.status, 404, 'a start that said video: false was not')
  await none.arrayBuffer()
})

t.test("[ISSUE-51] an org's own video bounds: set, read, cleared, refused when nonsense, and a video cut at the org's length", async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const rest = (method: string, path: string, body?: unknown) => s.request(method, path, { token: acme.apiKey, body })
  t.same(pick((await rest('GET', '/v1/governance')).body), { videoMaxSeconds: null, videoMaxMiB: null }, "none for a new org: the platform's alone")
  for (const bad of [{ videoMaxSeconds: 0 }, { videoMaxSeconds: 1.5 }, { videoMaxMiB: -1 }, { videoMaxMiB: '10' }]) {
    t.equal((await rest('PUT', '/v1/governance', bad)).status, 400, `refused: ${JSON.stringify(bad)}`)
  }
  const put = await rest('PUT', '/v1/governance', { videoMaxSeconds: 2, videoMaxMiB: 50 })
  t.equal(put.status, 200, put.text)
  t.same(pick(put.body), { videoMaxSeconds: 2, videoMaxMiB: 50 })
  const audit = await s.testDb.db.query(`select reason from audit_events where action = 'governance.update' order by id desc limit 1`)
  t.equal(audit.rows[0]?.reason, 'videoMaxMiB,videoMaxSeconds', 'audited by name')

  // filmed past the org's two seconds: driven for three and a half
  const started = await rest('POST', '/v1/sessions', { video: { format: 'webm', fps: 5, width: 320 } })
  t.equal(started.status, 201, started.text)
  const id = started.body.id as string
  t.teardown(() => rest('DELETE', `/v1/sessions/${id}`))
  const from = Date.now()
  let n = 0
  while (Date.now() - from < 3500) {
    const page = 'data:text/html,' + encodeURIComponent(`<title>Page ${++n}</title><h1 style="font-size:80px">Page ${n}</h1>`)
    t.equal((await rest('POST', `/v1/sessions/${id}/navigate`, { url: page })).status, 200)
  }
  t.equal((await rest('DELETE', `/v1/sessions/${id}`)).status, 200)
  const row = (await s.services.db.query('select truncated, duration_ms, frames from session_videos where session_id = $1', [id])).rows[0]
  t.equal(row.truncated, true, `the video says it was cut (${n} pages over ${Date.now() - from} ms)`)
  t.ok(row.duration_ms <= 2200, `no longer than the org's bound and a frame (${row.duration_ms} ms, ${row.frames} frames)`)
  const r = await fetch(`${s.url}/v1/sessions/${id}/video`, { headers: { authorization: `Bearer ${acme.apiKey}` } })
  t.equal(r.status, 200, 'a cut video still downloads')
  const dir = mkdtempSync(join(tmpdir(), 'video-bound-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'session.webm')
  writeFileSync(file, Buffer.from(await r.arrayBuffer()))
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'json', file])
  const seconds = Number((JSON.parse(stdout) as { format: { duration: string } }).format.duration)
  t.ok(seconds > 0.5 && seconds <= 2.2, `it plays for the bound, not the session (${seconds} s)`)

  const cleared = await rest('PUT', '/v1/governance', { videoMaxSeconds: null })
  t.same(pick(cleared.body), { videoMaxSeconds: null, videoMaxMiB: 50 }, 'null clears one bound, the other stays')
})

t.test("[ISSUE-51] a video's bounds are the platform's, lowered by the org's", async (t) => {
  const platform = { maxDurationMs: 60 * 60_000, maxBytes: 500 * 2 ** 20 }
  t.same(videoBounds(platform, { videoMaxSeconds: null, videoMaxMiB: null }), platform)
  t.same(videoBounds(platform, { videoMaxSeconds: 30, videoMaxMiB: 10 }), { maxDurationMs: 30_000, maxBytes: 10 * 2 ** 20 })
  t.same(videoBounds(platform, { videoMaxSeconds: 86_400, videoMaxMiB: 100_000 }), platform, "an org's bound never raises the platform's")
})

function pick(g: Record<string, unknown>): Record<string, unknown> {
  return { videoMaxSeconds: g.videoMaxSeconds, videoMaxMiB: g.videoMaxMiB }
}
