// The tunnel's copy-avoiding paths: DATA built in place over headroom buffers whose memory
// is reused once the frame is on the wire, and a reader that is never handed two frames
// glued together. Both sides are real TunnelSessions over a real WebSocket on loopback.
import t from 'tap'
import type net from 'node:net'
import { once } from 'node:events'
import { WebSocketServer, WebSocket } from 'ws'
import { MAX_DATA, MAX_FRAME, allocWithHeadroom } from '../../tunnel/frames.ts'
import { TunnelSession } from '../../tunnel/session.ts'
import type { TunnelStream } from '../../tunnel/stream.ts'
import { waitFor } from '../helpers/wait.ts'
import { pattern, readAll } from './fixtures/harness.ts'

/** A broker session and a daemon session, greeted; `window` is each side's receive window. */
async function pair(t: { teardown(fn: () => unknown): void }, window?: number) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, maxPayload: MAX_FRAME })
  await once(wss, 'listening')
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}`, { perMessageDeflate: false, maxPayload: MAX_FRAME })
  await once(client, 'open')
  const [server] = await accepted
  const broker = new TunnelSession(server, { role: 'broker', window })
  const daemon = new TunnelSession(client, { role: 'daemon', window })
  broker.once('hello', () => broker.sendWelcome({ daemonId: 'ndmn_test', heartbeatMs: 10_000 }))
  const welcomed = once(daemon, 'welcome')
  daemon.sendHello({ host: 'test', version: '0' })
  await welcomed
  t.teardown(async () => {
    broker.close()
    daemon.close()
    client.terminate()
    server.terminate()
    await new Promise<void>((r) => wss.close(() => r()))
  })
  /** a stream the broker opened; `local` is the daemon's end of it */
  const open = async (): Promise<{ remote: TunnelStream; local: TunnelStream }> => {
    const accepted = new Promise<TunnelStream>((resolve) => daemon.once('open', (req) => resolve(req.accept()!)))
    const remote = await broker.open('127.0.0.1', 1)
    const local = await accepted
    // the teardown closes both sessions under whatever is still open: that is no failure
    for (const s of [remote, local]) s.on('error', () => {})
    return { remote, local }
  }
  return { broker, daemon, open }
}

/** Writes `chunks` (from `make`) with backpressure, then ends. */
async function writeAll(s: TunnelStream, count: number, make: (i: number) => Buffer): Promise<void> {
  for (let i = 0; i < count; i++) if (!s.write(make(i))) await once(s, 'drain')
  s.end()
}

t.test('a headroom buffer written whole is reused once its frame is on the wire, never before', async (t) => {
  const { open } = await pair(t)
  const { remote, local } = await open()
  const size = 48 * 1024 + 7 // a size no other test uses, so the spare list is ours
  const first = allocWithHeadroom(size)
  pattern(size, 1).copy(first)
  local.write(first)
  const got = await new Promise<Buffer>((r) => remote.once('data', r))
  t.ok(got.equals(pattern(size, 1)), 'the bytes arrived as written')
  const again = await waitFor(
    () => {
      const b = allocWithHeadroom(size)
      return b.buffer === first.buffer ? b : null
    },
    { what: "the first buffer's memory handed out again" },
  )
  t.equal(again.length, size, 'as a buffer of the size asked for')

  // under load: every buffer is overwritten by the next reads only after it went out
  const n = 64
  const sent = writeAll(local, n, (i) => {
    const b = allocWithHeadroom(size)
    pattern(size, 100 + i).copy(b)
    return b
  })
  const all = await readAll(remote)
  await sent
  const want = Buffer.concat(Array.from({ length: n }, (_, i) => pattern(size, 100 + i)))
  t.ok(all.equals(want), `${n} reused buffers arrived intact and in order`)
})

t.test('a headroom buffer sent in several frames (too little credit) is not reused', async (t) => {
  const { open } = await pair(t, 4096) // each side grants 4 KiB, so a 16 KiB write goes out in pieces
  const { remote, local } = await open()
  const size = 16 * 1024 + 3
  const buf = allocWithHeadroom(size)
  pattern(size, 7).copy(buf)
  local.end(buf)
  t.ok((await readAll(remote)).equals(pattern(size, 7)), 'all bytes arrived')
  for (let i = 0; i < 4; i++) t.not(allocWithHeadroom(size).buffer, buf.buffer, 'its memory is never handed out again')
})

t.test('an async-iterating reader gets every frame as sent, never two glued together', async (t) => {
  const { open } = await pair(t)
  const { remote, local } = await open()
  const frames = 12
  const sent = writeAll(local, frames, (i) => {
    const b = allocWithHeadroom(MAX_DATA)
    pattern(MAX_DATA, i + 1).copy(b)
    return b
  })
  let largest = 0
  const chunks: Buffer[] = []
  for await (const c of remote) {
    largest = Math.max(largest, (c as Buffer).length)
    chunks.push(c as Buffer)
  }
  await sent
  t.ok(largest <= MAX_DATA, `no chunk larger than one frame (largest ${largest})`)
  t.ok(Buffer.concat(chunks).equals(Buffer.concat(Array.from({ length: frames }, (_, i) => pattern(MAX_DATA, i + 1)))), 'and every byte in order')
})

t.test('frames arriving faster than the reader reads are handed over one by one, not concatenated', async (t) => {
  // A hand-driven WebSocket, so that several DATA frames arrive within one tick, as they do
  // when the reader has fallen behind: read() must return one frame, not copy it together
  // with the next one into a new buffer.
  const { EventEmitter } = await import('node:events')
  const { FrameType, encodeFrame } = await import('../../tunnel/frames.ts')
  class HandWs extends EventEmitter {
    readyState = WebSocket.OPEN
    binaryType = 'nodebuffer'
    sent: Buffer[] = []
    send(b: Buffer, _o: unknown, cb?: (e?: Error) => void) {
      this.sent.push(b)
      if (cb) queueMicrotask(() => cb())
    }
    close() {}
    terminate() {}
  }
  const ws = new HandWs()
  const session = new TunnelSession(ws as unknown as WebSocket, { role: 'broker', window: 8 * MAX_DATA })
  const frame = (f: Parameters<typeof encodeFrame>[0]) => ws.emit('message', encodeFrame(f), true)
  frame({ type: FrameType.HELLO, streamId: 0, hello: { host: 'hand', version: '0' } })
  const opening = session.open('127.0.0.1', 1)
  frame({ type: FrameType.OPEN_OK, streamId: 1, window: MAX_DATA })
  const s = await opening
  // our write side stays open, so closing the session below errors the stream: no failure
  s.on('error', () => {})
  const count = 6
  const reading = (async () => {
    const sizes: number[] = []
    const got: Buffer[] = []
    for await (const c of s) {
      sizes.push((c as Buffer).length)
      got.push(c as Buffer)
    }
    return { sizes, all: Buffer.concat(got) }
  })()
  await new Promise((r) => setImmediate(r)) // the reader is waiting for data
  for (let i = 0; i < count; i++) frame({ type: FrameType.DATA, streamId: 1, data: pattern(MAX_DATA, 50 + i) })
  frame({ type: FrameType.FIN, streamId: 1 })
  const { sizes, all } = await reading
  t.same(sizes, Array(count).fill(MAX_DATA), 'one chunk per frame')
  t.ok(all.equals(Buffer.concat(Array.from({ length: count }, (_, i) => pattern(MAX_DATA, 50 + i)))), 'every byte in order')
  session.close()
})
