// The MCP door's checks, in the order they run (MCP_CHECKS): each does one thing and
// either lets the request go on or answers it, before any method runs. What passes them
// all reaches the transport (server.ts). Design: docs/mcp.md#mcp-transport-rules
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthContext } from '../auth/context.ts'
import type { Services } from '../services.ts'
import type { AnyOperation } from '../operations/types.ts'
import { errors, rpcErrors, rpcStatus, type ApiError } from '../../contracts/errors.ts'
import { hasScopes, missingScopes } from '../auth/scopes.ts'
import { requireAuth, resourceMetadataUrl } from '../door-kit/auth-hook.ts'
import { answer, type DoorCheck } from '../door-kit/pipeline.ts'
import type { rebindingGuard } from './origin.ts'
import { isInitialize, type ElicitationMemo } from './elicitation.ts'

/** The most JSON-RPC messages one POST may carry; a longer batch is refused whole. */
export const MAX_BATCH = 20

/** What the checks share for the life of the door. */
export interface McpDoorContext {
  services: Services
  operationsByName: ReadonlyMap<string, AnyOperation>
  memo: ElicitationMemo
  guard: ReturnType<typeof rebindingGuard>
}

type Refusal = { jsonrpc: '2.0'; id: string | number | null; error: ReturnType<typeof rpcErrors.mcpInvalidParams> }

/** One request as the checks see it; `body` is what is left for the transport. */
export interface McpRequest {
  door: McpDoorContext
  req: FastifyRequest
  reply: FastifyReply
  /** set by authenticate, the second check */
  auth?: AuthContext
  body: unknown
  /** messages answered here with -32602 (params by position) */
  refused: Refusal[]
}

/** The credential, for the checks after authenticate. */
export function authOf(r: McpRequest): AuthContext {
  if (!r.auth) throw new Error('an MCP check ran before authentication')
  return r.auth
}

/**
 * Takes out of a body the JSON-RPC messages whose params are an array: each request among
 * them gets its -32602 here (a notification gets nothing, as always). `body` is what is
 * left for the transport — undefined when nothing is.
 */
export function splitPositional(raw: unknown): { body: unknown; refused: Refusal[] } {
  const positional = (m: unknown): m is { id?: unknown; params: unknown[] } =>
    typeof m === 'object' && m !== null && !Array.isArray(m) && Array.isArray((m as { params?: unknown }).params)
  const messages = Array.isArray(raw) ? raw : [raw]
  if (!messages.some(positional)) return { body: raw, refused: [] }
  const refused = messages.filter(positional).filter((m) => m.id !== undefined).map((m) => ({
    jsonrpc: '2.0' as const,
    id: typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null,
    error: rpcErrors.mcpInvalidParams('invalid params: params: must be an object (MCP params are named)'),
  }))
  const rest = messages.filter((m) => !positional(m))
  return { body: Array.isArray(raw) ? (rest.length ? rest : undefined) : undefined, refused }
}

/** A tools/call naming a tool the credential's scopes do not cover: the MCP step-up challenge. */
export function scopeChallenge(door: McpDoorContext, auth: AuthContext, body: unknown): ApiError | null {
  const msg = body as { method?: string; params?: { name?: string } } | undefined
  if (!msg || Array.isArray(msg) || msg.method !== 'tools/call') return null
  const op = msg.params?.name ? door.operationsByName.get(msg.params.name) : undefined
  if (!op || hasScopes(auth.scopes, op.scopes)) return null
  const err = errors.missingScope(missingScopes(auth.scopes, op.scopes).join(' '))
  err.headers['www-authenticate'] =
    `Bearer error="insufficient_scope", scope="${op.scopes.join(' ')}", resource_metadata="${resourceMetadataUrl(door.services)}"`
  return err
}

function refuseRebinding(r: McpRequest) {
  const rebinding = r.door.guard.check(r.req.headers.host, r.req.headers.origin)
  if (rebinding) throw rebinding
}

async function authenticate(r: McpRequest) {
  r.auth = await requireAuth(r.door.services, r.req)
}

function postOnly(r: McpRequest) {
  // stateless server: no standalone SSE stream and no sessions to delete
  if (r.req.method !== 'POST') throw errors.methodNotAllowed('POST').withHeaders({ allow: 'POST' })
}

function capBatch(r: McpRequest) {
  if (Array.isArray(r.body) && r.body.length > MAX_BATCH) {
    return answer(r.reply.code(rpcStatus('mcpBatchTooLarge')).send({ jsonrpc: '2.0', id: null, error: rpcErrors.mcpBatchTooLarge(MAX_BATCH) }))
  }
}

// JSON-RPC 2.0 §6: a batch is an array with at least one value
function refuseEmptyBatch(r: McpRequest) {
  if (Array.isArray(r.body) && r.body.length === 0) {
    return answer(r.reply.code(rpcStatus('mcpEmptyBatch')).send({ jsonrpc: '2.0', id: null, error: rpcErrors.mcpEmptyBatch() }))
  }
}

// params by position are answered here, each with -32602: the SDK's parser would call the
// whole POST unreadable (-32700), the batch's good messages included
function answerPositionalParams(r: McpRequest) {
  const wasBatch = Array.isArray(r.body)
  const { body, refused } = splitPositional(r.body)
  r.body = body
  r.refused = refused
  if (refused.length && !wasBatch) return answer(r.reply.code(rpcStatus('mcpInvalidParams')).send(refused[0]))
  if (body === undefined) return answer(refused.length ? r.reply.code(200).send(refused) : r.reply.code(202).send())
}

// an OAuth token is never challenged: its grant holds all the consent page can give, so a
// re-authorization would get the same scopes again (its call answers a tool error instead)
function challengeScope(r: McpRequest) {
  const auth = authOf(r)
  if (auth.principal.kind === 'oauth') return
  const challenge = scopeChallenge(r.door, auth, r.body)
  if (challenge) throw challenge
}

// initialize may create elicitation state: a budget per credential, in the shared store
async function throttleInitialize(r: McpRequest) {
  if (!isInitialize(r.body)) return
  const auth = authOf(r)
  const verdict = await r.door.services.limits.mcpInitialize.hit(`${auth.orgId}/${auth.principal.credentialId}`)
  if (!verdict.allowed) throw errors.mcpInitializeThrottled(verdict.retryAfterSecs)
}

// a client's answer to an elicitation/create goes to the call that asked, on any replica (elicitation.ts)
async function takeElicitationAnswers(r: McpRequest) {
  if (await r.door.memo.takeAnswers(authOf(r), r.body)) return answer(r.reply.code(202).send())
}

/** The MCP door's checks, in order. */
export const MCP_CHECKS: readonly DoorCheck<McpRequest>[] = [
  refuseRebinding,
  authenticate,
  postOnly,
  capBatch,
  refuseEmptyBatch,
  answerPositionalParams,
  challengeScope,
  throttleInitialize,
  takeElicitationAnswers,
]
