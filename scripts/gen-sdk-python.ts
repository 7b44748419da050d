// Writes sdk/python/nightjar_sdk/_generated.py from the operation contracts, through the same
// model as the TypeScript SDK (scripts/sdk-model.ts): every operation's input and output as
// TypedDicts, the route table, and one method per operation (snake_case; path parameters and
// POSITIONAL fields first, the other fields as keyword arguments named in snake_case).
// Run `node --import tsx scripts/gen-sdk-python.ts`; a test fails when the file is stale.
import { writeFileSync } from 'node:fs'
import { isEntryPoint } from '../contracts/entry-point.ts'
import { contracts } from '../contracts/operations/index.ts'
import type { AnyContract } from '../contracts/operations/types.ts'
import { camel, isAnyJson, methodPlans, properties, requiredOf, type JsonSchema, type MethodPlan } from './sdk-model.ts'

const KEYWORDS = new Set(['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield'])

export const snake = (s: string) => {
  const name = s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  return KEYWORDS.has(name) ? `${name}_` : name
}
const pascal = (s: string) => camel(s).replace(/^./, (c) => c.toUpperCase())
/** A Python string literal: JSON's escapes are Python's too. */
const str = (s: string) => JSON.stringify(s)
const literal = (v: unknown) => (v === null ? 'None' : typeof v === 'boolean' ? (v ? 'True' : 'False') : JSON.stringify(v))
const docstring = (text: string, indent: string) => `${indent}"""${text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"').replace(/"$/, '\\"')}"""\n`

/** Collects the TypedDicts a type needs, each written before its first use. */
class Types {
  readonly defs: string[] = []
  readonly #names = new Map<string, string>()

  /** A JSON Schema (as contractJsonSchema writes it) as a Python type; objects become TypedDicts named from `name`. */
  type(s: JsonSchema, name: string): string {
    if (isAnyJson(s)) return 'Any'
    if ('const' in s) return `Literal[${literal(s.const)}]`
    if (Array.isArray(s.enum)) return `Literal[${s.enum.map(literal).join(', ')}]`
    if (Array.isArray(s.anyOf)) {
      const branches = s.anyOf as JsonSchema[]
      const named = branches.filter((b) => b.type !== 'null').length > 1
      return [...new Set(branches.map((b, i) => this.type(b, named ? `${name}Variant${i + 1}` : name)))].join(' | ')
    }
    switch (s.type) {
      case 'string': return 'str'
      case 'integer': return 'int'
      case 'number': return 'float'
      case 'boolean': return 'bool'
      case 'null': return 'None'
      case 'array': return `list[${s.items ? this.type(s.items as JsonSchema, `${name}Item`) : 'Any'}]`
      case 'object': return this.object(s, name)
      default: return 'Any'
    }
  }

  object(s: JsonSchema, name: string): string {
    const props = properties(s)
    const extra = s.additionalProperties
    if (!Object.keys(props).length) return `dict[str, ${typeof extra === 'object' && extra ? this.type(extra as JsonSchema, `${name}Value`) : 'Any'}]`
    // a method's argument names the type its operation's input already defined
    const seen = this.#names.get(name)
    if (seen !== undefined) {
      if (seen !== JSON.stringify(s)) throw new Error(`scripts/gen-sdk-python.ts: two types named ${name}`)
      return name
    }
    this.#names.set(name, JSON.stringify(s))
    const required = requiredOf(s)
    const fields = Object.entries(props).map(([k, p]) => {
      const t = this.type(p, `${name}${pascal(k)}`)
      return `    ${str(k)}: ${required.has(k) ? t : `NotRequired[${t}]`},\n`
    })
    // the functional form: a field may be named like a Python keyword (from, in)
    this.defs.push(`${name} = TypedDict(${str(name)}, {\n${fields.join('')}})\n`)
    return name
  }
}

function renderMethod(p: MethodPlan, types: Types): string {
  const props = properties(p.input)
  const required = requiredOf(p.input)
  const base = pascal(p.operation) + 'Input'
  const fieldType = (k: string) => types.type(props[k], `${base}${pascal(k)}`)
  const args = ['self', ...p.positional.map((k) => `${snake(k)}: ${fieldType(k)}`)]
  if (p.rest.length) {
    args.push('*')
    for (const k of p.rest) args.push(required.has(k) ? `${snake(k)}: ${fieldType(k)}` : `${snake(k)}: ${fieldType(k)} | Unset = UNSET`)
  }
  const body = [...p.positional, ...p.rest].map((k) => `${str(k)}: ${snake(k)}`).join(', ')
  const out = p.output ? `${pascal(p.operation)}Output` : 'None'
  return `    def ${snake(p.method)}(${args.join(', ')}) -> ${out}:\n${docstring(p.description, '        ')}` +
    `        return self._call(${str(p.operation)}, {${body}})\n`
}

export function renderPython(list: readonly AnyContract[] = contracts): string {
  const plans = methodPlans(list)
  const types = new Types()
  for (const p of plans) {
    types.type(p.input, `${pascal(p.operation)}Input`)
    if (p.output) {
      const t = types.type(p.output, `${pascal(p.operation)}Output`)
      if (t !== `${pascal(p.operation)}Output`) types.defs.push(`${pascal(p.operation)}Output = ${t}\n`)
    }
  }
  const groups = new Map<string, MethodPlan[]>()
  for (const p of plans) groups.set(p.group, [...(groups.get(p.group) ?? []), p])
  const classes = [...groups].map(([group, ps]) =>
    `class ${pascal(group)}:\n    """${pascal(group)} operations."""\n\n    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:\n        self._call = call\n\n` +
    ps.map((p) => renderMethod(p, types)).join('\n'))
  const routes = plans.map((p) => `    ${str(p.operation)}: (${str(p.route.method)}, ${str(p.route.path)}),`)
  const fields = [...groups.keys()].map((g) => `        self.${g} = ${pascal(g)}(self.call)`)
  return `# Generated from contracts/operations/index.ts by scripts/gen-sdk-python.ts — do not edit.
from __future__ import annotations

from typing import Any, Callable, Literal, NotRequired, TypedDict

from ._client import UNSET, Transport, Unset

ROUTES: dict[str, tuple[str, str]] = {
${routes.join('\n')}
}

${types.defs.join('\n')}

${classes.join('\n\n')}

class Nightjar(Transport):
    """A Nightjar client: Nightjar(base_url, token), then nj.sessions.create(), nj.sessions.navigate(id, url) …"""

    def __init__(self, base_url: str, token: str, *, timeout: float = 60.0) -> None:
        super().__init__(base_url, token, ROUTES, timeout=timeout)
${fields.join('\n')}
`
}

if (isEntryPoint(import.meta.url)) {
  writeFileSync(new URL('../sdk/python/nightjar_sdk/_generated.py', import.meta.url), renderPython())
}
