// The REST door: one Fastify route per operation with a REST binding; zod validates the
// input (one set of messages for REST and MCP) after the well-formedness check. Routes carry
// no Fastify response schema: fast-json-stringify would drop the fields it does not list.
// With checkOutput (tests) a result that breaks its output schema answers 500 and logs the
// operation and paths, never the values. The checks run in the order REST_CHECKS lists.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AnyOperation, RestExchange } from '../operations/types.ts'
import type { Services } from '../services.ts'
import type { AuthContext } from '../auth/context.ts'
import { errors } from '../../contracts/errors.ts'
import { requireScopes } from '../auth/scopes.ts'
import { runChecks, type DoorCheck } from '../door-kit/pipeline.ts'
import { requireAuth } from '../door-kit/auth-hook.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { outputIssues, outputMismatch, type DoorOptions } from '../door-kit/output-check.ts'
import { requireJsonBody } from '../door-kit/json-only.ts'
import { tracedOperation } from '../door-kit/tracing.ts'

export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
}

/** One REST request as the checks see it; each check fills in what the next ones need. */
interface RestRequest {
  services: Services
  op: AnyOperation
  req: FastifyRequest
  hasBody: boolean
  auth?: AuthContext
  /** the body (or the query of a GET or DELETE), once it is known to be an object */
  source?: object
  input?: unknown
}

function authOf(r: RestRequest): AuthContext {
  if (!r.auth) throw new Error('a REST check ran before authentication')
  return r.auth
}

async function authenticate(r: RestRequest) {
  r.auth = await requireAuth(r.services, r.req)
}

function requireOperationScopes(r: RestRequest) {
  requireScopes(authOf(r).scopes, r.op.scopes)
}

function requireObjectSource(r: RestRequest) {
  const source: unknown = r.hasBody ? r.req.body ?? {} : r.req.query ?? {}
  if (typeof source !== 'object' || Array.isArray(source)) throw errors.invalidRequest('body: must be a JSON object')
  r.source = source as object
}

function wellFormedPath(r: RestRequest) {
  assertWellFormed(r.req.params, 'path')
}

function wellFormedSource(r: RestRequest) {
  assertWellFormed(r.source, r.hasBody ? 'body' : 'query')
}

function parseOperationInput(r: RestRequest) {
  r.input = parseInput(r.op.input, { ...r.source, ...(r.req.params as object) })
}

/** The REST door's checks, in order. */
const REST_CHECKS: readonly DoorCheck<RestRequest>[] = [
  authenticate,
  requireOperationScopes,
  requireObjectSource,
  wellFormedPath,
  wellFormedSource,
  parseOperationInput,
]

async function runOperation(r: RestRequest, reply: FastifyReply, opts: DoorOptions) {
  const { op, req } = r
  const prefer = req.headers.prefer
  const exchange: RestExchange = { prefer: Array.isArray(prefer) ? prefer.join(',') : prefer, headers: {}, elapsedMs: () => reply.elapsedTime }
  const context = { auth: authOf(r), services: r.services, log: req.log, via: 'rest' as const, ip: req.ip, rest: exchange }
  const result = await tracedOperation(op.name, 'rest', () => op.handler(context, r.input))
  if (opts.checkOutput) {
    const issues = outputIssues(op.output, result)
    if (issues) throw outputMismatch(req.log, op.name, issues)
  }
  reply.headers(exchange.headers)
  if (result === undefined) return reply.code(op.rest?.status ?? 204).send()
  return reply.code(exchange.status ?? op.rest?.status ?? 200).send(result)
}

export function registerOperationRoutes(app: FastifyInstance, services: Services, ops: readonly AnyOperation[], opts: DoorOptions = {}) {
  for (const op of ops) {
    if (!op.rest) continue
    const { method, path, bodyLimit } = op.rest
    const hasBody = method !== 'GET' && method !== 'DELETE'
    app.route({
      method,
      url: path,
      // a route that takes more than the server's limit says so in its contract (file_put)
      ...(bodyLimit ? { bodyLimit } : {}),
      // a body is JSON or 415, before it is parsed (the app also parses forms, for the console)
      onRequest: requireJsonBody,
      handler: async (req, reply) => {
        const r: RestRequest = { services, op, req, hasBody }
        const answered = await runChecks(REST_CHECKS, r)
        return answered ? answered.reply : runOperation(r, reply, opts)
      },
    })
  }
}
