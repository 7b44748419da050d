// The pod's way to the developer's machine: one WebSocket per connection to the
// api-server's egress relay (/ws/egress), authenticated with this pod's node token.
// The relay answers "open" and then carries raw bytes, or closes with a code that
// says why; the code becomes the TunnelError-style `.code` the gateway maps.
import { createWebSocketStream, WebSocket } from 'ws'
import type { Duplex } from 'node:stream'
import type { TunnelDialer } from './egress-policy.ts'

const CLOSE_CODES: Record<number, string> = {
  4403: 'not_declared',
  4404: 'no_daemon', // the session has no network: nothing to tunnel to
  4502: 'refused',
  4503: 'no_daemon',
  4504: 'timeout',
}

export class DialError extends Error {
  constructor(readonly code: string) {
    super(`tunnel dial failed: ${code}`)
    this.name = 'DialError'
  }
}

export class RelayTunnelDialer implements TunnelDialer {
  readonly #token: string
  constructor(
    private readonly relayUrl: string,
    token: string,
    private readonly sessionId: () => string | undefined,
    private readonly timeoutMs = 15_000,
  ) {
    this.#token = token
  }

  dial(host: string, port: number): Promise<Duplex> {
    const session = this.sessionId()
    if (!session) return Promise.reject(new DialError('no_daemon'))
    const url = new URL(this.relayUrl)
    url.searchParams.set('session', session)
    url.searchParams.set('host', host)
    url.searchParams.set('port', String(port))
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.#token}` }, perMessageDeflate: false })
      let settled = false
      const fail = (code: string) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        ws.terminate()
        reject(new DialError(code))
      }
      const timer = setTimeout(() => fail('timeout'), this.timeoutMs)
      ws.once('unexpected-response', () => fail('error'))
      ws.once('error', () => fail('error'))
      ws.once('close', (code) => fail(CLOSE_CODES[code] ?? 'closed'))
      ws.once('message', (data, isBinary) => {
        if (settled) return
        if (isBinary || String(data) !== 'open') return fail('error')
        settled = true
        clearTimeout(timer)
        const stream = createWebSocketStream(ws)
        stream.on('error', () => {})
        resolve(stream)
      })
    })
  }
}
