// The MCP door: Streamable HTTP on /mcp, stateless (a fresh MCP server per request), Bearer
// auth, tools generated from the operation registry. Transport checks (origin, Bearer, batch
// cap, scopes, params) answer before any method runs; a tool's own input rules answer a tool
// error instead, so a model can read it and correct itself (SEP-1303).
// Design: docs/mcp.md#mcp-transport-rules
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
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
import { errors, isApiError, rpcErrors, rpcStatus, type ApiError } from '../../contracts/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { requireAuth, resourceMetadataUrl } from '../door-kit/auth-hook.ts'
import { describeIssues, findBadString, parseInput } from '../door-kit/validate.ts'
import { outputIssues, outputMismatch, type DoorOptions } from '../door-kit/output-check.ts'
import { requireJsonBody } from '../door-kit/json-only.ts'
import { isNoContent } from '../../contracts/operations/types.ts'
import { rebindingGuard } from './origin.ts'
import { ELICITING_TOOLS, ElicitationMemo, isInitialize } from './elicitation.ts'
import type { UrlElicitation } from '../operations/types.ts'
import { Readable } from 'node:stream'
import type { ReadableStream } from 'node:stream/web'
import { tracedOperation } from '../door-kit/tracing.ts'
import { PRODUCT_VERSION } from '../../contracts/version.ts'

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
  return rpcErrors.mcpInvalidParams(message)
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
  return op.input.omit(Object.fromEntries(op.restOnlyFields.map((f: string) => [f, true])))
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>
  // the dialect is MCP's default (2020-12); the SDK's Ajv would look the URI up and fail
  delete json.$schema
  return json
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

function errorResult(e: ApiError): McpContent & { isError: true } {
  const body = e.toBody()
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ status: e.status, ...body }) }], structuredContent: { status: e.status, ...body } }
}

/** A result as a tool result: the operation's toMcp, else its JSON as text and as structuredContent. */
function toolResult({ op, output }: Tool, result: unknown): McpContent {
  const structured = output.shape === 'ok' ? { ok: true } : output.shape === 'wrapped' ? { result } : (result as Record<string, unknown>)
  if (op.toMcp) {
    const content = op.toMcp(result)
    return content.structuredContent ? content : { ...content, structuredContent: structured }
  }
  return { content: [{ type: 'text', text: JSON.stringify(output.shape === 'ok' ? structured : result) }], structuredContent: structured }
}

interface Tool {
  op: AnyOperation
  output: ToolOutput
}

/** What every per-request server shares: built once, because the set of tools is closed. */
interface Door {
  byName: Map<string, Tool>
  /** tools/list answer; JSON Schema generation costs ~1 ms per request if redone */
  descriptors: ReturnType<typeof toolDescriptor>[]
  /** the SDK builds a fresh Ajv (with its formats) per Server unless handed one */
  validator: AjvJsonSchemaValidator
  checkOutput: boolean
}

/** Builds a call's URL elicitation, when its client declared URL elicitation (elicitation.ts). */
type Elicit = (requestId: string | number, progressToken: string | number | undefined, signal: AbortSignal) => UrlElicitation

function buildServer(services: Services, door: Door, auth: AuthContext, req: FastifyRequest, elicit?: Elicit) {
  const { byName, descriptors } = door
  const server = new Server({ name: 'nightjar', version: PRODUCT_VERSION }, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: door.validator })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: descriptors }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name)
    try {
      // an unknown tool is a protocol error (MCP tools: "Unknown tools" → -32602)
      if (!tool) {
        const e = rpcErrors.mcpUnknownTool()
        throw new RpcError(e.code, e.message, e.data)
      }
      const { op } = tool
      if (!hasScopes(auth.scopes, op.scopes)) throw errors.missingScope(op.scopes.filter((s: string) => !auth.scopes.has(s)).join(' '))
      const input = parseInput(mcpInput(op), request.params.arguments ?? {})
      // what the call asked its client ends with the call: an answer still awaited is dropped
      const callOver = new AbortController()
      const elicitation = elicit && ELICITING_TOOLS.has(op.name)
        ? elicit(extra.requestId, request.params._meta?.progressToken, AbortSignal.any([extra.signal, callOver.signal]))
        : undefined
      const result = await tracedOperation(op.name, 'mcp', () => op.handler({ auth, services, log: req.log, via: 'mcp', ip: req.ip, ...(elicitation ? { elicitation } : {}) }, input))
        .finally(() => callOver.abort())
      const content = toolResult(tool, result)
      if (door.checkOutput) {
        const issues = outputIssues(tool.output.schema, content.structuredContent)
        if (issues) throw outputMismatch(req.log, op.name, issues)
      }
      return content as never
    } catch (e) {
      if (e instanceof RpcError) throw e
      if (isApiError(e)) return errorResult(e) as never
      req.log.error({ err: e, tool: request.params.name }, 'tool failed')
      return errorResult(errors.internal()) as never
    }
  })
  return server
}

