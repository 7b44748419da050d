// The SDK's video download against the real server: a session started through the SDK with
// a video, driven and ended, downloads whole (ffprobe decodes it) and by byte ranges (206,
// exactly the bytes of the whole file), and a range past the end or a session without a
// video is the NightjarError the server's status says. Real Chromium, ffmpeg, HTTP, Postgres.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestServer } from '../helpers/server.ts'
import { Nightjar, NightjarError } from '../../sdk/index.ts'

const run = promisify(execFile)
const PAGE = 'data:text/html,' + encodeURIComponent('<title>SDK</title><h1>Downloaded through the SDK</h1>')

t.test('[ISSUE-51] nj.sessionVideo downloads a session’s video, whole and by ranges', async (t) => {
  const s = await startTestServer(t, { sessions: true })
  const acme = await s.bootstrap()
  const nj = new Nightjar({ baseUrl: s.url, token: acme.apiKey })
  const filmed = await nj.sessions.create({ video: { format: 'mp4', fps: 5, width: 640 } })
  const plain = await nj.sessions.create({})
  await nj.sessions.navigate(filmed.id, PAGE)
  await nj.sessions.end(filmed.id)
  await nj.sessions.end(plain.id)

  const whole = await nj.sessionVideo(filmed.id)
  t.equal(whole.status, 200)
  t.equal(whole.contentType, 'video/mp4')
  t.equal(whole.size, whole.bytes.length)
  t.ok(whole.bytes.length > 1000, `${whole.bytes.length} bytes`)
  const dir = mkdtempSync(join(tmpdir(), 'sdk-video-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'session.mp4')
  writeFileSync(file, whole.bytes)
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_name,nb_read_frames', '-of', 'json', file])
  const p = JSON.parse(stdout) as { streams: Array<{ codec_name: string; nb_read_frames: string }> }
  t.equal(p.streams[0].codec_name, 'h264')
  t.ok(Number(p.streams[0].nb_read_frames) > 0, 'its frames decode')

  const part = await nj.sessionVideo(filmed.id, { start: 10, end: 109 })
  t.equal(part.status, 206)
  t.equal(part.size, whole.size, 'the whole size, from Content-Range')
  t.same(Buffer.from(part.bytes), Buffer.from(whole.bytes.subarray(10, 110)), 'exactly those bytes')
  const open = await nj.sessionVideo(filmed.id, { start: whole.size - 5 })
  t.same(Buffer.from(open.bytes), Buffer.from(whole.bytes.subarray(whole.size - 5)), 'an open range: to the end')
  const tail = await nj.sessionVideo(filmed.id, { suffix: 7 })
  t.same(Buffer.from(tail.bytes), Buffer.from(whole.bytes.subarray(whole.size - 7)), 'a suffix: the last bytes')

  const past = await nj.sessionVideo(filmed.id, { start: whole.size }).then(() => undefined, (e: unknown) => e)
  t.ok(past instanceof NightjarError && past.status === 416 && past.code === 'range_not_satisfiable', 'a range past the end: 416')
  const none = await nj.sessionVideo(plain.id).then(() => undefined, (e: unknown) => e)
  t.ok(none instanceof NightjarError && none.status === 404, 'a session without a video: 404')
})
