// Frame codec: round trip of every frame type, strictness, and fuzzing (random and
// mutated frames) both at the codec and against a live broker.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import {
  FrameType,
  MAX_DATA,
  MAX_FRAME,
  ProtocolError,
  decodeFrame,
  encodeFrame,
  type Frame,
} from '../../tunnel/frames.ts'
import { waitFor } from '../helpers/wait.ts'
import { startBroker, startEcho, daemonOnline, readAll, pattern, NETWORK, NETWORK_ID } from './fixtures/harness.ts'

const samples: Frame[] = [
  { type: FrameType.HELLO, streamId: 0, hello: { host: 'laptop', version: '0.1.0' } },
  { type: FrameType.HELLO, streamId: 0, hello: { daemonId: 'ndmn_abc', host: 'ünïcode host', version: '1' } },
  { type: FrameType.WELCOME, streamId: 0, welcome: { daemonId: 'ndmn_abc', heartbeatMs: 10_000 } },
  { type: FrameType.DECLARED_HOSTS, streamId: 0, hosts: ['localhost', '127.0.0.1:3000', '[::1]:8080'] },
  { type: FrameType.DECLARED_HOSTS, streamId: 0, hosts: [] },
  { type: FrameType.PING, streamId: 0, nonce: Buffer.from('01234567') },
  { type: FrameType.PONG, streamId: 0, nonce: Buffer.from('76543210') },
  { type: FrameType.OPEN, streamId: 1, window: 262_144, host: 'localhost', port: 3000 },
  { type: FrameType.OPEN, streamId: 0xffffffff, window: 1, host: '::1', port: 65535 },
  { type: FrameType.OPEN_OK, streamId: 7, window: 0x7fffffff },
  ...(['refused', 'timeout', 'not_declared', 'unreachable', 'error'] as const).map(
    (reason): Frame => ({ type: FrameType.OPEN_FAIL, streamId: 3, reason }),
  ),
  { type: FrameType.DATA, streamId: 9, data: Buffer.from('hello') },
  { type: FrameType.DATA, streamId: 9, data: randomBytes(MAX_DATA) },
  { type: FrameType.WINDOW_UPDATE, streamId: 2, increment: 65_536 },
  { type: FrameType.FIN, streamId: 2 },
  { type: FrameType.RST, streamId: 2 },
]

t.test('every frame type survives encode → decode unchanged', async (t) => {
  for (const f of samples) {
    const bytes = encodeFrame(f)
    t.same(decodeFrame(bytes), f, `0x${f.type.toString(16)}`)
    // binary frames are canonical: decoding and re-encoding gives the same bytes
    // (JSON ones are only equal in value: key order is free)
    if (f.type !== FrameType.HELLO) t.ok(encodeFrame(decodeFrame(bytes)).equals(bytes), 'canonical')
  }
})

t.test('the decoder rejects malformed frames with a ProtocolError', async (t) => {
  const bad: Array<[string, Buffer]> = [
    ['short header', Buffer.from([0x13, 0, 0])],
    ['unknown type', Buffer.from([0x7f, 0, 0, 0, 1, 1])],
    ['control frame on a stream', encodeFrame(samples[5]).fill(1, 4, 5)],
    ['stream frame on stream 0', Buffer.from([0x15, 0, 0, 0, 0])],
    ['empty DATA', Buffer.from([0x13, 0, 0, 0, 1])],
    ['oversized DATA', Buffer.concat([Buffer.from([0x13, 0, 0, 0, 1]), Buffer.alloc(MAX_DATA + 1)])],
    ['FIN with payload', Buffer.from([0x15, 0, 0, 0, 1, 0])],
    ['zero window update', Buffer.from([0x14, 0, 0, 0, 1, 0, 0, 0, 0])],
    ['window update above 2^31-1', Buffer.from([0x14, 0, 0, 0, 1, 0x80, 0, 0, 0])],
    ['OPEN_FAIL reason 0', Buffer.from([0x12, 0, 0, 0, 1, 0])],
    ['OPEN_FAIL reason 6', Buffer.from([0x12, 0, 0, 0, 1, 6])],
    ['OPEN port 0', encodeFrame({ type: FrameType.OPEN, streamId: 1, window: 10, host: 'h', port: 1 }).fill(0, 9, 11)],
    ['OPEN host length mismatch', Buffer.concat([encodeFrame({ type: FrameType.OPEN, streamId: 1, window: 10, host: 'abc', port: 1 }), Buffer.from('x')])],
    ['OPEN host with a space', encodeFrame({ type: FrameType.OPEN, streamId: 1, window: 10, host: 'a b', port: 1 })],
    ['HELLO not JSON', Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), Buffer.from('{nope')])],
    ['HELLO not UTF-8', Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), Buffer.from([0x22, 0xff, 0x22])])],
    ['HELLO without host', Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), Buffer.from('{"version":"1"}')])],
    ['HELLO with a bad daemonId', Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), Buffer.from('{"host":"h","version":"1","daemonId":"a b"}')])],
    ['DECLARED_HOSTS not an array', Buffer.concat([Buffer.from([3, 0, 0, 0, 0]), Buffer.from('{"a":1}')])],
    ['PING of 7 bytes', Buffer.from([4, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7])],
    ['deeply nested JSON', Buffer.concat([Buffer.from([3, 0, 0, 0, 0]), Buffer.from('['.repeat(3000) + ']'.repeat(3000))])],
  ]
  for (const [name, buf] of bad) t.throws(() => decodeFrame(buf), ProtocolError, name)
})

