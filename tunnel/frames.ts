// The tunnel's frame codec, version 1: one WebSocket binary message is one frame
// (u8 type, u32 streamId, payload; big-endian), and every length and field is checked
// here so a malformed frame never reaches a session. The session rules (who opens,
// flow control, close codes) are enforced by session.ts.
// Design: docs/TUNNEL.md#wire-format-v1

export const FrameType = {
  HELLO: 0x01,
  WELCOME: 0x02,
  DECLARED_HOSTS: 0x03,
  PING: 0x04,
  PONG: 0x05,
  OPEN: 0x10,
  OPEN_OK: 0x11,
  OPEN_FAIL: 0x12,
  DATA: 0x13,
  WINDOW_UPDATE: 0x14,
  FIN: 0x15,
  RST: 0x16,
} as const
export type FrameTypeCode = (typeof FrameType)[keyof typeof FrameType]

export const HEADER_BYTES = 5
// 256 KiB frames: a quarter of the per-frame work of 64 KiB ones (measured: tunnel CPU per
// GiB went from ~3.3x to ~2.3x a direct copy), and head-of-line delay is dominated by the
// kernel's socket buffers rather than by frame size anyway.
export const MAX_DATA = 256 * 1024
export const MAX_JSON = 4096
export const MAX_HOSTS_JSON = 64 * 1024
/** Largest WebSocket message a peer may send; ws closes with 1009 above it. */
export const MAX_FRAME = HEADER_BYTES + Math.max(MAX_DATA, MAX_HOSTS_JSON)
/** Credit ceiling of one stream direction (as in HTTP/2). */
export const MAX_WINDOW = 0x7fffffff
export const DEFAULT_WINDOW = 256 * 1024
/** A stream whose consumer keeps up may grow its receive window to this (see stream.ts). */
export const MAX_AUTO_WINDOW = 4 * 1024 * 1024
export const MAX_DECLARED_HOSTS = 1024

export const OPEN_FAIL_REASONS = ['refused', 'timeout', 'not_declared', 'unreachable', 'error'] as const
export type OpenFailReason = (typeof OPEN_FAIL_REASONS)[number]

export interface HelloInfo {
  daemonId?: string
  host: string
  version: string
}
export interface WelcomeInfo {
  daemonId: string
  heartbeatMs: number
}

export type Frame =
  | { type: typeof FrameType.HELLO; streamId: 0; hello: HelloInfo }
  | { type: typeof FrameType.WELCOME; streamId: 0; welcome: WelcomeInfo }
  | { type: typeof FrameType.DECLARED_HOSTS; streamId: 0; hosts: string[] }
  | { type: typeof FrameType.PING | typeof FrameType.PONG; streamId: 0; nonce: Buffer }
  | { type: typeof FrameType.OPEN; streamId: number; window: number; host: string; port: number }
  | { type: typeof FrameType.OPEN_OK; streamId: number; window: number }
  | { type: typeof FrameType.OPEN_FAIL; streamId: number; reason: OpenFailReason }
  | { type: typeof FrameType.DATA; streamId: number; data: Buffer }
  | { type: typeof FrameType.WINDOW_UPDATE; streamId: number; increment: number }
  | { type: typeof FrameType.FIN | typeof FrameType.RST; streamId: number }

/** A malformed frame or a broken session rule. The connection carrying it is dropped. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(`tunnel protocol error: ${message}`)
    this.name = 'ProtocolError'
  }
}

/** Daemon ids the daemon may choose itself (--daemon-id); minted ones are ndmn_ + base62. */
export const DAEMON_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/
const LABEL_TEXT = /^[^\u0000-\u001f\u007f]*$/
const HOST_BYTES = /^[\x21-\x7e]+$/

function header(type: FrameTypeCode, streamId: number, payloadBytes: number): Buffer {
  const b = Buffer.allocUnsafe(HEADER_BYTES + payloadBytes)
  b[0] = type
  b.writeUInt32BE(streamId, 1)
  return b
}

