// Multiplexing and flow control through a real broker, a real daemon and real TCP.
import t from 'tap'
import { once } from 'node:events'
import type net from 'node:net'
import type { RequestOptions } from 'node:http'
import { waitFor } from '../helpers/wait.ts'
import { DEFAULT_WINDOW, MAX_AUTO_WINDOW, MAX_DATA } from '../../tunnel/frames.ts'
import { isTunnelError } from '../../tunnel/errors.ts'
import type { TunnelStream } from '../../tunnel/stream.ts'
import { daemonOnline, pattern, readAll, startBroker, startEcho, startTcp, NETWORK_ID } from './fixtures/harness.ts'

async function setup(t: { teardown(fn: () => unknown): void }) {
  const h = await startBroker()
  const echo = await startEcho()
  const { d } = await daemonOnline(h)
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  await waitFor(() => d.lines.some((l) => l.startsWith('declared hosts: 127.0.0.1')), { what: 'declared hosts at the daemon' })
  t.teardown(async () => {
    await d.stop()
    await echo.close()
    await h.close()
  })
  return { h, echo, d }
}

/** Sends `payload` on a fresh stream to the echo server and resolves with what came back. */
async function echoThrough(h: Awaited<ReturnType<typeof startBroker>>, port: number, payload: Buffer): Promise<Buffer> {
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', port)
  s.end(payload)
  return readAll(s)
}

t.test('200 concurrent streams each echo their data intact', async (t) => {
  const { h, echo } = await setup(t)
  const payloads = Array.from({ length: 200 }, (_, i) => pattern(32 * 1024 + i * 301, i + 1))
  const results = await Promise.all(payloads.map((p) => echoThrough(h, echo.port, p)))
  t.equal(results.filter((r, i) => r.equals(payloads[i])).length, 200, 'all 200 payloads came back byte for byte')
  await waitFor(() => h.broker.sessionStats(NETWORK_ID)[0].streams === 0, { what: 'streams closed' })
  t.pass('every stream was closed and forgotten once both sides sent FIN')
})

t.test('half close: FIN travels each way independently', async (t) => {
  const { h } = await setup(t)
  // a server that reads until the client is done, then answers and closes
  const srv = await startTcp((s) => {
    const got: Buffer[] = []
    s.on('data', (c) => got.push(c))
    s.on('end', () => s.end(`got ${Buffer.concat(got).length} bytes`))
  })
  t.teardown(() => srv.close())
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', srv.port)
  s.write(Buffer.alloc(300_000, 1))
  s.end()
  t.equal((await readAll(s)).toString(), 'got 300000 bytes')
})

t.test('a slow reader stalls only its own stream and buffers stay bounded', async (t) => {
  const { h, echo } = await setup(t)
  // daemon side: a source that writes TOTAL bytes as fast as its socket accepts them
  const TOTAL = 48 * 1024 * 1024
  let sourceWritten = 0
  const source = await startTcp((s) => {
    const block = pattern(256 * 1024, 42)
    const pump = () => {
      while (sourceWritten < TOTAL) {
        sourceWritten += block.length
        if (!s.write(block)) return void s.once('drain', pump)
      }
      s.end()
    }
    pump()
  })
  t.teardown(() => source.close())

  const slow = await h.broker.dial(NETWORK_ID, '127.0.0.1', source.port) // never read until the end
  let maxBufferedIn = 0
  let maxReadable = 0
  const sample = () => {
    maxBufferedIn = Math.max(maxBufferedIn, slow.bufferedIn)
    maxReadable = Math.max(maxReadable, slow.readableLength)
  }
  const sampler = setInterval(sample, 5)
  t.teardown(() => clearInterval(sampler))

  // the slow stream's window fills up: the peer may not send more until we read
  await waitFor(() => slow.bufferedIn + slow.readableLength >= DEFAULT_WINDOW - MAX_DATA, { what: 'slow stream window full' })

  // meanwhile 20 other streams move 1 MiB each, both ways
  const payloads = Array.from({ length: 20 }, (_, i) => pattern(1024 * 1024, 100 + i))
  const results = await Promise.all(payloads.map((p) => echoThrough(h, echo.port, p)))
  t.ok(results.every((r, i) => r.equals(payloads[i])), 'the other streams completed while one reader slept')
  sample()
  t.ok(sourceWritten < TOTAL, `the source was held back (wrote ${sourceWritten} of ${TOTAL} bytes)`)
  t.ok(maxBufferedIn <= DEFAULT_WINDOW, `receiver never held more than the window (max ${maxBufferedIn})`)
  t.ok(maxReadable <= 2 * MAX_DATA, `readable buffer bounded (max ${maxReadable})`)

  // and once it reads, every byte arrives, in order
  let received = 0
  let intact = true
  const expect = pattern(256 * 1024, 42)
  for await (const c of slow) {
    const chunk = c as Buffer
    for (let off = 0; off < chunk.length; ) {
      const at = (received + off) % expect.length
      const n = Math.min(chunk.length - off, expect.length - at)
      if (!chunk.subarray(off, off + n).equals(expect.subarray(at, at + n))) intact = false
      off += n
    }
    received += chunk.length
    sample()
  }
  slow.end() // our half: the stream is done once both sides sent FIN
  t.equal(received, TOTAL, 'all bytes of the slow stream arrived')
  t.ok(intact, 'and in order')
  // a reader that keeps up lets the window grow (auto-tuning), never past its ceiling
  t.ok(maxBufferedIn <= MAX_AUTO_WINDOW, `still bounded while draining (max ${maxBufferedIn})`)
})

