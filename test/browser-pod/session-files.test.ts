// The pod's session files (browser-pod/session-files.ts) with real Chromium: a download
// that streams past the size limit is cancelled while it runs (the browser stops
// reading, nothing of it is kept) and recorded as refused, the session goes on; the
// files' directory goes when the pod process exits.
import t from 'tap'
import http from 'node:http'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo, Socket } from 'node:net'
import { PodClient } from '../../api-server/sessions/pod-client.ts'
import { startPod } from '../../browser-pod/pod.ts'
import { FILE_MAX_BYTES } from '../../contracts/operations/drive-files.ts'
import { fakeTunnel, newToken, spawnPod, inProcessSandbox } from './harness.ts'
import { waitFor } from '../helpers/wait.ts'
import { shown } from '../helpers/perceived.ts'

const CHUNK = 64 * 1024
const ANNOUNCED = 20 * 1024 * 1024

/**
 * A download server on loopback: /endless streams without end and without a length,
 * /announced says 20 MiB up front; both at about 8 MB/s, so a browser that cancels
 * shows as a response closed early. Each records how many bytes it wrote.
 */
async function downloadServer(t: { teardown(fn: () => unknown): void }) {
  const sent: Record<string, { bytes: number; closed: boolean }> = {}
  const sockets = new Set<Socket>()
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/'
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' })
      return res.end('<title>Downloads</title><a id="endless" href="/endless">endless</a> <a id="announced" href="/announced">announced</a>')
    }
    const record: { bytes: number; closed: boolean } = { bytes: 0, closed: false }
    sent[path] = record
    const limit = path === '/announced' ? ANNOUNCED : Infinity
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${path.slice(1)}.bin"`,
      ...(limit < Infinity ? { 'content-length': String(limit) } : {}),
    })
    const chunk = Buffer.alloc(CHUNK, 7)
    let timer: NodeJS.Timeout | undefined
    res.on('close', () => {
      record.closed = true
      clearTimeout(timer)
    })
    // the server's pace (not a test's wait): one chunk every 8 ms, and none while the
    // browser is not reading (so the count is what it was sent, not what piled up here)
    const tick = () => {
      if (record.closed) return
      if (record.bytes >= limit) return void res.end()
      record.bytes += CHUNK
      if (res.write(chunk)) timer = setTimeout(tick, 8)
      else res.once('drain', () => (timer = setTimeout(tick, 8)))
    }
    tick()
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return { port: (server.address() as AddressInfo).port, sent }
}

t.test('a download past the size limit is cancelled while it streams', async (t) => {
  const web = await downloadServer(t)
  const token = newToken()
  const pod = await startPod({ token, tunnel: fakeTunnel(), sandbox: inProcessSandbox() })
  t.teardown(() => pod.close())
  const c = new PodClient(pod.endpoint, token)
  t.teardown(() => c.close())
  const origin = `http://localhost:${web.port}`
  await c.configure({ sessionId: 'nsess_files', egress: { mode: 'local', declaredHosts: [`localhost:${web.port}`] } })
  await c.drive('navigate', { url: origin + '/' })

  for (const name of ['endless', 'announced']) {
    t.test(`${name}: refused as too large, stopped early, nothing kept`, async (t) => {
      await c.drive('act', { verb: 'click', selector: `#${name}` })
      const file = await waitFor(async () => (await c.drive('file_list', {})).files.find((f) => f.name === `${name}.bin` && f.state !== 'in_progress'), { what: `${name} settled`, timeoutMs: 30_000 })
      t.match(file, { state: 'refused', reason: 'too_large', source: 'download' })
      t.ok(file.size! > FILE_MAX_BYTES, 'the size it reached or announced is over the limit')
      if (name === 'announced') t.equal(file.size, ANNOUNCED, 'the announced size')
      await waitFor(() => web.sent[`/${name}`]?.closed, { what: 'the browser stopped reading', timeoutMs: 30_000 })
      const sent = web.sent[`/${name}`].bytes
      t.ok(sent < Math.min(ANNOUNCED, 3 * FILE_MAX_BYTES), `cancelled while it streamed (${sent} bytes sent)`)
      const read = await c.drive('file_read', { fileId: file.id }).then(() => null, (e) => e)
      t.equal(read?.reason, 'file_not_ready', 'nothing of it can be read')
    })
  }

  t.test('the session goes on', async (t) => {
    t.match(await c.drive('navigate', { url: origin + '/' }), { title: 'Downloads' })
    t.match(shown(await c.drive('perceive', {})), /endless/)
  })
})

t.test('the files go with the pod process', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'nightjar-files-test-'))
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }))
  const pod = await spawnPod(t, { TMPDIR: tmp })
  await pod.client.configure({ sessionId: 'nsess_gone', egress: { mode: 'platform', declaredHosts: [] } })
  const put = await pod.client.drive('file_put', { name: 'kept.txt', contentBase64: Buffer.from('kept for the session').toString('base64') })
  const dirs = () => readdirSync(tmp).filter((d) => d.startsWith('nightjar-files-'))
  t.equal(dirs().length, 1, 'one directory for the pod’s files')
  t.ok(existsSync(join(tmp, dirs()[0], put.id)), 'holding the file')
  const read = await pod.client.drive('file_read', { fileId: 'kept.txt' })
  t.equal(Buffer.from(read.contentBase64, 'base64').toString(), 'kept for the session')
  pod.child.stdin!.end() // the pod's parent going away: it exits
  t.same(await pod.exited, { code: 0, signal: null })
  t.same(dirs(), [], 'the directory is gone with the process')
})
