// Checking a result against its operation's output schema, on every door that answers one
// (REST and MCP): the issues as paths and codes (never values), and the 500 a mismatch
// becomes. On in tests (test/helpers/server.ts), so a handler that drifts from its contract
// fails loudly there.
import type { FastifyBaseLogger } from 'fastify'
import type { z } from 'zod'
import { errors } from '../../contracts/errors.ts'

export interface DoorOptions {
  /** check every result against the operation's output schema; a mismatch answers 500 */
  checkOutput?: boolean
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

