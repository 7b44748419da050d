// The MCP door: Streamable HTTP on /mcp, stateless (a fresh MCP server per request), Bearer
// auth, tools generated from the operation registry (tools.ts). Transport checks (origin,
// Bearer, batch cap, scopes, params; checks.ts) answer before any method runs; a tool's own
// input rules answer a tool error instead, so a model can read it and correct itself (SEP-1303).
// Design: docs/mcp.md#mcp-transport-rules
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema, isJSONRPCRequest, type CallToolRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { AnyOperation, McpContent, UrlElicitation } from '../operations/types.ts'
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { errors, isApiError, rpcErrors } from '../../contracts/errors.ts'
import { parseInput } from '../door-kit/validate.ts'
import { outputIssues, outputMismatch, type DoorOptions } from '../door-kit/output-check.ts'
import { requireJsonBody } from '../door-kit/json-only.ts'
import { runChecks } from '../door-kit/pipeline.ts'
import { tracedOperation } from '../door-kit/tracing.ts'
import { PRODUCT_VERSION } from '../../contracts/version.ts'
import { rebindingGuard } from './origin.ts'
import { ELICITING_TOOLS, ElicitationMemo } from './elicitation.ts'
import { MCP_CHECKS, authOf, type McpDoorContext, type McpRequest } from './checks.ts'
import {
  errorResult, mcpInput, mcpTools, paramsProblem, requireToolScopes, toolDescriptor, toolOutput, toolResult, toolsFor, type Tool,
} from './tools.ts'
import { Readable } from 'node:stream'
import type { ReadableStream } from 'node:stream/web'

export { MAX_BATCH } from './checks.ts'

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

interface ListedTool extends Tool {
  /** the tools/list entry; JSON Schema generation costs ~1 ms per request if redone */
  descriptor: ReturnType<typeof toolDescriptor>
}

/** What every per-request server shares: built once, because the set of tools is closed. */
interface Door extends McpDoorContext {
  tools: readonly ListedTool[]
  byName: ReadonlyMap<string, ListedTool>
  /** the SDK builds a fresh Ajv (with its formats) per Server unless handed one */
  validator: AjvJsonSchemaValidator
  checkOutput: boolean
}

/** Builds a call's URL elicitation, when its client declared URL elicitation (elicitation.ts). */
type Elicit = (requestId: string | number, progressToken: string | number | undefined, signal: AbortSignal) => UrlElicitation

interface CallScope {
  door: Door
  auth: AuthContext
  req: FastifyRequest
  elicit?: Elicit
}

async function callTool(c: CallScope, tool: ListedTool, request: CallToolRequest, extra: RequestHandlerExtra<never, never>): Promise<McpContent> {
  const { op } = tool
  requireToolScopes(c.auth, op)
  const input = parseInput(mcpInput(op), request.params.arguments ?? {})
  // what the call asked its client ends with the call: an answer still awaited is dropped
  const callOver = new AbortController()
  const elicitation = c.elicit && ELICITING_TOOLS.has(op.name)
    ? c.elicit(extra.requestId, request.params._meta?.progressToken, AbortSignal.any([extra.signal, callOver.signal]))
    : undefined
  const context = { auth: c.auth, services: c.door.services, log: c.req.log, via: 'mcp' as const, ip: c.req.ip, ...(elicitation ? { elicitation } : {}) }
  const result = await tracedOperation(op.name, 'mcp', () => op.handler(context, input)).finally(() => callOver.abort())
  const content = toolResult(tool, result)
  if (c.door.checkOutput) {
    const issues = outputIssues(tool.output.schema, content.structuredContent)
    if (issues) throw outputMismatch(c.req.log, op.name, issues)
  }
  return content
}

function buildServer(c: CallScope) {
  const server = new Server({ name: 'nightjar', version: PRODUCT_VERSION }, { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: c.door.validator })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolsFor(c.door.tools, c.auth).map((tool) => tool.descriptor) }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = c.door.byName.get(request.params.name)
    try {
      // an unknown tool is a protocol error (MCP tools: "Unknown tools" → -32602)
      if (!tool) {
        const e = rpcErrors.mcpUnknownTool()
        throw new RpcError(e.code, e.message, e.data)
      }
      return await callTool(c, tool, request, extra as RequestHandlerExtra<never, never>) as never
    } catch (e) {
      if (e instanceof RpcError) throw e
      if (isApiError(e)) return errorResult(e) as never
      c.req.log.error({ err: e, tool: request.params.name }, 'tool failed')
      return errorResult(errors.internal()) as never
    }
  })
  return server
}

/** Every request message passes the params check before the server sees it. */
function checkParamsFirst(transport: WebStandardStreamableHTTPServerTransport) {
  const deliver = transport.onmessage
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    if (isJSONRPCRequest(message)) {
      const problem = paramsProblem(message)
      if (problem) {
        // a refused one is answered on the transport (the SDK matches the reply to its
        // request id); a client that hung up cannot receive it, and nothing ran, so nothing is lost
        transport.send({ jsonrpc: '2.0', id: message.id, error: rpcErrors.mcpInvalidParams(problem) }).catch(() => {})
        return
      }
    }
    deliver?.(message, extra)
  }
}

