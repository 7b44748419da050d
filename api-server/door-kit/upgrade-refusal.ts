// A refusal of a WebSocket upgrade before it is accepted, written straight to the socket:
// the REST door's JSON error — status, headers and body alike — so a client that opens a
// CDP or live-view socket reads the same error a REST call would give. Shared by the CDP
// relay and the console's live view.
import http from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'

/** A refusal before the upgrade: the REST door's JSON error, status, headers and body alike. */
export function refuseJson(socket: Duplex, e: ApiError): void {
  if (socket.destroyed) return
  const body = JSON.stringify(e.toBody())
  const headers: Record<string, string | number> = { ...e.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }
  socket.end(`HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status] ?? 'Error'}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`)
}


/**
 * Admits an upgrade a door has taken: a socket error only drops the socket; a catalogue
 * refusal from `admit` is answered as JSON (refuseJson); anything else is logged
 * ("<what> upgrade failed") and answered as the catalogue's 500.
 */
export function admitUpgrade(socket: Duplex, log: FastifyBaseLogger, what: string, admit: () => Promise<void>): void {
  socket.on('error', () => socket.destroy())
  admit().catch((e) => {
    if (!isApiError(e)) log.error({ err: e }, `${what} upgrade failed`)
    refuseJson(socket, isApiError(e) ? e : errors.internal())
  })
}
