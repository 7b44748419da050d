// Schema tools for the Kubernetes tests (not a test file): validateAndPrune (what the
// api-server does to a custom resource on write), structuralErrors (the rules a CRD must
// meet to be accepted), and unknownFields, a strict check built on client-node's
// attributeTypeMap, because kubernetes-models' validate() accepts unknown fields and a typo
// like `readOnlyRootFileSystem` would pass it.
import * as k8s from '@kubernetes/client-node'

// eslint-free repo: `any` keeps the schema walking short
export type Schema = Record<string, any>

const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean']
const JUNCTORS = ['allOf', 'anyOf', 'oneOf', 'not']
const FORBIDDEN_IN_JUNCTORS = ['type', 'additionalProperties', 'default', 'description', 'nullable', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource']
const FORBIDDEN_ANYWHERE = ['$ref', 'definitions', 'dependencies', 'patternProperties', 'additionalItems', 'id', '$schema']

export function matchesType(type: string | undefined, v: unknown): boolean {
  switch (type) {
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v)
    case 'array':
      return Array.isArray(v)
    case 'string':
      return typeof v === 'string'
    case 'integer':
      return Number.isInteger(v)
    case 'number':
      return typeof v === 'number'
    case 'boolean':
      return typeof v === 'boolean'
    default:
      return true
  }
}

/** https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema */
export function structuralErrors(s: Schema, path = '', root = true): string[] {
  const errs: string[] = []
  const here = path || '<root>'
  const open = s['x-kubernetes-int-or-string'] === true || s['x-kubernetes-preserve-unknown-fields'] === true
  if (!open && !s.type) errs.push(`${here}: type is required`)
  if (s.type && !TYPES.includes(s.type)) errs.push(`${here}: unknown type ${s.type}`)
  for (const k of FORBIDDEN_ANYWHERE) if (k in s) errs.push(`${here}: ${k} is not allowed in a structural schema`)
  if (s.uniqueItems === true) errs.push(`${here}: uniqueItems must not be true`)
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false) errs.push(`${here}: properties and additionalProperties are exclusive`)
  if (s.type === 'object' && !open && !s.properties && s.additionalProperties === undefined && !(path === '.metadata' && !root)) {
    errs.push(`${here}: object without properties (its content would be pruned)`)
  }
  if (s.type === 'array') {
    if (!s.items || typeof s.items !== 'object' || Array.isArray(s.items)) errs.push(`${here}: array needs a single items schema`)
    else errs.push(...structuralErrors(s.items, `${path}[]`, false))
    const listType = s['x-kubernetes-list-type']
    if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) errs.push(`${here}: unknown list-type ${listType}`)
    if (listType === 'map') {
      const keys: string[] = s['x-kubernetes-list-map-keys'] ?? []
      if (!keys.length) errs.push(`${here}: list-type map needs list-map-keys`)
      for (const k of keys) {
        const p = s.items?.properties?.[k]
        if (!p) errs.push(`${here}: map key ${k} is not a property`)
        else if (!['string', 'integer', 'number', 'boolean'].includes(p.type)) errs.push(`${here}: map key ${k} must be scalar`)
        if (!(s.items?.required ?? []).includes(k) && p?.default === undefined) errs.push(`${here}: map key ${k} must be required or defaulted`)
      }
    } else if (s['x-kubernetes-list-map-keys']) errs.push(`${here}: list-map-keys need list-type map`)
  }
  for (const [name, sub] of Object.entries<Schema>(s.properties ?? {})) {
    if (root && name === 'metadata') {
      const extra = Object.keys(sub).filter((k) => !['type', 'properties', 'description'].includes(k))
      const props = Object.keys(sub.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName')
      if (extra.length || props.length) errs.push(`.metadata: only name and generateName may be restricted`)
      if (sub.type !== 'object') errs.push('.metadata: type must be object')
      continue
    }
    errs.push(...structuralErrors(sub, `${path}.${name}`, false))
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object') errs.push(...structuralErrors(s.additionalProperties, `${path}.*`, false))
  for (const j of JUNCTORS) {
    const subs = j === 'not' ? (s.not ? [s.not] : []) : (s[j] ?? [])
    for (const sub of subs) for (const k of FORBIDDEN_IN_JUNCTORS) if (k in sub) errs.push(`${here}: ${k} is not allowed inside ${j}`)
  }
  for (const v of s.enum ?? []) if (!matchesType(s.type, v)) errs.push(`${here}: enum value ${JSON.stringify(v)} is not a ${s.type}`)
  if (s.default !== undefined && !matchesType(s.type, s.default)) errs.push(`${here}: default is not a ${s.type}`)
  for (const rule of s['x-kubernetes-validations'] ?? []) {
    if (typeof rule.rule !== 'string' || !rule.rule.trim()) errs.push(`${here}: validation rule must be a non-empty CEL string`)
    if (/\boldSelf\b/.test(rule.rule ?? '') && root) errs.push(`${here}: transition rules cannot sit on the root`)
  }
  return errs
}

/**
 * Validate `v` against a CRD schema and prune unknown fields in place, like the
 * api-server's custom-resource handler. Returns the validation errors (empty = valid).
 */
export function validateAndPrune(s: Schema, v: unknown, path = ''): string[] {
  const here = path || '<root>'
  if (!matchesType(s.type, v)) return [`${here}: expected ${s.type}, got ${typeof v}`]
  const errs: string[] = []
  if (s.enum && !s.enum.includes(v)) errs.push(`${here}: ${JSON.stringify(v)} is not one of ${s.enum.join(', ')}`)
  if (typeof v === 'string') {
    // kube-apiserver 1.20.0-1.20.4 built with Go >= 1.16 (Debian bookworm's, which the
    // cluster tests run) takes an empty string for null and refuses it (kubernetes#99804).
    // Nightjar writes no empty strings into its resources, so it runs on those servers too.
    if (v === '' && !s.nullable) errs.push(`${here}: Invalid value: "null": ${here.replace(/^\./, '')} in body must be of type string: "null"`)
    if (s.maxLength !== undefined && v.length > s.maxLength) errs.push(`${here}: longer than ${s.maxLength}`)
    if (s.minLength !== undefined && v.length < s.minLength) errs.push(`${here}: shorter than ${s.minLength}`)
    if (s.format === 'date-time' && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v)) errs.push(`${here}: not an RFC 3339 date-time`)
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum) errs.push(`${here}: below ${s.minimum}`)
    if (s.maximum !== undefined && v > s.maximum) errs.push(`${here}: above ${s.maximum}`)
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(`${here}: more than ${s.maxItems} items`)
    if (s.minItems !== undefined && v.length < s.minItems) errs.push(`${here}: fewer than ${s.minItems} items`)
    v.forEach((item, i) => errs.push(...validateAndPrune(s.items, item, `${path}[${i}]`)))
    if (s['x-kubernetes-list-type'] === 'map') {
      const keys: string[] = s['x-kubernetes-list-map-keys'] ?? []
      const seen = new Set<string>()
      for (const item of v) {
        const k = JSON.stringify(keys.map((key) => (item as Record<string, unknown>)?.[key]))
        if (seen.has(k)) errs.push(`${here}: duplicate entries for key ${k}`)
        seen.add(k)
      }
    }
  }
  if (s.type === 'object' && v && typeof v === 'object' && !Array.isArray(v)) {
    if (path === '.metadata') return errs // ObjectMeta is validated by the api-server itself
    const obj = v as Record<string, unknown>
    for (const r of s.required ?? []) if (!(r in obj)) errs.push(`${here}: ${r} is required`)
    for (const [k, val] of Object.entries(obj)) {
      const sub = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined)
      if (!sub) {
        if (!s['x-kubernetes-preserve-unknown-fields']) delete obj[k] // pruning
        continue
      }
      errs.push(...validateAndPrune(sub, val, `${path}.${k}`))
    }
  }
  return errs
}

