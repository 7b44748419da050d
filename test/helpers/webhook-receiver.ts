// A webhook receiver for the tests: a real HTTP server on loopback that keeps every
// request and checks its signature with an implementation of its own, written from the
// Standard Webhooks specification with node:crypto — not the signing library the server
// uses — so a mistake in how the server calls that library cannot hide here. Every payload
// is read against its event's contract, strictly: a field the contract does not list fails.
//   signed content: "<webhook-id>.<webhook-timestamp>.<body>"
//   signature:      base64(HMAC-SHA256(key, signed content)), key = base64-decoded secret after "whsec_"
//   header:         space-separated "v1,<signature>" entries
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { z } from 'zod'
import { WEBHOOK_EVENT_DATA, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../contracts/operations/webhooks.ts'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** the status this receiver answered */
  answered: number
}

/** Does the signature header carry a valid v1 signature of (id, timestamp, body) under `secret`? */
export function verifySignature(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  if (!secret.startsWith('whsec_')) return false
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  return header.split(' ').some((entry) => {
    const [version, sig] = entry.split(',')
    if (version !== 'v1' || !sig) return false
    const given = Buffer.from(sig, 'base64')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/** A delivery's body as its contract has it: type, timestamp and data, nothing more, nothing missing. */
export interface CheckedPayload { type: WebhookEventType; timestamp: string; data: Record<string, unknown> }

/**
 * Parses a delivery's body against WebhookPayload with every object strict, so a field a
 * payload carries that the contract (and so the docs) does not list fails the test: the
 * contract's own schema lets receivers ignore unknown fields, a test must not.
 */
export function checkedPayload(body: string): CheckedPayload {
  const raw = z.strictObject({ type: z.enum(WEBHOOK_EVENT_TYPES), timestamp: z.iso.datetime(), data: z.unknown() }).parse(JSON.parse(body))
  const data = WEBHOOK_EVENT_DATA[raw.type].strict().parse(raw.data) as Record<string, unknown>
  return { type: raw.type, timestamp: raw.timestamp, data }
}

export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** the status (and headers) of the next answers, in order; then 204 */
  answerWith(...statuses: Array<number | { status: number; headers: Record<string, string> }>): void
  close(): Promise<void>
}

export async function startReceiver(t: { teardown(fn: () => unknown): void }, path = '/hooks'): Promise<Receiver> {
  const received: Received[] = []
  const queue: Array<number | { status: number; headers: Record<string, string> }> = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const next = queue.shift() ?? 204
      const answer = typeof next === 'number' ? { status: next, headers: {} } : next
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: answer.status })
      res.writeHead(answer.status, answer.headers).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${port}${path}`, port, received, answerWith: (...s) => queue.push(...s), close }
}

/** A receiver that answers `status.code` to every request, for as long as the test says; the bodies it got. */
export async function switchableReceiver(t: { teardown(fn: () => unknown): void }, code: number) {
  const status = { code }
  const received: string[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'))
      res.writeHead(status.code).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, status, received }
}
