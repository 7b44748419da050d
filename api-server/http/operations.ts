// The REST door: one Fastify route per operation with a REST binding. Path
// parameters, then the query (GET/DELETE) or the JSON body, form the input that
// the operation's zod schema validates (unknown fields are rejected). Before that,
// every string in the path, the query and the body must be well formed (no NUL, no
// lone surrogate): such input is refused with 400 before any work.
//
// Routes carry no Fastify schema: zod validates the input (one set of messages for
// REST and MCP), /openapi.json documents the routes (openapi.ts), and the body is
// the handler's result as JSON.stringify writes it (a response schema would have
// fast-json-stringify drop the fields it does not list).
//
// With checkOutput (tests turn it on), every result is checked against the
// operation's output schema as the wire carries it (JSON): a result that does not
// match answers 500 internal and logs "output schema mismatch" with the operation
// and the issue paths, never the values.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { z } from 'zod'
import type { AnyOperation, RestExchange } from '../operations/types.ts'
import type { Services } from '../services.ts'
import { errors } from '../../contracts/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { requireAuth } from './auth-hook.ts'
import { assertWellFormed, parseInput } from './validate.ts'

export interface DoorOptions {
  /** check every result against the operation's output schema; a mismatch answers 500 */
  checkOutput?: boolean
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
}

export interface OutputIssue {
  /** dot-joined, like zod's ("items.0.url"); "" for the root */
  path: string
  code: string
}

/**
 * Where a result, as JSON carries it, breaks `schema`: issue paths and codes, never
 * values; null when it fits. Fitting means parsing and being in the schema's output
 * form already (what /openapi.json and the MCP outputSchema publish): no field the
 * schema does not list (it would strip it), no default left to fill in.
 */
export function outputIssues(schema: z.ZodType, result: unknown): OutputIssue[] | null {
  const wire = result === undefined ? undefined : JSON.parse(JSON.stringify(result))
  const r = schema.safeParse(wire)
  if (!r.success) return r.error.issues.map((i) => ({ path: i.path.join('.'), code: i.code }))
  const diff = difference(wire, r.data, [])
  return diff && [diff]
}

/** The first place `parsed` differs from `wire`. */
function difference(wire: unknown, parsed: unknown, path: (string | number)[]): OutputIssue | null {
  const at = (p: (string | number)[], code: string) => ({ path: p.join('.'), code })
  if (Array.isArray(wire) && Array.isArray(parsed)) {
    if (wire.length !== parsed.length) return at(path, 'not_in_output_form')
    for (let i = 0; i < wire.length; i++) {
      const d = difference(wire[i], parsed[i], [...path, i])
      if (d) return d
    }
    return null
  }
  if (isPlainObject(wire) && isPlainObject(parsed)) {
    for (const k of Object.keys(wire)) {
      if (!Object.hasOwn(parsed, k)) return at([...path, k], 'unrecognized_keys')
      const d = difference(wire[k], parsed[k], [...path, k])
      if (d) return d
    }
    for (const k of Object.keys(parsed)) if (!Object.hasOwn(wire, k) && parsed[k] !== undefined) return at([...path, k], 'not_in_output_form')
    return null
  }
  return Object.is(wire, parsed) ? null : at(path, 'not_in_output_form')
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype
}

/** Logs a result that breaks its schema and returns the 500 to answer instead. */
export function outputMismatch(log: FastifyBaseLogger, op: string, issues: OutputIssue[]) {
  log.error({ op, issues }, 'output schema mismatch')
  return errors.internal()
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
      handler: async (req, reply) => {
        const auth = await requireAuth(services, req)
        if (!hasScopes(auth.scopes, op.scopes)) throw errors.missingScope(op.scopes.filter((s: string) => !auth.scopes.has(s)).join(' '))
        const source = hasBody ? req.body ?? {} : req.query ?? {}
        if (typeof source !== 'object' || Array.isArray(source)) throw errors.invalidRequest('body: must be a JSON object')
        assertWellFormed(req.params, 'path')
        assertWellFormed(source, hasBody ? 'body' : 'query')
        const input = parseInput(op.input, { ...(source as object), ...(req.params as object) })
        const prefer = req.headers.prefer
        const exchange: RestExchange = { prefer: Array.isArray(prefer) ? prefer.join(',') : prefer, headers: {} }
        const result = await op.handler({ auth, services, log: req.log, via: 'rest', ip: req.ip, rest: exchange }, input)
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
