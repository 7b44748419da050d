// Typed tunnel errors. A dial failure says *why* (the daemon reports refused, timeout,
// not_declared or unreachable distinctly) so the egress gateway can map it to the spec's
// net::ERR_CONNECTION_REFUSED / E_REACHABILITY_DENIED without parsing messages.
import type { OpenFailReason } from './frames.ts'
import type { ApiErrorKey } from '../contracts/errors.ts'

export type TunnelErrorCode =
  | OpenFailReason
  | 'no_daemon' // no daemon of the network is online
  | 'closed' // the tunnel connection went away under the stream
  | 'reset' // the peer aborted the stream (RST)

const MESSAGES: Record<TunnelErrorCode, string> = {
  refused: 'connection refused on the daemon machine',
  timeout: 'connection timed out',
  not_declared: 'host is not declared for this network',
  unreachable: 'host unreachable from the daemon machine',
  error: 'connection failed on the daemon machine',
  no_daemon: 'no daemon of this network is online',
  closed: 'tunnel connection closed',
  reset: 'stream reset by peer',
}

/**
 * The catalogue error (contracts/errors.ts) a caller sees when a navigation meets this
 * tunnel failure: an undeclared host is E_REACHABILITY_DENIED (reason host_not_declared,
 * ERR-28); every other failure is E_UPSTREAM NAVIGATION_FAILED with
 * net::ERR_CONNECTION_REFUSED or kin (ERR-29). TunnelErrors themselves never reach a caller.
 */
export const SURFACES_AS = {
  refused: 'navigationFailed',
  timeout: 'navigationFailed',
  not_declared: 'reachabilityDenied',
  unreachable: 'navigationFailed',
  error: 'navigationFailed',
  no_daemon: 'navigationFailed',
  closed: 'navigationFailed',
  reset: 'navigationFailed',
} as const satisfies Record<TunnelErrorCode, ApiErrorKey>

export class TunnelError extends Error {
  readonly code: TunnelErrorCode
  constructor(code: TunnelErrorCode, message: string = MESSAGES[code]) {
    super(message)
    this.name = 'TunnelError'
    this.code = code
  }
}

export function isTunnelError(e: unknown, code?: TunnelErrorCode): e is TunnelError {
  return e instanceof TunnelError && (code === undefined || e.code === code)
}
