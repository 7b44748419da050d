// What the two doors that relay a WebSocket to a browser pod (the CDP relay, the console's
// live view) hold alike: the WebSocket server that accepts their upgrades and the
// connections open now, so that closing the app ends each one and refuses new ones.
import { WebSocketServer } from 'ws'

export class RelayServer {
  readonly wss: WebSocketServer
  readonly #closers = new Set<() => void>()
  #closed = false

  /** `maxPayload`: the largest message a client may send */
  constructor(maxPayload: number) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false })
  }

  /** true once the app is closing: no new connection is admitted */
  get closed(): boolean {
    return this.#closed
  }

  /** Holds an open connection: `close` ends it if the app closes first. */
  hold(close: () => void): void {
    this.#closers.add(close)
  }

  /** The connection ended by itself: nothing to close any more. */
  drop(close: () => void): void {
    this.#closers.delete(close)
  }

  /** Ends every open connection and refuses new ones (the app is closing). */
  close(): void {
    this.#closed = true
    for (const close of [...this.#closers]) close()
    this.wss.close()
  }
}
