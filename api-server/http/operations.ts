// The REST door: one Fastify route per operation with a REST binding. Path
// parameters, then the query (GET/DELETE) or the JSON body, form the input that
// the operation's zod schema validates (unknown fields are rejected). Before that,
// every string in the path, the query and the body must be well formed (no NUL, no
// lone surrogate): such input is refused with 400 before any work.
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { AnyOperation } from '../operations/types.ts'
import type { Services } from '../services.ts'
import { missingScope, badRequest } from '../../contracts/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { requireAuth } from './auth-hook.ts'
import { assertWellFormed, parseInput } from './validate.ts'

export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
}

export function registerOperationRoutes(app: FastifyInstance, services: Services, ops: readonly AnyOperation[]) {
  for (const op of ops) {
    if (!op.rest) continue
    const { method, path, status } = op.rest
    const params = pathParams(path)
    const bodyShape = Object.fromEntries(Object.entries(op.input.shape).filter(([k]) => !params.includes(k)))
    const hasBody = method !== 'GET' && method !== 'DELETE'
    app.route({
      method,
      url: path,
      schema: {
        operationId: op.name,
        summary: op.description,
        ...(hasBody && Object.keys(bodyShape).length ? { body: z.toJSONSchema(z.object(bodyShape as z.ZodRawShape), { io: 'input', unrepresentable: 'any' }) } : {}),
      },
      // zod is the validator (one set of messages for REST and MCP); the JSON schema above documents the route
      validatorCompiler: () => () => true,
      handler: async (req, reply) => {
        const auth = await requireAuth(services, req)
        if (!hasScopes(auth.scopes, op.scopes)) throw missingScope(op.scopes.filter((s) => !auth.scopes.has(s)))
        const source = hasBody ? req.body ?? {} : req.query ?? {}
        if (typeof source !== 'object' || Array.isArray(source)) throw badRequest('invalid request: body must be a JSON object')
        assertWellFormed(req.params, 'path')
        assertWellFormed(source, hasBody ? 'body' : 'query')
        const input = parseInput(op.input, { ...(source as object), ...(req.params as object) })
        const result = await op.handler({ auth, services, log: req.log, via: 'rest', ip: req.ip }, input)
        if (result === undefined) return reply.code(status ?? 204).send()
        return reply.code(status ?? 200).send(result)
      },
    })
  }
}
