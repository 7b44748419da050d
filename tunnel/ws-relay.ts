// Relaying one WebSocket into another, shared by the two hops of CDP connect (the
// api-server's relay and the pod's filtering proxy): a send with backpressure and a
// close that never hangs on a silent peer.
import { WebSocket, type RawData } from 'ws'

/** unsent bytes past which the source is paused, and below which it resumes */
const HIGH_WATER = 8 * 1024 * 1024
const LOW_WATER = 1024 * 1024

/** send() with backpressure: past HIGH_WATER unsent bytes, `source` is paused until `to` drains. */
export function sender(to: WebSocket, source: WebSocket): (data: RawData | string) => void {
  return (data) => {
    if (to.readyState !== WebSocket.OPEN) return
    to.send(data as Buffer | string, { binary: false }, () => {
      if (source.isPaused && to.bufferedAmount < LOW_WATER && source.readyState === WebSocket.OPEN) source.resume()
    })
    if (to.bufferedAmount > HIGH_WATER && !source.isPaused) source.pause()
  }
}

/** Closes with `code` (or terminates one still connecting); a peer that never answers the close handshake does not hold the socket. */
export function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === WebSocket.CLOSED) return
  if (ws.readyState === WebSocket.CONNECTING) return ws.terminate()
  try {
    ws.close(code, reason)
  } catch {
    ws.terminate() // a code ws will not send: the socket goes anyway
  }
  setTimeout(() => ws.terminate(), 2000).unref()
}
