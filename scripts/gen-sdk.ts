// Writes sdk/generated.ts from the operation contracts (scripts/sdk-model.ts): every
// operation's input and output as plain TypeScript types (so the SDK needs neither zod nor
// Node's types), the route table and one method per operation.
// Run `node --import tsx scripts/gen-sdk.ts`; a test fails when the file is stale.
import { writeFileSync } from 'node:fs'
import { isEntryPoint } from '../contracts/entry-point.ts'
import { contracts } from '../contracts/operations/index.ts'
import type { AnyContract } from '../contracts/operations/types.ts'
import { camel, isAnyJson, methodPlans, properties, requiredOf, type JsonSchema, type MethodPlan } from './sdk-model.ts'

export { methodPlans }

const doc = (text: string, indent: string) => `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n`
const key = (k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k))
const pascal = (s: string) => camel(s).replace(/^./, (c) => c.toUpperCase())
const parens = (t: string) => (t.includes(' | ') || t.includes(' & ') ? `(${t})` : t)

/** A JSON Schema (as contractJsonSchema writes it) as a TypeScript type. */
export function tsType(s: JsonSchema, indent = ''): string {
  if (isAnyJson(s)) return 'unknown'
  if ('const' in s) return JSON.stringify(s.const)
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ')
  if (Array.isArray(s.anyOf)) return [...new Set((s.anyOf as JsonSchema[]).map((b) => tsType(b, indent)))].join(' | ')
  switch (s.type) {
    case 'string': return 'string'
    case 'number': case 'integer': return 'number'
    case 'boolean': return 'boolean'
    case 'null': return 'null'
    case 'array': return `Array<${s.items ? tsType(s.items as JsonSchema, indent) : 'unknown'}>`
    case 'object': return objectType(s, indent)
    default: return 'unknown'
  }
}

function objectType(s: JsonSchema, indent: string): string {
  const props = properties(s)
  const required = requiredOf(s)
  const extra = s.additionalProperties
  // a schema for the other keys (a record, a catchall); absent means unknown keys are merely ignored
  const extraType = typeof extra === 'object' && extra ? tsType(extra as JsonSchema, indent + '  ') : undefined
  if (!Object.keys(props).length) return extra === false ? 'Record<string, never>' : `Record<string, ${extraType ?? 'unknown'}>`
  const inner = indent + '  '
  const lines = Object.entries(props).map(([k, p]) =>
    (typeof p.description === 'string' ? doc(p.description, inner) : '') + `${inner}${key(k)}${required.has(k) ? '' : '?'}: ${tsType(p, inner)}\n`)
  if (extraType) lines.push(`${inner}[key: string]: unknown\n`)
  return `{\n${lines.join('')}${indent}}`
}

function renderMethod(p: MethodPlan): string {
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
  return `${doc(p.description, '      ')}      ${p.method}: (${args.join(', ')}) => call(${n}, ${body}),`
}

export function renderSdk(list: readonly AnyContract[] = contracts): string {
  const plans = methodPlans(list)
  const groups = new Map<string, MethodPlan[]>()
  for (const p of plans) groups.set(p.group, [...(groups.get(p.group) ?? []), p])
  const types = plans.map((p) => {
    const name = pascal(p.operation)
    return `/** What ${p.operation} takes. */\nexport type ${name}Input = ${tsType(p.input)}\n` +
      `/** What ${p.operation} answers${p.output ? '' : ' (204: no content)'}. */\nexport type ${name}Output = ${p.output ? tsType(p.output) : 'void'}\n`
  })
  const operations = plans.map((p) => `  ${p.operation}: { input: ${pascal(p.operation)}Input; output: ${pascal(p.operation)}Output }`)
  const routes = plans.map((p) => `  ${p.operation}: { method: '${p.route.method}', path: '${p.route.path}' },`)
  const methods = [...groups].map(([group, ps]) => `    ${group}: {\n${ps.map(renderMethod).join('\n')}\n    },`)
  return `// Generated from contracts/operations/index.ts by scripts/gen-sdk.ts — do not edit.

${types.join('\n')}
/** Every operation's input and output, by name (the MCP tool name). */
export interface Operations {
${operations.join('\n')}
}

type In<N extends keyof Operations> = Operations[N]['input']

/** How the generated methods reach the server (Nightjar.call). */
export type Call = <N extends keyof Operations>(name: N, input: Operations[N]['input']) => Promise<Operations[N]['output']>

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
