// The pod's way to the developer's machine: one WebSocket per connection to the
// api-server's egress relay (/ws/egress), authenticated with this pod's token.
// The relay answers "open" and then carries raw bytes, or closes with a code that
// says why (tunnel/ws-dial.ts); the code becomes the DialError `.code` the gateway maps.
import type { Duplex } from 'node:stream'
import type { TunnelDialer } from './egress-policy.ts'
import { DialError, dialWebSocket } from '../tunnel/ws-dial.ts'

export { DialError }

export class RelayTunnelDialer implements TunnelDialer {
  readonly #token: string
  private readonly relayUrl: string
  private readonly sessionId: () => string | undefined
  private readonly timeoutMs: number
  constructor(
    relayUrl: string,
    token: string,
    sessionId: () => string | undefined,
    timeoutMs = 15_000,
  ) {
    this.relayUrl = relayUrl
    this.sessionId = sessionId
    this.timeoutMs = timeoutMs
    this.#token = token
  }

  dial(host: string, port: number): Promise<Duplex> {
    const session = this.sessionId()
    if (!session) return Promise.reject(new DialError('no_daemon'))
    const url = new URL(this.relayUrl)
    url.searchParams.set('session', session)
    url.searchParams.set('host', host)
    url.searchParams.set('port', String(port))
    return dialWebSocket(url, { headers: { authorization: `Bearer ${this.#token}` }, timeoutMs: this.timeoutMs })
  }
}
