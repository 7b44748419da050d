// The shape of a catalogue entry, and the argument list its constructor takes.
import type { ErrorCode, OAuthErrorCode, SpecRow } from './rule.ts'

/**
 * A message: a fixed value-free text, or a builder whose parameters are named in
 * `args` (so docs/errors.md can print it with <placeholders>). A builder has a fixed
 * arity: no default or rest parameters.
 */
export type Message = string | ((...args: any[]) => string)

interface Common {
  status: number
  message: Message
  /** the builder's parameter names, in order (required when message is a builder) */
  args?: readonly string[]
  /** the checklist rows this error serves, or null for an error of our own */
  spec: readonly SpecRow[] | null
  /** when it is returned */
  when: string
  /** fixed response headers */
  headers?: Readonly<Record<string, string>>
  /**
   * Retry-After: a fixed number of seconds, or 'arg': the builder's first parameter
   * (named retryAfterSecs) is the wait, rounded up, at least 1.
   */
  retryAfter?: number | 'arg'
}

/** The service's JSON errors: REST, MCP tool errors, the pod API. */
export interface ApiEntry extends Common {
  code: ErrorCode
  /** a fixed reason, one of a set (the constructor's first argument), or none */
  reason: string | readonly string[] | null
  /** a value-free audit field the body carries (the constructor's last argument) */
  details?: 'host' | 'field_kind'
}

/** OAuth endpoints' RFC 6749 errors ({error, error_description}). */
export interface OAuthEntry extends Common {
  code: OAuthErrorCode
  reason: null
}

/** HTML pages (console sign-in, keys, consent, device verification) showing a message. */
export interface PageEntry extends Common {
  code: null
  reason: null
}

/** Plain-text refusals of a WebSocket upgrade (/ws/control, /ws/egress). */
export interface UpgradeEntry extends Common {
  code: null
  reason: null
}

/** JSON-RPC protocol errors of the MCP door; `data` carries the service body when set. */
export interface RpcEntry extends Common {
  code: number
  reason: null
  /** the service error code carried in data.error, or null for no data */
  data: ErrorCode | null
}

export type AnyEntry = ApiEntry | OAuthEntry | PageEntry | UpgradeEntry | RpcEntry

type ReasonArg<E> = E extends { reason: infer R } ? (R extends readonly (infer U)[] ? [reason: U] : []) : []
type MessageArgs<E> = E extends { message: (...a: infer A) => string } ? A : []
type DetailArg<E> = E extends { details: 'host' | 'field_kind' } ? [detail: string] : []

/** A constructor's arguments: the reason (when one of a set), the message's, the audit field. */
export type ArgsOf<E> = [...ReasonArg<E>, ...MessageArgs<E>, ...DetailArg<E>]
