// Session videos, end to end: real Chromium in a real pod, Debian's ffmpeg, the real API
// server and Postgres, the "public web" namespace. A session started with a video navigates
// a few pages and has a credential filled; once it ended, its video downloads over REST,
// ffprobe reads it, a Range request answers 206 with exactly those bytes, a range past the
// end 416, and an unknown session, another org's and one without a video the same 404 byte
// for byte. The canary is never in the file, the row or an answer (includes(), never printed).
import t from 'tap'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestServer } from '../../helpers/server.ts'
import { startPublicWeb } from '../../helpers/netns.ts'
import { createPersona } from '../../helpers/personas.ts'

const run = promisify(execFile)
const CANARY = `Vid&${randomBytes(6).toString('hex')}`

t.test('[ISSUE-51] session video over REST', async (t) => {
  const web = await startPublicWeb(t)
  const aliases = { 'example.com': web.ip, 'login.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases) } })
  const acme = await s.bootstrap()
  const globex = await s.bootstrap()
  const replies: string[] = []
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await s.request(method, path, { token: acme.apiKey, body })
    replies.push(r.text)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.includes(CANARY) ? '(reply withheld)' : r.text}`)
    return r.body
  }
  const download = (id: string, token: string, headers: Record<string, string> = {}) =>
    fetch(`${s.url}/v1/sessions/${id}/video`, { headers: { authorization: `Bearer ${token}`, ...headers } })
  const persona = await createPersona(s, acme.apiKey, { name: 'filmed', value: CANARY, originAllowlist: ['login.example.com'], agentId: acme.agentId })

  const started = await ok('POST', '/v1/sessions', { identity: persona.identityId, video: { format: 'webm', fps: 5, width: 640 } })
  const id = started.id as string
  t.teardown(() => s.request('DELETE', `/v1/sessions/${id}`, { token: acme.apiKey }))
  const plain = await ok('POST', '/v1/sessions', { video: false })
  t.teardown(() => s.request('DELETE', `/v1/sessions/${plain.id as string}`, { token: acme.apiKey }))

  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/index.html' })
  await ok('POST', `/v1/sessions/${id}/act`, { verb: 'click', selector: '#go' })
  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'http://login.example.com/fill-check.html' })
  t.equal((await ok('POST', `/v1/sessions/${id}/fill-credential`, { credentialName: 'login', selector: '#pw' })).fieldKind, 'password')
  await ok('POST', `/v1/sessions/${id}/navigate`, { url: 'http://example.com/index.html' })

  const live = await download(id, acme.apiKey)
  t.equal(live.status, 404, 'a live session’s video is not there yet')
  await live.arrayBuffer()
  await ok('DELETE', `/v1/sessions/${id}`)
  await ok('DELETE', `/v1/sessions/${plain.id as string}`)

  const whole = await download(id, acme.apiKey)
  t.equal(whole.status, 200, 'the ended session’s video downloads')
  t.equal(whole.headers.get('content-type'), 'video/webm')
  t.equal(whole.headers.get('accept-ranges'), 'bytes')
  const bytes = Buffer.from(await whole.arrayBuffer())
  t.equal(Number(whole.headers.get('content-length')), bytes.length)
  t.ok(bytes.length > 1000, `${bytes.length} bytes`)

  const dir = mkdtempSync(join(tmpdir(), 'video-e2e-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'session.webm')
  writeFileSync(file, bytes)
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_name,width,nb_read_frames:format=duration', '-of', 'json', file])
  const p = JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; nb_read_frames: string }>; format: { duration: string } }
  const row = (await s.services.db.query('select * from session_videos where session_id = $1', [id])).rows[0]
  t.comment(`ffprobe: ${p.streams[0].codec_name} ${p.streams[0].width} px, ${p.streams[0].nb_read_frames} frames, ${p.format.duration} s; row: ${row.frames} frames, ${row.duration_ms} ms, ${row.bytes} bytes`)
  t.equal(p.streams[0].codec_name, 'vp9')
  t.equal(p.streams[0].width, 640)
  t.ok(Number(p.streams[0].nb_read_frames) > 0, 'frames decode')
  t.equal(Number(p.streams[0].nb_read_frames), row.frames, 'as many as the pod wrote')
  t.ok(Number(p.format.duration) * 1000 >= row.duration_ms - 400 && Number(p.format.duration) * 1000 <= row.duration_ms + 400, 'its duration is the frames’')
  t.equal(Number(row.bytes), bytes.length, 'the row sizes it')
  t.equal(row.stored, true)
  t.equal(row.truncated, false)

  const part = await download(id, acme.apiKey, { range: 'bytes=100-1099' })
  t.equal(part.status, 206, 'a range answers 206')
  t.equal(part.headers.get('content-range'), `bytes 100-1099/${bytes.length}`)
  t.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 1100)), 'with exactly those bytes')
  const tail = await download(id, acme.apiKey, { range: 'bytes=-10' })
  t.equal(tail.status, 206)
  t.ok(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 10)), 'a suffix range: the last bytes')
  const past = await download(id, acme.apiKey, { range: `bytes=${bytes.length}-` })
  t.equal(past.status, 416, 'a range past the end: 416')
  t.equal(past.headers.get('content-range'), `bytes */${bytes.length}`)
  await past.arrayBuffer()

  const unknown = await download('nsess_doesnotexist0000000000', acme.apiKey)
  const foreign = await download(id, globex.apiKey)
  const without = await download(plain.id as string, acme.apiKey)
  const bodies = [await unknown.text(), await foreign.text(), await without.text()]
  t.same([unknown.status, foreign.status, without.status], [404, 404, 404], 'unknown, foreign and video-less sessions: 404')
  t.ok(bodies[0] === bodies[1] && bodies[1] === bodies[2], 'byte for byte the same')
  t.same(Object.fromEntries([...unknown.headers].filter(([k]) => k !== 'date' && k !== 'x-request-id')), Object.fromEntries([...foreign.headers].filter(([k]) => k !== 'date' && k !== 'x-request-id')), 'with the same headers')

  t.notOk(bytes.includes(Buffer.from(CANARY)), 'the video file does not carry the secret')
  t.notOk(JSON.stringify(row).includes(CANARY), 'nor its row')
  t.notOk(replies.some((r) => r.includes(CANARY)) || bodies.some((b) => b.includes(CANARY)), 'nor any answer')
})
