// Input checks shared by every door (REST and MCP), value-free: a message names the field
// and the rule, never the value (it might be a secret). First hygiene: no NUL or unpaired
// surrogate in any string, because Postgres cannot store either and the call would fail
// half-way (an action run but not journalled); then the operation's zod schema.
import type { z } from 'zod'
import { errors } from '../../contracts/errors.ts'

/** An unpaired high surrogate, or a low surrogate without its high half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What makes `s` unstorable (a NUL, a lone surrogate), or null. */
export function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character'
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate'
  return null
}

export interface InputProblem {
  /** the field path, dot-joined like zod's ("viewport.width", "items.0"); "" for the root */
  path: string
  message: string
}

const joinPath = (path: readonly (string | number)[]) => path.join('.')

/**
 * The first string in `value` (walked depth-first, keys and values, no recursion so
 * no nesting depth can overflow the stack) that is not well formed, or null.
 */
export function findBadString(value: unknown): InputProblem | null {
  const stack: Array<{ v: unknown; path: (string | number)[] }> = [{ v: value, path: [] }]
  while (stack.length) {
    const { v, path } = stack.pop()!
    if (typeof v === 'string') {
      const p = stringProblem(v)
      if (p) return { path: joinPath(path), message: p }
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] })
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v)
      for (const k of keys) {
        const p = stringProblem(k)
        // the bad key is not echoed: the problem is reported at its parent
        if (p) return { path: joinPath(path), message: `a field name ${p}` }
      }
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: (v as Record<string, unknown>)[keys[i]], path: [...path, keys[i]] })
    }
  }
  return null
}

/** Throws the REST 400 when `value` holds a NUL or a lone surrogate; `root` names the whole value. */
export function assertWellFormed(value: unknown, root = 'body'): void {
  const p = findBadString(value)
  if (p) throw errors.invalidRequest(`${p.path || root}: ${p.message}`)
}

/** The first zod issue as "<field>: <rule>", value-free. */
export function describeIssues(error: z.ZodError, root = 'body'): string {
  const issue = error.issues[0]
  const where = issue.path.length ? issue.path.join('.') : root
  let message = issue.message
  if (issue.code === 'unrecognized_keys') message = `unknown field: ${(issue as { keys: string[] }).keys.join(', ')}`
  else if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'required'
  return `${where}: ${message}`
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input)
  if (r.success) return r.data
  throw errors.invalidRequest(describeIssues(r.error))
}