/**
 * Takes out of a body the JSON-RPC messages whose params are an array: each request among
 * them gets its -32602 here (a notification gets nothing, as always). `body` is what is
 * left for the transport — undefined when nothing is.
 */
export function splitPositional(raw: unknown): { body: unknown; refused: Array<{ jsonrpc: '2.0'; id: string | number | null; error: ReturnType<typeof invalidParams> }> } {
  const positional = (m: unknown): m is { id?: unknown; params: unknown[] } =>
    typeof m === 'object' && m !== null && !Array.isArray(m) && Array.isArray((m as { params?: unknown }).params)
  const messages = Array.isArray(raw) ? raw : [raw]
  if (!messages.some(positional)) return { body: raw, refused: [] }
  const refused = messages.filter(positional).filter((m) => m.id !== undefined).map((m) => ({
    jsonrpc: '2.0' as const,
    id: typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null,
    error: invalidParams('invalid params: params: must be an object (MCP params are named)'),
  }))
  const rest = messages.filter((m) => !positional(m))
  return { body: Array.isArray(raw) ? (rest.length ? rest : undefined) : undefined, refused }
}

/** A tools/call for a tool the credential's scopes do not cover is refused at the HTTP layer (MCP step-up). */
function scopeChallenge(services: Services, byName: Map<string, Tool>, auth: AuthContext, body: unknown): ApiError | null {
  const msg = body as { method?: string; params?: { name?: string } } | undefined
  if (!msg || Array.isArray(msg) || msg.method !== 'tools/call') return null
  const op = msg.params?.name ? byName.get(msg.params.name)?.op : undefined
  if (!op || hasScopes(auth.scopes, op.scopes)) return null
  const err = errors.missingScope(op.scopes.filter((s: string) => !auth.scopes.has(s)).join(' '))
  err.headers['www-authenticate'] =
    `Bearer error="insufficient_scope", scope="${op.scopes.join(' ')}", resource_metadata="${resourceMetadataUrl(services)}"`
  return err
}