function jsonFrame(type: FrameTypeCode, value: unknown, max: number): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8')
  if (body.length < 1 || body.length > max) throw new RangeError(`frame 0x${type.toString(16)} payload too large`)
  const b = header(type, 0, body.length)
  body.copy(b, HEADER_BYTES)
  return b
}

// Zero-copy DATA: a buffer from allocWithHeadroom() has HEADER_BYTES reserved in front
// (its ArrayBuffer is registered here), so its DATA frame is built in place, not copied.
// Such a buffer, once written to a TunnelStream, belongs to the tunnel: after its frame is
// flushed it is handed out again (a fresh 256 KiB block per read cost the daemon about a
// sixth of its CPU in GC). Never keep, read or write it after writing it.
// Design: docs/TUNNEL.md#flow-control-and-memory
const headroom = new WeakSet<ArrayBufferLike>()
/** Flushed headroom buffers by payload size, newest last. */
const spare = new Map<number, ArrayBuffer[]>()
const inSpare = new WeakSet<ArrayBufferLike>()
let spareBytes = 0
/** Ceiling for the bytes kept for reuse: a few full-speed streams' worth, whatever happens. */
const MAX_SPARE_BYTES = 4 * 1024 * 1024

/** A buffer of `size` bytes whose DATA frame can be built without a copy. Written to a TunnelStream, it is the tunnel's (see above). */
export function allocWithHeadroom(size: number): Buffer {
  const reused = spare.get(size)?.pop()
  if (reused) {
    inSpare.delete(reused)
    spareBytes -= reused.byteLength
    return Buffer.from(reused, HEADER_BYTES, size)
  }
  const whole = Buffer.allocUnsafeSlow(HEADER_BYTES + size) // never the shared pool
  headroom.add(whole.buffer)
  return whole.subarray(HEADER_BYTES)
}

/**
 * @internal `frame` was built in place over the whole of a headroom buffer's content and has
 * been flushed: nothing refers to its memory any more, so a later allocWithHeadroom() may reuse it.
 */
export function recycleHeadroom(frame: Buffer): void {
  const ab = frame.buffer
  if (frame.byteOffset !== 0 || !headroom.has(ab) || inSpare.has(ab) || spareBytes + ab.byteLength > MAX_SPARE_BYTES) return
  const size = ab.byteLength - HEADER_BYTES
  let list = spare.get(size)
  if (!list) spare.set(size, (list = []))
  list.push(ab as ArrayBuffer)
  inSpare.add(ab)
  spareBytes += ab.byteLength
}

/** The DATA frame for the first `length` bytes of `data`, built in place; null if `data` has no headroom. */
export function encodeDataInPlace(streamId: number, data: Buffer, length: number): Buffer | null {
  if (data.byteOffset !== HEADER_BYTES || !headroom.has(data.buffer)) return null
  const frame = Buffer.from(data.buffer, 0, HEADER_BYTES + length)
  frame[0] = FrameType.DATA
  frame.writeUInt32BE(streamId, 1)
  return frame
}

/** Hot path: DATA without building a Frame object. */
export function encodeData(streamId: number, data: Uint8Array): Buffer {
  const b = header(FrameType.DATA, streamId, data.length)
  b.set(data, HEADER_BYTES)
  return b
}

