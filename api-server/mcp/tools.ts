// The MCP door's tools: descriptors generated from the operation registry (input, output
// and error schemas), results as tool results, which tools a credential sees and the scope
// check of a call. An OAuth token sees only the tools its grant allows: the consent page
// can never grant more, so a scope challenge for another tool could only loop.
// Design: docs/mcp.md#tools-and-scopes
import { z } from 'zod'
import { CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js'
import type { AnyOperation, McpContent } from '../operations/types.ts'
import type { AuthContext } from '../auth/context.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import { hasScopes, missingScopes, requireScopes } from '../auth/scopes.ts'
import { describeIssues, findBadString } from '../door-kit/validate.ts'
import { isNoContent } from '../../contracts/operations/types.ts'
import { contractJsonSchema } from '../../contracts/operations/json-schema.ts'

// the requests this server answers; a message whose params break its schema is refused
// before the SDK parses it (the SDK would answer -32603 with a raw zod dump)
type RequestSchema = { safeParse(v: unknown): { success: true } | { success: false; error: unknown } }
const REQUEST_SCHEMAS = new Map<string, RequestSchema>([
  ['initialize', InitializeRequestSchema as RequestSchema],
  ['ping', PingRequestSchema as RequestSchema],
  ['tools/list', ListToolsRequestSchema as RequestSchema],
  ['tools/call', CallToolRequestSchema as RequestSchema],
])

const PLAIN_TYPES: Record<string, string> = { record: 'an object', object: 'an object', string: 'a string', number: 'a number', int: 'an integer', boolean: 'a boolean', array: 'an array' }

/** Why a request's params are refused, value-free; null when they may go on. */
export function paramsProblem(message: JSONRPCRequest): string | null {
  const bad = findBadString(message.params)
  if (bad) return `invalid params: ${bad.path || 'params'}: ${bad.message}`
  const schema = REQUEST_SCHEMAS.get(message.method)
  if (!schema) return null
  const r = schema.safeParse(message)
  if (r.success) return null
  // the schema sees the whole message: report paths relative to params
  const error = r.error as z.ZodError
  const issues = error.issues.map((i) => {
    const path = i.path[0] === 'params' ? i.path.slice(1) : i.path
    // "expected record, received string" reads as zod's; say it plainly
    const expected = i.code === 'invalid_type' && !/received undefined/.test(i.message) ? PLAIN_TYPES[(i as { expected: string }).expected] : undefined
    return { ...i, path, message: expected ? `must be ${expected}` : i.message }
  })
  return `invalid params: ${describeIssues({ issues } as z.ZodError, 'params')}`
}

export function mcpTools(ops: readonly AnyOperation[]): AnyOperation[] {
  return ops.filter((op) => op.mcp !== false)
}

/** The input an operation accepts through MCP: its schema without REST-only fields. */
export function mcpInput(op: AnyOperation): z.ZodObject {
  if (!op.restOnlyFields?.length) return op.input
  return op.input.omit(Object.fromEntries(op.restOnlyFields.map((f: string) => [f, true])))
}

// without $schema (the SDK's Ajv would look the URI up and fail), in the spelling strict clients accept
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  return contractJsonSchema(schema, io)
}

/** Whether every value a JSON Schema admits is a JSON object. */
function objectOnly(json: Record<string, unknown>): boolean {
  if (json.type === 'object') return true
  const branches = (json.anyOf ?? json.oneOf) as Record<string, unknown>[] | undefined
  if (branches?.length && !json.type) return branches.every(objectOnly)
  return false
}

const OK = z.strictObject({ ok: z.literal(true) })

/** A tool error's structuredContent (errorResult): the REST error body with its status. */
const TOOL_ERROR = {
  type: 'object',
  description: 'a tool error (isError: true): the REST error body with its HTTP status',
  properties: {
    status: { type: 'integer' },
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, reason: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['status', 'error'],
}

/**
 * A tool's structuredContent: its schema (an object at the root, as MCP requires) and
 * how a result becomes it when the operation has no toMcp — as is when the output is
 * an object (or a union of objects), {ok: true} for a 204 (no content), {result} else.
 */
export interface ToolOutput {
  /** what a successful call's structuredContent is (checkOutput holds results to it) */
  schema: z.ZodType
  shape: 'as-is' | 'ok' | 'wrapped'
}

export function toolOutput(op: AnyOperation): ToolOutput {
  if (op.mcpOutput) return { schema: op.mcpOutput, shape: 'as-is' }
  if (isNoContent(op)) return { schema: OK, shape: 'ok' }
  if (objectOnly(jsonSchema(op.output, 'output'))) return { schema: op.output, shape: 'as-is' }
  return { schema: z.strictObject({ result: op.output }), shape: 'wrapped' }
}

/**
 * The outputSchema a tool lists: its success, or the tool error. The error is named
 * because MCP SDK clients (TypeScript 1.x) check an error's structuredContent against
 * the outputSchema too, and would throw on every tool error otherwise.
 */
export function outputSchema(output: ToolOutput): Record<string, unknown> {
  const { $defs, ...success } = jsonSchema(output.schema, 'output')
  const branches = success.anyOf && Object.keys(success).length === 1 ? (success.anyOf as unknown[]) : [success]
  return { type: 'object', anyOf: [...branches, TOOL_ERROR], ...($defs ? { $defs } : {}) }
}

export function toolDescriptor(op: AnyOperation, output = toolOutput(op)) {
  return {
    name: op.name,
    // an operation with no declared scope decides itself (local_reach_ensure: networks:write or a reach grant); its description says so
    description: op.scopes.length ? `${op.description} (scope: ${op.scopes.join(' ')})` : op.description,
    inputSchema: jsonSchema(mcpInput(op), 'input'),
    outputSchema: outputSchema(output),
    ...(op.annotations ? { annotations: op.annotations } : {}),
  }
}

export function errorResult(e: ApiError): McpContent & { isError: true } {
  const body = e.toBody()
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ status: e.status, ...body }) }], structuredContent: { status: e.status, ...body } }
}

/** A result as a tool result: the operation's toMcp, else its JSON as text and as structuredContent. */
export function toolResult({ op, output }: Tool, result: unknown): McpContent {
  const structured = output.shape === 'ok' ? { ok: true } : output.shape === 'wrapped' ? { result } : (result as Record<string, unknown>)
  if (op.toMcp) {
    const content = op.toMcp(result)
    return content.structuredContent ? content : { ...content, structuredContent: structured }
  }
  return { content: [{ type: 'text', text: JSON.stringify(output.shape === 'ok' ? structured : result) }], structuredContent: structured }
}

export interface Tool {
  op: AnyOperation
  output: ToolOutput
}

/** The tools a credential is shown: all of them, but to an OAuth token only those its grant allows. */
export function toolsFor<T extends { op: AnyOperation }>(tools: readonly T[], auth: AuthContext): readonly T[] {
  if (auth.principal.kind !== 'oauth') return tools
  return tools.filter((tool) => hasScopes(auth.scopes, tool.op.scopes))
}

/**
 * The scope check of a tool call. An OAuth token lacking a scope gets a tool error saying
 * OAuth cannot grant it: its grant already holds every scope the consent page can give.
 */
export function requireToolScopes(auth: AuthContext, op: AnyOperation): void {
  if (auth.principal.kind !== 'oauth') return requireScopes(auth.scopes, op.scopes)
  const missing = missingScopes(auth.scopes, op.scopes)
  if (missing.length) throw errors.scopeNotGrantable(missing.join(' '))
}