export function registerMcp(app: FastifyInstance, services: Services, ops: readonly AnyOperation[], opts: DoorOptions = {}) {
  const tools: Tool[] = mcpTools(ops).map((op) => {
    // the default content cannot be an mcpOutput: the operation must say how its result reads
    if (op.mcpOutput && !op.toMcp) throw new Error(`${op.name}: an mcpOutput needs a toMcp that returns it`)
    return { op, output: toolOutput(op) }
  })
  const byName = new Map(tools.map((tool) => [tool.op.name, tool]))
  const door: Door = {
    byName,
    descriptors: tools.map((tool) => toolDescriptor(tool.op, tool.output)),
    validator: new AjvJsonSchemaValidator(),
    checkOutput: opts.checkOutput ?? false,
  }
  const memo = new ElicitationMemo({ db: services.db, now: services.now })
  const guard = rebindingGuard(services.config.baseUrl, services.config.mcpAllowedOrigins ?? [])
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const rebinding = guard.check(req.headers.host, req.headers.origin)
    if (rebinding) throw rebinding
    const auth = await requireAuth(services, req)
    if (req.method !== 'POST') {
      // stateless server: no standalone SSE stream and no sessions to delete
      throw errors.methodNotAllowed('POST').withHeaders({ allow: 'POST' })
    }
    if (Array.isArray(req.body) && req.body.length > MAX_BATCH) {
      return reply.code(rpcStatus('mcpBatchTooLarge')).send({ jsonrpc: '2.0', id: null, error: rpcErrors.mcpBatchTooLarge(MAX_BATCH) })
    }
    // JSON-RPC 2.0 §6: a batch is an array with at least one value
    if (Array.isArray(req.body) && req.body.length === 0) {
      return reply.code(rpcStatus('mcpEmptyBatch')).send({ jsonrpc: '2.0', id: null, error: rpcErrors.mcpEmptyBatch() })
    }
    // params by position are answered here, each with -32602: the SDK's parser would call
    // the whole POST unreadable (-32700), the batch's good messages included
    const { body, refused } = splitPositional(req.body)
    if (refused.length && !Array.isArray(req.body)) return reply.code(rpcStatus('mcpInvalidParams')).send(refused[0])
    if (body === undefined) return refused.length ? reply.code(200).send(refused) : reply.code(202).send()
    const challenge = scopeChallenge(services, byName, auth, body)
    if (challenge) throw challenge
    // initialize may create elicitation state: a budget per credential, in the shared store
    if (isInitialize(body)) {
      const verdict = await services.limits.mcpInitialize.hit(`${auth.orgId}/${auth.principal.credentialId}`)
      if (!verdict.allowed) throw errors.mcpInitializeThrottled(verdict.retryAfterSecs)
    }
    // a client's answer to an elicitation/create goes to the call that asked, on any replica (elicitation.ts)
    if (await memo.takeAnswers(auth, body)) return reply.code(202).send()
    // a call that may send its client to a URL answers on an SSE stream, if the client can be asked
    const call = body as { method?: unknown; params?: { name?: unknown } }
    const eliciting = !Array.isArray(body) && call?.method === 'tools/call' && ELICITING_TOOLS.has(String(call.params?.name))
      && await memo.canAsk(auth, typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : undefined)
    const elicit: Elicit | undefined = eliciting ? (requestId, progressToken, signal) => memo.forCall(auth, transport, requestId, progressToken, signal) : undefined
    const server = buildServer(services, door, auth, req, elicit)
    // the web-standard transport takes the body Fastify already parsed: no second pass
    // over the request stream and no Node↔fetch adapter on every call
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !eliciting })
    const closeAll = async () => {
      await transport.close().catch(() => {}) // the reply is sent; a per-request transport that fails to close holds nothing
      await server.close().catch(() => {}) // likewise: a closing failure of a per-request server loses nothing
    }
    let streaming = false
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
      const response = await transport.handleRequest(request, { parsedBody: body })
      if (eliciting && response.body && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        // the call's events go out as they come; the server closes when the stream ends or the client hangs up
        streaming = true
        reply.raw.once('close', () => { void closeAll() })
        reply.code(response.status)
        response.headers.forEach((value, key) => { reply.header(key, value) })
        return reply.send(Readable.fromWeb(response.body as ReadableStream))
      }
      // a client that declared URL elicitation gets a session id naming that, and nothing else
      const memoId = response.status === 200 ? await memo.remember(auth, body) : null
      if (memoId) reply.header('mcp-session-id', memoId)
      if (refused.length && (response.status === 200 || response.status === 202)) {
        // the batch's answers, and the refusals made here (JSON responses: enableJsonResponse)
        // (the SDK answers a batch that leaves one response with that response alone)
        const answered: unknown = response.status === 200 ? await response.json() : []
        return reply.code(200).send([...(Array.isArray(answered) ? answered : [answered]), ...refused])
      }
      reply.code(response.status)
      response.headers.forEach((value, key) => { reply.header(key, value) })
      return reply.send(response.body ? Buffer.from(await response.arrayBuffer()) : undefined)
    } finally {
      if (!streaming) await closeAll()
    }
  }
  // a body is JSON or 415 before it is parsed (forms are parsed app-wide, for the console)
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', onRequest: requireJsonBody, handler: handle })
}
