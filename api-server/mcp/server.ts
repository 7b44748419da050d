// The MCP door: Streamable HTTP on /mcp, stateless (a fresh MCP server per
// request), Bearer auth. Tools are generated from the operation registry, so the
// set is closed; a tool the caller's scopes do not allow is listed but its call
// is refused with 403 and a WWW-Authenticate insufficient_scope challenge.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { AnyOperation, McpContent } from '../operations/types.ts'
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { ApiError, isApiError, missingScope } from '../lib/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { requireAuth, resourceMetadataUrl } from '../http/auth-hook.ts'
import { parseInput } from '../http/validate.ts'

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
      if (!op) throw new ApiError(404, 'not_found', `unknown tool: ${request.params.name}`)
      if (!hasScopes(auth.scopes, op.scopes)) throw missingScope(op.scopes.filter((s) => !auth.scopes.has(s)))
      const input = parseInput(mcpInput(op), request.params.arguments ?? {})
      const result = await op.handler({ auth, services, log: req.log, via: 'mcp', ip: req.ip }, input)
      return (op.toMcp ? op.toMcp(result) : defaultContent(result)) as never
    } catch (e) {
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
  const handle = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const auth = await requireAuth(services, req)
    if (req.method === 'POST') {
      const challenge = scopeChallenge(services, byName, auth, req.body)
      if (challenge) throw challenge
    }
    if (req.method !== 'POST') {
      // stateless server: no standalone SSE stream and no sessions to delete
      return reply.code(405).header('allow', 'POST').send({ error: { code: 'method_not_allowed', message: 'use POST' } })
    }
    const server = buildServer(services, door, auth, req)
    // the web-standard transport takes the body Fastify already parsed: no second pass
    // over the request stream and no Node↔fetch adapter on every call
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
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