export function encodeFrame(f: Frame): Buffer {
  switch (f.type) {
    case FrameType.HELLO:
      return jsonFrame(f.type, f.hello, MAX_JSON)
    case FrameType.WELCOME:
      return jsonFrame(f.type, f.welcome, MAX_JSON)
    case FrameType.DECLARED_HOSTS:
      return jsonFrame(f.type, f.hosts, MAX_HOSTS_JSON)
    case FrameType.PING:
    case FrameType.PONG: {
      const b = header(f.type, 0, 8)
      f.nonce.copy(b, HEADER_BYTES, 0, 8)
      return b
    }
    case FrameType.OPEN: {
      const host = Buffer.from(f.host, 'latin1')
      const b = header(f.type, f.streamId, 7 + host.length)
      b.writeUInt32BE(f.window, 5)
      b.writeUInt16BE(f.port, 9)
      b[11] = host.length
      host.copy(b, 12)
      return b
    }
    case FrameType.OPEN_OK: {
      const b = header(f.type, f.streamId, 4)
      b.writeUInt32BE(f.window, 5)
      return b
    }
    case FrameType.OPEN_FAIL: {
      const b = header(f.type, f.streamId, 1)
      b[5] = OPEN_FAIL_REASONS.indexOf(f.reason) + 1
      return b
    }
    case FrameType.DATA:
      return encodeData(f.streamId, f.data)
    case FrameType.WINDOW_UPDATE: {
      const b = header(f.type, f.streamId, 4)
      b.writeUInt32BE(f.increment, 5)
      return b
    }
    case FrameType.FIN:
    case FrameType.RST:
      return header(f.type, f.streamId, 0)
  }
}

