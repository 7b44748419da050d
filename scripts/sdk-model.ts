// What both SDK generators (scripts/gen-sdk.ts for TypeScript, scripts/gen-sdk-python.ts)
// read from the operation contracts: one method per operation with a REST route
// ("<noun>_<verb>" is <group>.<verb>, a driving action sessions.<action>, NAMES the
// exceptions; path parameters, then POSITIONAL fields, then the rest) and its input and
// output as portable JSON Schema, so the two SDKs cannot say different things.
import type { z } from 'zod'
import { contracts } from '../contracts/operations/index.ts'
import { contractJsonSchema, type JsonSchema } from '../contracts/operations/json-schema.ts'
import { isNoContent, type AnyContract, type HttpMethod } from '../contracts/operations/types.ts'

export type { JsonSchema }

/** the SDK group of each operation-name noun */
const GROUPS: Record<string, string> = {
  me: 'me', key: 'keys', audit: 'audit', identity: 'identities', credential: 'credentials', grant: 'grants',
  governance: 'governance', authstate: 'authstates', session: 'sessions', network: 'networks', webhook: 'webhooks', extension: 'extensions',
}

/** methods named otherwise than by the rule: [group, method] */
const NAMES: Record<string, [string, string]> = {
  me: ['me', 'get'],
  session_start: ['sessions', 'create'],
  spawn_and_start_session: ['sessions', 'spawn'],
  identity_list_assumable: ['identities', 'assumable'],
  credential_fill: ['sessions', 'fillCredential'],
  local_reach_ensure: ['networks', 'ensureLocalReach'],
}

/** input fields that follow the path parameters as arguments of their own */
const POSITIONAL: Record<string, string[]> = {
  navigate: ['url'],
  credential_fill: ['credentialName', 'selector'],
}

export interface MethodPlan {
  operation: string
  description: string
  group: string
  /** camelCase (the Python generator writes it in snake_case) */
  method: string
  route: { method: HttpMethod; path: string }
  /** path parameters, then POSITIONAL fields: the method's leading arguments */
  positional: string[]
  /** the other input fields; the last argument when there are any */
  rest: string[]
  /** whether a call must name some of `rest` (a required field, or a rule such as "exactly one of") */
  restRequired: boolean
  /** the input as the caller writes it (defaults not applied) */
  input: JsonSchema
  /** the success body; null for 204 no content */
  output: JsonSchema | null
}

export const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

function methodName(c: AnyContract): [string, string] {
  if (NAMES[c.name]) return NAMES[c.name]
  const [noun, ...verb] = c.name.split('_')
  if (GROUPS[noun] && verb.length) return [GROUPS[noun], camel(verb.join('_'))]
  if (c.rest?.path.startsWith('/v1/sessions/:sessionId/')) return ['sessions', camel(c.name)]
  throw new Error(`scripts/sdk-model.ts: no SDK group for ${c.name}; add its noun to GROUPS or the operation to NAMES`)
}

/**
 * Whether leaving every non-positional field out is refused: the input's own parse of the
 * empty call says so (positional values stand in as "x"), so "at most one of" stays optional
 * while "exactly one of" (wait_for) does not.
 */
function needsRest(c: AnyContract, positional: string[]): boolean {
  const parsed = (c.input as z.ZodObject).safeParse(Object.fromEntries(positional.map((k) => [k, 'x'])))
  return !parsed.success && parsed.error.issues.some((issue) => !positional.includes(String(issue.path[0])))
}

/** The SDK method of every operation with a REST binding, in the contracts' order. */
export function methodPlans(list: readonly AnyContract[] = contracts): MethodPlan[] {
  const plans = list.filter((c) => c.rest).map((c): MethodPlan => {
    const [group, method] = methodName(c)
    const params = [...c.rest!.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
    const positional = [...params, ...(POSITIONAL[c.name] ?? [])]
    const input = contractJsonSchema(c.input, 'input')
    const rest = Object.keys((input.properties as JsonSchema | undefined) ?? {}).filter((k) => !positional.includes(k))
    return {
      operation: c.name, description: c.description, group, method,
      route: { method: c.rest!.method, path: c.rest!.path },
      positional, rest, restRequired: rest.length > 0 && needsRest(c, positional),
      input, output: isNoContent(c) ? null : contractJsonSchema(c.output, 'output'),
    }
  })
  const seen = new Set<string>()
  for (const p of plans) {
    const key = `${p.group}.${p.method}`
    if (seen.has(key)) throw new Error(`scripts/sdk-model.ts: two operations would be ${key}; name one in NAMES`)
    seen.add(key)
  }
  return plans
}

/** Whether a schema is the union of every JSON type: any value (contractJsonSchema's spelling of `{}`). */
export function isAnyJson(s: JsonSchema): boolean {
  const branches = s.anyOf as JsonSchema[] | undefined
  if (!branches || branches.length !== 6 || s.type) return false
  const types = new Set(branches.map((b) => (Object.keys(b).length === 1 ? b.type : undefined)))
  return ['string', 'number', 'boolean', 'null', 'array', 'object'].every((t) => types.has(t))
}

export const properties = (s: JsonSchema) => (s.properties as Record<string, JsonSchema> | undefined) ?? {}
export const requiredOf = (s: JsonSchema) => new Set((s.required as string[] | undefined) ?? [])