t.test("a sender facing a reader that does not read is held at the receiver's window", async (t) => {
  const { h, echo } = await setup(t)
  let sink: net.Socket | null = null
  let sunk = 0
  const sinkSrv = await startTcp((s) => {
    sink = s
    s.pause() // reads nothing until resumed
  })
  t.teardown(() => sinkSrv.close())
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', sinkSrv.port)
  const chunk = pattern(64 * 1024, 7)
  let written = 0
  let writerStalled = false
  const writer = (async () => {
    for (let i = 0; i < 2048; i++) {
      written += chunk.length
      if (!s.write(chunk)) {
        writerStalled = true
        await once(s, 'drain')
        writerStalled = false
      }
    }
    s.end()
  })()
  await waitFor(() => writerStalled && s.sendWindow === 0, { what: 'sender out of credit' })
  const stats = h.broker.sessionStats(NETWORK_ID)[0]
  t.ok(s.writableLength <= 16 * 1024 + chunk.length, `sender's own buffer bounded (${s.writableLength} bytes)`)
  t.ok(stats.bufferedOut <= 1024 * 1024, `nothing piles up on the WebSocket (${stats.bufferedOut} bytes)`)

  // the tunnel is still free for everyone else
  const p = pattern(512 * 1024, 9)
  t.ok((await echoThrough(h, echo.port, p)).equals(p), 'other streams flow while this one is stalled')
  t.ok(writerStalled, 'and the stalled writer is still waiting')

  // the reader wakes up: everything written arrives
  sink!.on('data', (c: Buffer) => (sunk += c.length))
  const ended = once(sink!, 'end')
  sink!.resume()
  await writer
  await ended
  t.equal(sunk, written, `${written} bytes delivered after the stall`)
  s.destroy() // the sink never answers, so end the read half by aborting
})

t.test('an RST from either side aborts the stream and leaves others alone', async (t) => {
  const { h, echo } = await setup(t)
  const a = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  const b = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  // broker side aborts a: the daemon closes its socket to the echo server
  const sockets = echo.sockets.size
  a.destroy()
  await waitFor(() => echo.sockets.size === sockets - 1, { what: 'local socket closed by the daemon' })
  // the local server resets b's connection: the broker sees an error on b only
  const bErr = new Promise<Error>((r) => b.once('error', r))
  for (const sock of echo.sockets) sock.resetAndDestroy()
  const err = await bErr
  t.ok(isTunnelError(err, 'reset'), `b failed with ${(err as Error).message}`)
  const p = pattern(10_000, 5)
  t.ok((await echoThrough(h, echo.port, p)).equals(p), 'a new stream still works')
})

t.test('a TunnelStream can carry an http request (net.Socket look-alike)', async (t) => {
  const { h } = await setup(t)
  const http = await import('node:http')
  const srv = http.createServer((req, res) => res.end(`hello ${req.url}`))
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())))
  const port = (srv.address() as net.AddressInfo).port
  const body = await new Promise<string>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/through-the-tunnel',
        createConnection: (_o: unknown, cb: (err: Error | null, s?: TunnelStream) => void) => {
          h.broker.dial(NETWORK_ID, '127.0.0.1', port).then((s) => cb(null, s), (e) => cb(e))
          return undefined
        },
      } as unknown as RequestOptions,
      (res) => { readAll(res).then((b) => resolve(b.toString()), reject) },
    )
    req.on('error', reject)
    req.end()
  })
  t.equal(body, 'hello /through-the-tunnel')
})
