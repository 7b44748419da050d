// Writes sdk/generated.ts from the operation contracts: the route table and one method per
// operation ("<noun>_<verb>" is <group>.<verb>, a driving action sessions.<action>, NAMES
// the exceptions; path parameters, then POSITIONAL fields, then an object of the rest).
// Run `node --import tsx scripts/gen-sdk.ts`; a test fails when the file is stale.
import { writeFileSync } from 'node:fs'
import { z } from 'zod'
import { isEntryPoint } from '../contracts/entry-point.ts'
import { contracts } from '../contracts/operations/index.ts'
import type { AnyContract } from '../contracts/operations/types.ts'

/** the SDK group of each operation-name noun */
const GROUPS: Record<string, string> = {
  me: 'me', key: 'keys', audit: 'audit', identity: 'identities', credential: 'credentials', grant: 'grants',
  governance: 'governance', authstate: 'authstates', session: 'sessions', network: 'networks', webhook: 'webhooks',
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
  group: string
  method: string
  /** path parameters, then POSITIONAL fields: the method's leading arguments */
  positional: string[]
  /** the other input fields; the last argument when there are any */
  rest: string[]
  /** whether any of `rest` is required */
  restRequired: boolean
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

function methodName(c: AnyContract): [string, string] {
  if (NAMES[c.name]) return NAMES[c.name]
  const [noun, ...verb] = c.name.split('_')
  if (GROUPS[noun] && verb.length) return [GROUPS[noun], camel(verb.join('_'))]
  if (c.rest?.path.startsWith('/v1/sessions/:sessionId/')) return ['sessions', camel(c.name)]
  throw new Error(`scripts/gen-sdk.ts: no SDK group for ${c.name}; add its noun to GROUPS or the operation to NAMES`)
}

/** The SDK method of every operation with a REST binding, in the contracts' order. */
export function methodPlans(list: readonly AnyContract[] = contracts): MethodPlan[] {
  const plans = list.filter((c) => c.rest).map((c): MethodPlan => {
    const [group, method] = methodName(c)
    const params = [...c.rest!.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
    const positional = [...params, ...(POSITIONAL[c.name] ?? [])]
    const json = z.toJSONSchema(c.input, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] }
    const rest = Object.keys(json.properties ?? {}).filter((k) => !positional.includes(k))
    // a refinement (wait_for: exactly one of selector or text) asks for something: the object is not optional
    const restRequired = rest.some((k) => json.required?.includes(k)) || Boolean(c.input._zod.def.checks?.length)
    return { operation: c.name, group, method, positional, rest, restRequired }
  })
  const seen = new Set<string>()
  for (const p of plans) {
    const key = `${p.group}.${p.method}`
    if (seen.has(key)) throw new Error(`scripts/gen-sdk.ts: two operations would be ${key}; name one in NAMES`)
    seen.add(key)
  }
  return plans
}

const doc = (text: string) => `/** ${text.replace(/\*\//g, '*\\/')} */`

function renderMethod(p: MethodPlan, description: string): string {
  const n = `'${p.operation}'`
  const args = p.positional.map((k) => `${k}: In<${n}>['${k}']`)
  const fields = p.positional.join(', ')
  let body: string
  if (p.rest.length) {
    const omitted = p.positional.length ? `Omit<In<${n}>, ${p.positional.map((k) => `'${k}'`).join(' | ')}>` : `In<${n}>`
    args.push(`input: ${omitted}${p.restRequired ? '' : ' = {}'}`)
    body = p.positional.length ? `{ ...input, ${fields} }` : 'input'
  } else {
    body = p.positional.length ? `{ ${fields} }` : '{}'
  }
  return `      ${doc(description)}\n      ${p.method}: (${args.join(', ')}) => call(${n}, ${body}),`
}

export function renderSdk(list: readonly AnyContract[] = contracts): string {
  const byName = new Map(list.map((c) => [c.name, c]))
  const plans = methodPlans(list)
  const groups = new Map<string, MethodPlan[]>()
  for (const p of plans) groups.set(p.group, [...(groups.get(p.group) ?? []), p])
  const routes = plans.map((p) => {
    const { method, path } = byName.get(p.operation)!.rest!
    return `  ${p.operation}: { method: '${method}', path: '${path}' },`
  })
  const methods = [...groups].map(([group, ps]) =>
    `    ${group}: {\n${ps.map((p) => renderMethod(p, byName.get(p.operation)!.description)).join('\n')}\n    },`)
  return `// Generated from contracts/operations/index.ts by scripts/gen-sdk.ts — do not edit.
import type { Call, InputOf as In } from './types.ts'

/** The REST route of every operation. */
export const routes = {
${routes.join('\n')}
} as const

/** One method per operation, grouped by domain. */
export function methods(call: Call) {
  return {
${methods.join('\n')}
  }
}
`
}

if (isEntryPoint(import.meta.url)) {
  writeFileSync(new URL('../sdk/generated.ts', import.meta.url), renderSdk())
}
