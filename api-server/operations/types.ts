// An operation is one object: its name, the scopes it needs, its input schema,
// an optional REST binding and its handler. REST routes, MCP tools, the OpenAPI
// document and the SDK are all generated from the registry of operations.
import type { z } from 'zod'
import type { AuthContext } from '../auth/context.ts'
import type { Services } from '../services.ts'
import type { FastifyBaseLogger } from 'fastify'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface OpContext {
  auth: AuthContext
  services: Services
  log: FastifyBaseLogger
  via: 'rest' | 'mcp'
  /** how the session was admitted, for propagation checks */
  ip?: string
}

export interface McpContent {
  content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string } | { type: 'resource'; resource: { uri: string; blob: string; mimeType: string } }>
  structuredContent?: Record<string, unknown>
}

export interface Operation<S extends z.ZodObject = z.ZodObject, O = unknown, N extends string = string> {
  /** the MCP tool name; also the SDK method and OpenAPI operationId */
  name: N
  description: string
  /** every scope listed is required */
  scopes: readonly string[]
  input: S
  rest?: { method: HttpMethod; path: string; status?: number }
  /** false for REST-only operations (not counted among the MCP tools) */
  mcp?: boolean
  /** input fields only the REST door accepts (e.g. the SDK's optional agent); the MCP tool never has them */
  restOnlyFields?: readonly string[]
  handler: (ctx: OpContext, input: z.infer<S>) => Promise<O>
  /** how the result reads as an MCP tool result; JSON text by default */
  toMcp?: (result: O) => McpContent
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any, string>

export function defineOperation<S extends z.ZodObject, O, const N extends string>(op: Operation<S, O, N>): Operation<S, O, N> {
  return op
}
