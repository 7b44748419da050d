// The MCP door: Streamable HTTP on /mcp, stateless (a fresh MCP server per
// request), Bearer auth. Tools are generated from the operation registry, so the
// set is closed; a tool the caller's scopes do not allow is listed but its call
// is refused with 403 and a WWW-Authenticate insufficient_scope challenge.
//
// In front of the SDK, in this order: the Host/Origin check (origin.ts; 403 before
// authentication), the Bearer check (401), the batch cap (MAX_BATCH messages in one
// POST; more → one JSON-RPC -32600 error, nothing executed), the scope challenge, and
// then, per request message, the params check: strings that are not well formed (NUL,
// lone surrogates) anywhere in params, or params that break the method's schema
// (tools/call with a non-object `arguments`, a non-string `name`, …) → -32602 with a
// readable, value-free message, before the method runs. A tool's own input rules are
// checked by its zod schema and answer a tool error (isError, status 400) instead, so
// a model can read it and correct itself (MCP 2025-11-25, SEP-1303).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema, isJSONRPCRequest,
  type JSONRPCMessage, type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { AnyOperation, McpContent } from '../operations/types.ts'
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { ApiError, isApiError, missingScope } from '../../contracts/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { requireAuth, resourceMetadataUrl } from '../http/auth-hook.ts'
import { describeIssues, findBadString, parseInput } from '../http/validate.ts'
import { rebindingGuard } from './origin.ts'

/** The most JSON-RPC messages one POST may carry; a longer batch is refused whole. */
export const MAX_BATCH = 20

/** A JSON-RPC error the SDK passes through as is (its McpError prefixes the message). */
class RpcError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.code = code
    this.data = data
  }
}

/** -32602 with the service's error body as data, like a tool error's structuredContent. */
function invalidParams(message: string) {
  return { code: ErrorCode.InvalidParams, message, data: { status: 400, error: { code: 'bad_request', message } } }
}

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
  return op.input.omit(Object.fromEntries(op.restOnlyFields.map((f) => [f, true])))
}

export function toolDescriptor(op: AnyOperation) {
  const inputSchema = z.toJSONSchema(mcpInput(op), { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  delete inputSchema.$schema
  return { name: op.name, description: `${op.description} (scope: ${op.scopes.join(' ') || 'none'})`, inputSchema }
}

function errorResult(e: ApiError): McpContent & { isError: true } {
  const body = e.toBody()
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ status: e.status, ...body }) }], structuredContent: { status: e.status, ...body } }
}

function defaultContent(result: unknown): McpContent {
  if (result === undefined) return { content: [{ type: 'text', text: '{"ok":true}' }], structuredContent: { ok: true } }
  const structured = result !== null && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : { result }
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: structured }
}

/** What every per-request server shares: built once, because the set of tools is closed. */
interface Door {
  byName: Map<string, AnyOperation>
  /** tools/list answer; JSON Schema generation costs ~1 ms per request if redone */
  descriptors: ReturnType<typeof toolDescriptor>[]
  /** the SDK builds a fresh Ajv (with its formats) per Server unless handed one */
  validator: AjvJsonSchemaValidator
}

function buildServer(services: Services, door: Door, auth: AuthContext, req: FastifyRequest) {
  const { byName, descriptors } = door
  const server = new Server({ name: 'nightjar', version: '0.1.0' }, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: door.validator })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: descriptors }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const op = byName.get(request.params.name)
    try {
      // an unknown tool is a protocol error (MCP tools: "Unknown tools" → -32602)
      if (!op) throw new RpcError(ErrorCode.InvalidParams, 'unknown tool', { status: 404, error: { code: 'not_found', message: 'unknown tool' } })
      if (!hasScopes(auth.scopes, op.scopes)) throw missingScope(op.scopes.filter((s) => !auth.scopes.has(s)))
      const input = parseInput(mcpInput(op), request.params.arguments ?? {})
      const result = await op.handler({ auth, services, log: req.log, via: 'mcp', ip: req.ip }, input)
      return (op.toMcp ? op.toMcp(result) : defaultContent(result)) as never
    } catch (e) {
      if (e instanceof RpcError) throw e
      if (isApiError(e)) return errorResult(e) as never
      req.log.error({ err: e, tool: request.params.name }, 'tool failed')
      return errorResult(new ApiError(500, 'internal', 'internal error')) as never
    }
  })
  return server
}

/** A tools/call for a tool the credential's scopes do not cover is refused at the HTTP layer (MCP step-up). */
function scopeChallenge(services: Services, byName: Map<string, AnyOperation>, auth: AuthContext, body: unknown): ApiError | null {
  const msg = body as { method?: string; params?: { name?: string } } | undefined
  if (!msg || Array.isArray(msg) || msg.method !== 'tools/call') return null
  const op = msg.params?.name ? byName.get(msg.params.name) : undefined
  if (!op || hasScopes(auth.scopes, op.scopes)) return null
  const err = missingScope(op.scopes.filter((s) => !auth.scopes.has(s)))
  err.headers['www-authenticate'] =
    `Bearer error="insufficient_scope", scope="${op.scopes.join(' ')}", resource_metadata="${resourceMetadataUrl(services)}"`
  return err
}

export function registerMcp(app: FastifyInstance, services: Services, ops: readonly AnyOperation[]) {
  const tools = mcpTools(ops)
  const byName = new Map(tools.map((op) => [op.name, op]))
  const door: Door = { byName, descriptors: tools.map(toolDescriptor), validator: new AjvJsonSchemaValidator() }
  const guard = rebindingGuard(services.config.baseUrl, services.config.mcpAllowedOrigins ?? [])
  const handle = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const rebinding = guard.check(req.headers.host, req.headers.origin)
    if (rebinding) throw rebinding
    const auth = await requireAuth(services, req)
    if (req.method !== 'POST') {
      // stateless server: no standalone SSE stream and no sessions to delete
      return reply.code(405).header('allow', 'POST').send({ error: { code: 'method_not_allowed', message: 'use POST' } })
    }
    if (Array.isArray(req.body) && req.body.length > MAX_BATCH) {
      return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: `batch too large: at most ${MAX_BATCH} messages in one request` } })
    }
    const challenge = scopeChallenge(services, byName, auth, req.body)
    if (challenge) throw challenge
    const server = buildServer(services, door, auth, req)
    // the web-standard transport takes the body Fastify already parsed: no second pass
    // over the request stream and no Node↔fetch adapter on every call
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    // every request message passes the params check before the server sees it; a refused
    // one is answered on the transport (the SDK matches the reply to its request id)
    const deliver = transport.onmessage
    transport.onmessage = (message: JSONRPCMessage, extra) => {
      if (isJSONRPCRequest(message)) {
        const problem = paramsProblem(message)
        if (problem) {
          // a client that hung up cannot receive its error; nothing ran, so nothing is lost
          transport.send({ jsonrpc: '2.0', id: message.id, error: invalidParams(problem) }).catch(() => {})
          return
        }
      }
      deliver?.(message, extra)
    }
    try {
      const headers = new Headers()
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v)
      const request = new Request(new URL(req.url, 'http://mcp.local'), { method: 'POST', headers })
      const response = await transport.handleRequest(request, { parsedBody: req.body })
      reply.code(response.status)
      response.headers.forEach((value, key) => reply.header(key, value))
      return reply.send(response.body ? Buffer.from(await response.arrayBuffer()) : undefined)
    } finally {
      await transport.close().catch(() => {})
      await server.close().catch(() => {})
    }
  }
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler: handle })
}