/** Does this body call a tool that may send its client to a URL, from a client that can be asked? */
async function isEliciting(door: Door, r: McpRequest): Promise<boolean> {
  const call = r.body as { method?: unknown; params?: { name?: unknown } }
  const sessionId = r.req.headers['mcp-session-id']
  return !Array.isArray(r.body) && call?.method === 'tools/call' && ELICITING_TOOLS.has(String(call.params?.name))
    && await door.memo.canAsk(authOf(r), typeof sessionId === 'string' ? sessionId : undefined)
}

async function sendResponse(door: Door, r: McpRequest, response: Response, eliciting: boolean, closeAll: () => Promise<void>): Promise<{ reply: FastifyReply; streaming: boolean }> {
  const { reply } = r
  if (eliciting && response.body && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    // the call's events go out as they come; the server closes when the stream ends or the client hangs up
    reply.raw.once('close', () => { void closeAll() })
    reply.code(response.status)
    response.headers.forEach((value, key) => { reply.header(key, value) })
    return { reply: reply.send(Readable.fromWeb(response.body as ReadableStream)), streaming: true }
  }
  // a client that declared URL elicitation gets a session id naming that, and nothing else
  const memoId = response.status === 200 ? await door.memo.remember(authOf(r), r.body) : null
  if (memoId) reply.header('mcp-session-id', memoId)
  if (r.refused.length && (response.status === 200 || response.status === 202)) {
    // the batch's answers, and the refusals made here (JSON responses: enableJsonResponse)
    // (the SDK answers a batch that leaves one response with that response alone)
    const answered: unknown = response.status === 200 ? await response.json() : []
    return { reply: reply.code(200).send([...(Array.isArray(answered) ? answered : [answered]), ...r.refused]), streaming: false }
  }
  reply.code(response.status)
  response.headers.forEach((value, key) => { reply.header(key, value) })
  return { reply: reply.send(response.body ? Buffer.from(await response.arrayBuffer()) : undefined), streaming: false }
}

/** What passed every check: a fresh server and transport answer it. */
async function serve(door: Door, r: McpRequest) {
  const eliciting = await isEliciting(door, r)
  const auth = authOf(r)
  const elicit: Elicit | undefined = eliciting ? (requestId, progressToken, signal) => door.memo.forCall(auth, transport, requestId, progressToken, signal) : undefined
  const server = buildServer({ door, auth, req: r.req, elicit })
  // the web-standard transport takes the body Fastify already parsed: no second pass
  // over the request stream and no Node↔fetch adapter on every call
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !eliciting })
  const closeAll = async () => {
    await transport.close().catch(() => {}) // the reply is sent; a per-request transport that fails to close holds nothing
    await server.close().catch(() => {}) // likewise: a closing failure of a per-request server loses nothing
  }
  let streaming = false
  await server.connect(transport)
  checkParamsFirst(transport)
  try {
    const headers = new Headers()
    for (const [k, v] of Object.entries(r.req.headers)) if (typeof v === 'string') headers.set(k, v)
    const request = new Request(new URL(r.req.url, 'http://mcp.local'), { method: 'POST', headers })
    const response = await transport.handleRequest(request, { parsedBody: r.body })
    const sent = await sendResponse(door, r, response, eliciting, closeAll)
    streaming = sent.streaming
    return sent.reply
  } finally {
    if (!streaming) await closeAll()
  }
}

function buildDoor(services: Services, ops: readonly AnyOperation[], opts: DoorOptions): Door {
  const tools: ListedTool[] = mcpTools(ops).map((op) => {
    // the default content cannot be an mcpOutput: the operation must say how its result reads
    if (op.mcpOutput && !op.toMcp) throw new Error(`${op.name}: an mcpOutput needs a toMcp that returns it`)
    const output = toolOutput(op)
    return { op, output, descriptor: toolDescriptor(op, output) }
  })
  return {
    services,
    tools,
    byName: new Map(tools.map((tool) => [tool.op.name, tool])),
    operationsByName: new Map(tools.map((tool) => [tool.op.name, tool.op])),
    memo: new ElicitationMemo({ db: services.db, now: services.now }),
    guard: rebindingGuard(services.config.baseUrl, services.config.mcpAllowedOrigins ?? []),
    validator: new AjvJsonSchemaValidator(),
    checkOutput: opts.checkOutput ?? false,
  }
}

export function registerMcp(app: FastifyInstance, services: Services, ops: readonly AnyOperation[], opts: DoorOptions = {}) {
  const door = buildDoor(services, ops, opts)
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const r: McpRequest = { door, req, reply, body: req.body, refused: [] }
    const answered = await runChecks(MCP_CHECKS, r)
    return answered ? answered.reply : serve(door, r)
  }
  // a body is JSON or 415 before it is parsed (forms are parsed app-wide, for the console)
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', onRequest: requireJsonBody, handler: handle })
}