// --- unknown fields of built-in types ------------------------------------------------------

type AttributeType = { name: string; baseName: string; type: string }
type Model = { getAttributeTypeMap(): AttributeType[] }

/** client-node's model class for a kind, e.g. ('apps/v1', 'Deployment') → V1Deployment */
export function modelFor(apiVersion: string, kind: string): string | undefined {
  const version = apiVersion.split('/').pop()!
  const name = `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`
  return (k8s as unknown as Record<string, unknown>)[name] ? name : undefined
}

/** paths of fields the Kubernetes type does not define (an api-server would drop them) */
export function unknownFields(value: unknown, typeName: string, path = ''): string[] {
  if (value === null || value === undefined) return []
  const t = typeName.replace(/ \| null$/, '')
  if (t.startsWith('Array<')) {
    if (!Array.isArray(value)) return [`${path}: expected an array`]
    const inner = t.slice(6, -1)
    return value.flatMap((v, i) => unknownFields(v, inner, `${path}[${i}]`))
  }
  if (t.startsWith('{ [key: string]: ')) {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected a map`]
    const inner = t.slice('{ [key: string]: '.length, -'; }'.length)
    return Object.entries(value as object).flatMap(([k, v]) => unknownFields(v, inner, `${path}.${k}`))
  }
  const model = (k8s as unknown as Record<string, Model | undefined>)[t]
  if (!model || typeof model.getAttributeTypeMap !== 'function') return [] // a primitive, IntOrString, Date, any ...
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected an object (${t})`]
  const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]))
  const errs: string[] = []
  for (const [k, v] of Object.entries(value as object)) {
    const a = attrs.get(k)
    if (!a) errs.push(`${path}.${k}: unknown field of ${t}`)
    else errs.push(...unknownFields(v, a.type, `${path}.${k}`))
  }
  return errs
}
