// The REST door: one Fastify route per operation with a REST binding; zod validates the
// input (one set of messages for REST and MCP) after the well-formedness check. Routes carry
// no Fastify response schema: fast-json-stringify would drop the fields it does not list.
// With checkOutput (tests) a result that breaks its output schema answers 500 and logs the
// operation and paths, never the values.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { z } from 'zod'
import type { AnyOperation, RestExchange } from '../operations/types.ts'
import type { Services } from '../services.ts'
import { errors } from '../../contracts/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { requireAuth } from '../door-kit/auth-hook.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { outputIssues, outputMismatch, type DoorOptions } from '../door-kit/output-check.ts'
import { requireJsonBody } from '../door-kit/json-only.ts'
import { tracedOperation } from '../door-kit/tracing.ts'

export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
}

export function registerOperationRoutes(app: FastifyInstance, services: Services, ops: readonly AnyOperation[], opts: DoorOptions = {}) {
  for (const op of ops) {
    if (!op.rest) continue
    const { method, path, status, bodyLimit } = op.rest
    const hasBody = method !== 'GET' && method !== 'DELETE'
    app.route({
      method,
      url: path,
      // a route that takes more than the server's limit says so in its contract (file_put)
      ...(bodyLimit ? { bodyLimit } : {}),
      // a body is JSON or 415, before it is parsed (the app also parses forms, for the console)
      onRequest: requireJsonBody,
      handler: async (req, reply) => {
        const auth = await requireAuth(services, req)
        if (!hasScopes(auth.scopes, op.scopes)) throw errors.missingScope(op.scopes.filter((s: string) => !auth.scopes.has(s)).join(' '))
        const source = hasBody ? req.body ?? {} : req.query ?? {}
        if (typeof source !== 'object' || Array.isArray(source)) throw errors.invalidRequest('body: must be a JSON object')
        assertWellFormed(req.params, 'path')
        assertWellFormed(source, hasBody ? 'body' : 'query')
        const input = parseInput(op.input, { ...(source as object), ...(req.params as object) })
        const prefer = req.headers.prefer
        const exchange: RestExchange = { prefer: Array.isArray(prefer) ? prefer.join(',') : prefer, headers: {}, elapsedMs: () => reply.elapsedTime }
        const result = await tracedOperation(op.name, 'rest', () => op.handler({ auth, services, log: req.log, via: 'rest', ip: req.ip, rest: exchange }, input))
        if (opts.checkOutput) {
          const issues = outputIssues(op.output, result)
          if (issues) throw outputMismatch(req.log, op.name, issues)
        }
        reply.headers(exchange.headers)
        if (result === undefined) return reply.code(status ?? 204).send()
        return reply.code(exchange.status ?? status ?? 200).send(result)
      },
    })
  }
}