function parseJson(p: Buffer, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(p))
  } catch {
    throw new ProtocolError(`${what} payload is not valid JSON`)
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function label(v: unknown, max: number, what: string): string {
  if (typeof v !== 'string' || v.length > max || !LABEL_TEXT.test(v)) throw new ProtocolError(`bad ${what}`)
  return v
}

function expectLength(p: Buffer, min: number, max: number, name: string): void {
  if (p.length < min || p.length > max) throw new ProtocolError(`${name} payload of ${p.length} bytes`)
}

// ── the payloads with a shape of their own ──

function decodeHello(p: Buffer): HelloInfo {
  expectLength(p, 1, MAX_JSON, 'HELLO')
  const v = parseJson(p, 'HELLO')
  if (!isObject(v)) throw new ProtocolError('HELLO is not an object')
  const hello: HelloInfo = { host: label(v.host, 255, 'HELLO host'), version: label(v.version, 64, 'HELLO version') }
  if (v.daemonId !== undefined) {
    if (typeof v.daemonId !== 'string' || !DAEMON_ID.test(v.daemonId)) throw new ProtocolError('bad HELLO daemonId')
    hello.daemonId = v.daemonId
  }
  return hello
}

function decodeWelcome(p: Buffer): WelcomeInfo {
  expectLength(p, 1, MAX_JSON, 'WELCOME')
  const v = parseJson(p, 'WELCOME')
  if (!isObject(v) || typeof v.daemonId !== 'string' || !DAEMON_ID.test(v.daemonId)) throw new ProtocolError('bad WELCOME')
  const hb = v.heartbeatMs
  if (typeof hb !== 'number' || !Number.isInteger(hb) || hb < 10 || hb > 600_000) throw new ProtocolError('bad WELCOME heartbeatMs')
  return { daemonId: v.daemonId, heartbeatMs: hb }
}

function decodeDeclaredHosts(p: Buffer): string[] {
  expectLength(p, 1, MAX_HOSTS_JSON, 'DECLARED_HOSTS')
  const v = parseJson(p, 'DECLARED_HOSTS')
  if (!Array.isArray(v) || v.length > MAX_DECLARED_HOSTS) throw new ProtocolError('DECLARED_HOSTS is not a host list')
  return v.map((h) => label(h, 260, 'declared host'))
}

/** OPEN: window (4 bytes), port (2), host length (1), host (latin1, 0x21..0x7e) */
function decodeOpen(p: Buffer): { window: number; host: string; port: number } {
  if (p.length < 8) throw new ProtocolError(`OPEN payload of ${p.length} bytes`)
  const window = p.readUInt32BE(0)
  const port = p.readUInt16BE(4)
  const hostLen = p[6]
  if (hostLen < 1 || p.length !== 7 + hostLen) throw new ProtocolError('OPEN host length does not match the payload')
  if (port === 0) throw new ProtocolError('OPEN port 0')
  if (window < 1 || window > MAX_WINDOW) throw new ProtocolError(`OPEN window ${window}`)
  const host = p.toString('latin1', 7)
  if (!HOST_BYTES.test(host)) throw new ProtocolError('OPEN host has bytes outside 0x21..0x7e')
  return { window, host, port }
}

/**
 * Strict decoder: returns a frame or throws ProtocolError — never anything else, for any
 * input (fuzzed in test/tunnel/frames.test.ts). Unknown JSON keys are ignored so that
 * later versions can add optional fields.
 */
export function decodeFrame(buf: Buffer): Frame {
  if (!Buffer.isBuffer(buf)) throw new ProtocolError('frame is not binary')
  if (buf.length < HEADER_BYTES) throw new ProtocolError(`frame of ${buf.length} bytes is shorter than its header`)
  const type = buf[0]
  const streamId = buf.readUInt32BE(1)
  const p = buf.subarray(HEADER_BYTES)
  const control = type >= 0x01 && type <= 0x05
  const stream = type >= 0x10 && type <= 0x16
  if (!control && !stream) throw new ProtocolError(`unknown frame type 0x${type.toString(16).padStart(2, '0')}`)
  if (control && streamId !== 0) throw new ProtocolError(`control frame 0x${type.toString(16)} on stream ${streamId}`)
  if (stream && streamId === 0) throw new ProtocolError(`stream frame 0x${type.toString(16)} on stream 0`)

  switch (type) {
    case FrameType.HELLO:
      return { type, streamId: 0, hello: decodeHello(p) }
    case FrameType.WELCOME:
      return { type, streamId: 0, welcome: decodeWelcome(p) }
    case FrameType.DECLARED_HOSTS:
      return { type, streamId: 0, hosts: decodeDeclaredHosts(p) }
    case FrameType.PING:
    case FrameType.PONG:
      expectLength(p, 8, 8, type === FrameType.PING ? 'PING' : 'PONG')
      return { type, streamId: 0, nonce: Buffer.from(p) }
    case FrameType.OPEN:
      return { type, streamId, ...decodeOpen(p) }
    case FrameType.OPEN_OK: {
      expectLength(p, 4, 4, 'OPEN_OK')
      const window = p.readUInt32BE(0)
      if (window < 1 || window > MAX_WINDOW) throw new ProtocolError(`OPEN_OK window ${window}`)
      return { type, streamId, window }
    }
    case FrameType.OPEN_FAIL: {
      expectLength(p, 1, 1, 'OPEN_FAIL')
      const reason = OPEN_FAIL_REASONS[p[0] - 1]
      if (!reason) throw new ProtocolError(`OPEN_FAIL reason ${p[0]}`)
      return { type, streamId, reason }
    }
    case FrameType.DATA:
      expectLength(p, 1, MAX_DATA, 'DATA')
      return { type, streamId, data: p }
    case FrameType.WINDOW_UPDATE: {
      expectLength(p, 4, 4, 'WINDOW_UPDATE')
      const increment = p.readUInt32BE(0)
      if (increment < 1 || increment > MAX_WINDOW) throw new ProtocolError(`WINDOW_UPDATE increment ${increment}`)
      return { type, streamId, increment }
    }
    case FrameType.FIN:
    case FrameType.RST:
      expectLength(p, 0, 0, type === FrameType.FIN ? 'FIN' : 'RST')
      return { type, streamId }
    default:
      throw new ProtocolError(`unknown frame type 0x${type.toString(16).padStart(2, '0')}`)
  }
}

export function frameName(type: number): string {
  const e = Object.entries(FrameType).find(([, v]) => v === type)
  return e ? e[0] : `0x${type.toString(16)}`
}
