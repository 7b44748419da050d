// One tunnel stream carried by one WebSocket: the wire of /ws/egress (a browser pod's
// gateway → the api-server) and of a forwarded dial (a replica → the replica holding the
// network's daemon). The accepting side answers a text frame "open" and then carries raw
// bytes both ways, or closes with a code that says why the dial failed. Both hops speak it,
// so a forwarded failure reaches the pod with the code the owner closed with.
import { createWebSocketStream, WebSocket, type ClientOptions } from 'ws'
import type { Duplex } from 'node:stream'
import type { TunnelErrorCode } from './errors.ts'

/** why a dial failed, as a close code (refused/unreachable/error share one: the pod treats them alike) */
export const DIAL_CLOSE = {
  not_declared: 4403,
  no_network: 4404,
  refused: 4502,
  unreachable: 4502,
  error: 4502,
  reset: 4502,
  closed: 4502,
  no_daemon: 4503,
  timeout: 4504,
} as const satisfies Record<TunnelErrorCode | 'no_network', number>

export type DialFailure = 'not_declared' | 'no_daemon' | 'refused' | 'timeout' | 'error' | 'closed'

const FAILURE_OF_CLOSE: Record<number, DialFailure> = {
  4403: 'not_declared',
  4404: 'no_daemon', // the session has no network: nothing to tunnel to
  4502: 'refused',
  4503: 'no_daemon',
  4504: 'timeout',
}

export class DialError extends Error {
  readonly code: DialFailure
  constructor(code: DialFailure) {
    super(`tunnel dial failed: ${code}`)
    this.code = code
    this.name = 'DialError'
  }
}

/** Close an accepted WebSocket with the code for `code` (the reason names it, for logs). */
export function refuseDial(ws: WebSocket, code: keyof typeof DIAL_CLOSE): void {
  if (ws.readyState === WebSocket.OPEN) ws.close(DIAL_CLOSE[code], code)
}

/** The dial succeeded: say "open", then pipe the WebSocket and `stream` into each other. */
export function acceptDial(ws: WebSocket, stream: Duplex): void {
  if (ws.readyState !== WebSocket.OPEN) return void stream.destroy()
  ws.send('open')
  const carried = createWebSocketStream(ws)
  carried.on('error', () => stream.destroy())
  stream.on('error', () => carried.destroy())
  carried.pipe(stream)
  stream.pipe(carried)
}

/**
 * Dial over the wire: resolves to the byte stream once the far side says "open"; rejects
 * with a DialError whose code says why (the close code, or timeout/error for a far side
 * that never answers or refuses the upgrade).
 */
export function dialWebSocket(url: URL, opts: { headers: Record<string, string>; timeoutMs: number; ws?: ClientOptions }): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ...opts.ws, headers: opts.headers, perMessageDeflate: false, followRedirects: false })
    let settled = false
    const fail = (code: DialFailure) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      ws.terminate()
      reject(new DialError(code))
    }
    const timer = setTimeout(() => fail('timeout'), opts.timeoutMs)
    ws.once('unexpected-response', () => fail('error'))
    ws.once('error', () => fail('error'))
    ws.once('close', (code) => fail(FAILURE_OF_CLOSE[code] ?? 'closed'))
    ws.once('message', (data, isBinary) => {
      if (settled) return
      if (isBinary || String(data) !== 'open') return fail('error')
      settled = true
      clearTimeout(timer)
      const stream = createWebSocketStream(ws)
      // a stream error is seen by whoever pipes it; unhandled it would crash the process
      stream.on('error', () => {})
      resolve(stream)
    })
  })
}
