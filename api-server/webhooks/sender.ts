// One delivery attempt: sign the stored body as the Standard Webhooks specification says
// and POST it, through the destination rules (destination.ts), with one deadline for the
// whole exchange. The answer's status is all that is kept: the receiver's body is read
// only to free the connection, and a redirect is not followed.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Webhook } from 'standardwebhooks'
import { DestinationRefused, type Destinations } from './destination.ts'
import type { Attempt } from './store.ts'

/** How long one attempt may take, connect to last byte (the specification asks receivers to answer fast). */
export const ATTEMPT_TIMEOUT_MS = 10_000
/** The most of a receiver's answer read before the connection is dropped. */
const MAX_ANSWER_BYTES = 64 * 1024

export interface Message {
  /** webhook-id: the event's id, the same on every attempt */
  id: string
  body: string
  /**
   * the endpoint's signing keys (the bytes behind its whsec_ secrets): the secret a rotation
   * replaced while its overlap lasts, then the current one
   */
  keys: readonly Uint8Array[]
}

/** The three headers of the specification, for this attempt's time: one `v1,` signature per key, space-separated. */
export function signedHeaders(m: Message, at: Date): Record<string, string> {
  return {
    'webhook-id': m.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': m.keys.map((key) => new Webhook(key, { format: 'raw' }).sign(m.id, at, m.body)).join(' '),
  }
}

export async function attempt(destinations: Destinations, url: string, m: Message, now: () => number): Promise<Attempt> {
  const started = now()
  const done = (responseStatus: number | null, error: string | null): Attempt =>
    ({ at: new Date(started).toISOString(), responseStatus, error, durationMs: Math.max(0, Math.round(now() - started)) })
  let u: URL
  try {
    u = destinations.parse(url)
  } catch {
    return done(null, 'address_refused')
  }
  if (destinations.literalRefusal(u)) return done(null, 'address_refused')
  const headers = { ...signedHeaders(m, new Date(started)), 'content-type': 'application/json', 'user-agent': 'Nightjar-Webhooks/1' }
  return new Promise<Attempt>((resolve) => {
    let settled = false
    const finish = (a: Attempt) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      resolve(a)
    }
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest
    const req = send(u, {
      method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(m.body)) },
      lookup: destinations.guardedLookup(u.hostname.replace(/^\[|\]$/g, '').toLowerCase()), agent: false,
    }, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0
      let read = 0
      res.on('data', (c: Buffer) => {
        read += c.length
        if (read > MAX_ANSWER_BYTES) res.destroy()
      })
      const answered = () => finish(done(status, status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect_not_followed' : 'http_error'))
      res.on('end', answered)
      res.on('close', answered)
      res.on('error', answered)
    })
    // one deadline for the whole exchange (connect, headers and body), not per socket event
    const deadline = setTimeout(() => {
      req.destroy()
      finish(done(null, 'timeout'))
    }, ATTEMPT_TIMEOUT_MS)
    req.on('error', (e: unknown) => finish(done(null, e instanceof DestinationRefused ? 'address_refused' : 'connection_failed')))
    req.end(m.body)
  })
}