/** decode must return a frame or throw ProtocolError — nothing else, ever. */
function fuzzOne(buf: Buffer): 'ok' | 'rejected' {
  try {
    const f = decodeFrame(buf)
    const json = f.type === FrameType.HELLO || f.type === FrameType.WELCOME || f.type === FrameType.DECLARED_HOSTS
    if (!json && !encodeFrame(f).equals(buf)) throw new Error(`accepted a non-canonical frame ${buf.toString('hex').slice(0, 40)}`)
    return 'ok'
  } catch (e) {
    if (e instanceof ProtocolError) return 'rejected'
    throw e
  }
}

function mutate(src: Buffer): Buffer {
  const b = Buffer.from(src)
  switch (Math.floor(Math.random() * 5)) {
    case 0: // flip bytes
      for (let i = 0, n = 1 + Math.floor(Math.random() * 3); i < n && b.length; i++) b[Math.floor(Math.random() * b.length)] ^= 1 + Math.floor(Math.random() * 255)
      return b
    case 1: // truncate
      return b.subarray(0, Math.floor(Math.random() * b.length))
    case 2: // extend
      return Buffer.concat([b, randomBytes(1 + Math.floor(Math.random() * 8))])
    case 3: // other type byte
      b[0] = Math.floor(Math.random() * 256)
      return b
    default: // other stream id
      if (b.length >= 5) b.writeUInt32BE(Math.floor(Math.random() * 4), 1)
      return b
  }
}

t.test('codec fuzz: random and mutated frames only ever decode or raise ProtocolError', async (t) => {
  const counts = { ok: 0, rejected: 0 }
  for (let i = 0; i < 20_000; i++) counts[fuzzOne(randomBytes(Math.floor(Math.random() * 40)))]++
  for (let i = 0; i < 50_000; i++) counts[fuzzOne(mutate(encodeFrame(samples[i % samples.length])))]++
  // random type bytes land on a valid type often enough that both outcomes occur
  t.ok(counts.rejected > 0 && counts.ok > 0, `accepted ${counts.ok}, rejected ${counts.rejected}`)
})

/** A raw WebSocket that joins like a daemon; what it sends next is up to the test. */
async function fakeDaemon(url: string, token: string): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(`${url}/ws/control?network=${NETWORK}`, { headers: { authorization: `Bearer ${token}` } })
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)))
  ws.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  const welcome = new Promise<void>((r) => ws.once('message', () => r()))
  ws.send(encodeFrame({ type: FrameType.HELLO, streamId: 0, hello: { host: 'fake', version: 'x' } }))
  await welcome
  return { ws, closed }
}

t.test('session fuzz: a broker drops a daemon for any bad frame and keeps serving the others', async (t) => {
  const h = await startBroker()
  const echo = await startEcho()
  const good = await daemonOnline(h)
  h.broker.pushDeclaredHosts(NETWORK_ID, ['127.0.0.1'])
  // wait until the good daemon has the list (its progress line says so)
  await waitFor(() => good.d.lines.some((l) => l.includes('declared hosts: 127.0.0.1')))

  const inputs: Buffer[] = []
  for (let i = 0; i < 40; i++) inputs.push(randomBytes(1 + Math.floor(Math.random() * 30)))
  for (let i = 0; i < 80; i++) inputs.push(mutate(encodeFrame(samples[i % samples.length])))
  let dropped = 0
  for (const input of inputs) {
    let tolerated = false // a daemon may send PING/PONG; anything else here breaks a rule
    try {
      const f = decodeFrame(input)
      tolerated = f.type === FrameType.PING || f.type === FrameType.PONG
    } catch {}
    const fake = await fakeDaemon(h.url, h.token.value)
    fake.ws.send(input)
    if (tolerated) {
      fake.ws.close()
      await fake.closed
    } else {
      const code = await fake.closed
      // 1009: ws itself refuses a message above MAX_FRAME before we ever see it
      const expected = input.length > MAX_FRAME ? 1009 : 1002
      if (code !== expected) t.fail(`expected close 1002 for ${input.toString('hex').slice(0, 32)}, got ${code}`)
      dropped++
    }
  }
  t.ok(dropped > 100, `${dropped} fake daemons dropped`)
  // the good daemon never noticed
  const s = await h.broker.dial(NETWORK_ID, '127.0.0.1', echo.port)
  const payload = pattern(100_000, 3)
  s.end(payload)
  t.ok((await readAll(s)).equals(payload), 'echo through the surviving daemon')
  t.equal(h.broker.listDaemons(NETWORK_ID).length, 1)
  await good.d.stop()
  await echo.close()
  await h.close()
})

t.test('a text message is a protocol error too', async (t) => {
  const h = await startBroker()
  const fake = await fakeDaemon(h.url, h.token.value)
  fake.ws.send('hello')
  t.equal(await fake.closed, 1002)
  t.ok(h.logs.some((l) => l.includes('text message')), 'the broker says why')
  await h.close()
})
