// A contract schema as JSON Schema (2020-12) in the spelling strict clients accept: zod
// writes a nullable field as `type: ["string","null"]` and an unknown value as `{}`, both
// legal but refused or lossy in single-type dialects (Gemini's OpenAPI subset; the MCP
// Inspector's --strict flags them). Rewritten here, accepting exactly the same values:
// a type list becomes anyOf branches of one type each, an unconstrained value the
// explicit union of every JSON type. The MCP tool list and the SDK generators read this.
import { z } from 'zod'

export type JsonSchema = Record<string, unknown>

/** Every JSON value, spelled as types: what `{}` accepts, declared. */
const ANY_JSON_TYPES = ['string', 'number', 'boolean', 'null', 'array', 'object'] as const

/** Keywords that say something about an instance (the rest are annotations: description, title, default …). */
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'format', 'contentMediaType', 'contentEncoding', 'contentSchema',
  'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties',
  'required', 'dependentRequired', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'items', 'prefixItems', 'contains',
  'additionalItems', 'unevaluatedItems', 'properties', 'patternProperties', 'additionalProperties',
  'unevaluatedProperties', 'propertyNames', 'dependentSchemas', 'dependencies', '$ref', '$dynamicRef', '$recursiveRef',
])
const ONE_SCHEMA = ['items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems', 'contentSchema']
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems']
const SCHEMA_MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The same schema with single-type branches for type lists and declared types for `{}` (a new object; the input is untouched). */
export function portableSchema(schema: JsonSchema, underNot = false): JsonSchema {
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (ONE_SCHEMA.includes(key) && isSchema(value)) out[key] = portableSchema(value, key === 'not')
    else if (SCHEMA_LIST.includes(key) && Array.isArray(value)) out[key] = value.map((v) => (isSchema(v) ? portableSchema(v) : v))
    else if (SCHEMA_MAP.includes(key) && isSchema(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isSchema(v) ? portableSchema(v) : v]))
    else out[key] = value
  }
  if (Array.isArray(out.type)) {
    const branches = (out.type as string[]).map((type) => ({ type }))
    delete out.type
    if (out.anyOf) out.allOf = [...((out.allOf as unknown[]) ?? []), { anyOf: branches }]
    else out.anyOf = branches
  }
  // `not: {}` means "nothing": declaring types there would change it
  if (!underNot && !Object.keys(out).some((k) => CONSTRAINING.has(k))) out.anyOf = ANY_JSON_TYPES.map((type) => ({ type }))
  return out
}

/** A contract schema as portable JSON Schema, without $schema (the dialect is 2020-12, MCP's and OpenAPI 3.1's). */
export function contractJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema
  return portableSchema(json)
}
