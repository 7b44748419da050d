// An operation's contract: what both sides of the REST/MCP boundary agree on — its
// name, the scopes it needs, its input and output schemas and its REST binding. The
// api-server implements a contract (api-server/operations/), the SDK and the OpenAPI
// document are derived from it, the MCP tool list is generated from it. Nothing here
// knows about the server: this folder imports only zod.
import type { z } from 'zod'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** MCP tool annotations (hints to the client; see the MCP specification's ToolAnnotations). */
export interface ToolAnnotations {
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

export interface OperationContract<S extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType, N extends string = string> {
  /** the MCP tool name; also the SDK method and OpenAPI operationId */
  name: N
  description: string
  /** every scope listed is required */
  scopes: readonly string[]
  input: S
  /** the success body; z.void() for a 204 (no content) */
  output: O
  /**
   * bodyLimit: the route's own request body limit in bytes, when not the server's (1 MB).
   * pendingStatus: a second success status (202) for work accepted but not finished in
   * time — the same body, with Location and Retry-After.
   */
  rest?: { method: HttpMethod; path: string; status?: number; bodyLimit?: number; pendingStatus?: 202 }
  /** false for REST-only operations (not counted among the MCP tools) */
  mcp?: boolean
  /** input fields only the REST door accepts (e.g. the SDK's optional agent); the MCP tool never has them */
  restOnlyFields?: readonly string[]
  annotations?: ToolAnnotations
  /**
   * The MCP tool's structuredContent when it differs from `output` (an object schema):
   * e.g. a screenshot's metadata, where the image content already carries the bytes. An
   * operation that declares it returns that content from its toMcp.
   */
  mcpOutput?: z.ZodObject
}

export type AnyContract = OperationContract<any, any, string>

export function defineContract<S extends z.ZodObject, O extends z.ZodType, const N extends string>(c: OperationContract<S, O, N>): OperationContract<S, O, N> {
  return c
}

/** Whether a contract's success carries no body (204): its output is z.void(). */
export function isNoContent(c: { output: z.ZodType }): boolean {
  const type = c.output._zod.def.type
  return type === 'void' || type === 'undefined'
}

export type InputOfContract<C extends AnyContract> = z.input<C['input']>
export type OutputOfContract<C extends AnyContract> = z.output<C['output']>
