// Zod validation with a clear, value-free 400: names the field and the rule,
// never echoes the value (a value might be a secret).
import type { z } from 'zod'
import { badRequest } from '../lib/errors.ts'

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input)
  if (r.success) return r.data
  const issue = r.error.issues[0]
  const where = issue.path.length ? issue.path.join('.') : 'body'
  let message = issue.message
  if (issue.code === 'unrecognized_keys') message = `unknown field: ${(issue as { keys: string[] }).keys.join(', ')}`
  else if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) message = 'required'
  throw badRequest(`invalid request: ${where}: ${message}`)
}
