// An operation is a contract (contracts/operations/: name, scopes, input and output
// schemas, REST binding) plus the server's handler. REST routes, MCP tools and the
// OpenAPI document are all generated from the registry of operations; the SDK from
// the contracts alone.
import type { z } from 'zod'
import type { AuthContext } from '../auth/context.ts'
import type { Services } from '../services.ts'
import type { FastifyBaseLogger } from 'fastify'
import type { AnyContract, OperationContract } from '../../contracts/operations/types.ts'

export type { HttpMethod } from '../../contracts/operations/types.ts'

export interface OpContext {
  auth: AuthContext
  services: Services
  log: FastifyBaseLogger
  via: 'rest' | 'mcp'
  /** how the session was admitted, for propagation checks */
  ip?: string
  /** REST only: the request's Prefer header, and what the handler sets on the answer beyond its body */
  rest?: RestExchange
  /** set by the MCP door when the client declared URL elicitation (operations/elicit.ts) */
  elicitation?: UrlElicitation
}

export interface RestExchange {
  /** the Prefer request header (RFC 7240), if any */
  prefer?: string
  /** the answer's status when not the contract's (its pendingStatus) */
  status?: number
  /** extra answer headers (Location, Retry-After, Preference-Applied) */
  headers: Record<string, string>
  /** milliseconds since the request arrived (a bound on the answer counts from there, not from the handler) */
  elapsedMs?: () => number
}

/**
 * What an MCP client that declared URL elicitation (MCP 2025-11-25) lets a tool do while
 * its call is open: send the user to a page, and say when the page is done.
 */
export interface UrlElicitation {
  /** `elicitation/create` in mode url: the user's action, or null when no answer reaches this process */
  ask(params: { elicitationId: string; url: string; message: string }): Promise<'accept' | 'decline' | 'cancel' | null>
  /** `notifications/elicitation/complete` */
  complete(elicitationId: string): Promise<void>
  /** a progress notification, when the client sent a progressToken (keeps its request timer alive) */
  progress(message: string): Promise<void>
  /** aborts when the client hangs up */
  signal: AbortSignal
}

export interface McpContent {
  content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string } | { type: 'resource'; resource: { uri: string; blob: string; mimeType: string } }>
  structuredContent?: Record<string, unknown>
}

export interface Implementation<C extends AnyContract> {
  handler: (ctx: OpContext, input: z.output<C['input']>) => Promise<z.input<C['output']>>
  /** how the result reads as an MCP tool result; JSON text (and the result as structuredContent) by default */
  toMcp?: (result: z.output<C['output']>) => McpContent
}

export type Operation<C extends AnyContract = AnyContract> = C & Implementation<C>

export type AnyOperation = Operation<AnyContract>

/** Binds a contract to its handler. The contract stays the single statement of the wire. */
export function implement<C extends AnyContract>(contract: C, impl: Implementation<C>): Operation<C> {
  return { ...contract, ...impl }
}

/** Contract and handler in one literal (tests' ad hoc operations). */
export function defineOperation<S extends z.ZodObject, O extends z.ZodType, const N extends string>(
  op: OperationContract<S, O, N> & Implementation<OperationContract<S, O, N>>,
): Operation<OperationContract<S, O, N>> {
  return op
}
