// The CRDs: valid CustomResourceDefinitions (kubernetes-models, i.e. the Kubernetes
// OpenAPI schema), structural schemas (checked by the small checker below, following the
// apiextensions rules), and in step with crds/types.ts: every object the reconcilers
// write validates against the schema and has no field a real api-server would prune.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition'
import { parse } from 'yaml'
import { API_VERSION, BROWSER_KINDS, DEPRECATED_VERSIONS, EGRESS_MODES, VERSION, type BrowserSession, type Network } from '../../crds/types.ts'
import { endedStatus, failedStatus, statusForPod } from '../../operator/controllers/browser-session/status.ts'
import { networkStatus } from '../../operator/controllers/network/reconciler.ts'
import { sessionSpec } from '../operator/helpers.ts'
import { matchesType, structuralErrors, type Schema } from '../operator/kube/openapi.ts'

const load = (file: string) => parse(readFileSync(fileURLToPath(new URL(`../../crds/${file}`, import.meta.url)), 'utf8')) as Schema
const crds = { BrowserSession: load('browsersessions.nightjar.dev.yaml'), Network: load('networks.nightjar.dev.yaml') }
const schemaOf = (crd: Schema) => crd.spec.versions[0].schema.openAPIV3Schema as Schema

// The structural-schema checker is the one the chart tests use (test/operator/kube/openapi.ts).

// --- a minimal validator with pruning -----------------------------------------------------
function validate(s: Schema, v: unknown, path = ''): string[] {
  const here = path || '<root>'
  if (!matchesType(s.type, v)) return [`${here}: expected ${s.type}, got ${JSON.stringify(v)}`]
  const errs: string[] = []
  if (s.enum && !s.enum.includes(v)) errs.push(`${here}: ${JSON.stringify(v)} not in ${s.enum.join('|')}`)
  if (typeof v === 'string') {
    if (s.maxLength !== undefined && v.length > s.maxLength) errs.push(`${here}: longer than ${s.maxLength}`)
    if (s.minLength !== undefined && v.length < s.minLength) errs.push(`${here}: shorter than ${s.minLength}`)
    if (s.format === 'date-time' && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v)) errs.push(`${here}: not a date-time`)
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum) errs.push(`${here}: below ${s.minimum}`)
    if (s.maximum !== undefined && v > s.maximum) errs.push(`${here}: above ${s.maximum}`)
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(`${here}: more than ${s.maxItems} items`)
    v.forEach((item, i) => errs.push(...validate(s.items, item, `${path}[${i}]`)))
  }
  if (s.type === 'object' && v && typeof v === 'object' && !Array.isArray(v)) {
    if (path === '.metadata') return errs
    for (const r of s.required ?? []) if (!(r in v)) errs.push(`${here}: ${r} is required`)
    for (const [k, val] of Object.entries(v)) {
      const sub = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined)
      if (!sub) {
        if (!s['x-kubernetes-preserve-unknown-fields']) errs.push(`${path}.${k}: unknown field (a real api-server would prune it)`)
        continue
      }
      errs.push(...validate(sub, val, `${path}.${k}`))
    }
  }
  return errs
}

// --- tests --------------------------------------------------------------------------------

t.test('CRDs are valid CustomResourceDefinitions', async (t) => {
  for (const [kind, crd] of Object.entries(crds)) {
    t.doesNotThrow(() => new CustomResourceDefinition(crd as never).validate(), `${kind} passes the Kubernetes OpenAPI schema`)
    t.equal(crd.spec.group, 'nightjar.dev')
    t.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`)
    t.equal(crd.spec.names.kind, kind)
    t.equal(crd.spec.names.listKind, `${kind}List`)
    t.equal(crd.spec.scope, 'Namespaced')
    t.same(crd.spec.names.categories, ['nightjar'])
    const v = crd.spec.versions[0]
    t.equal(v.name, 'v1')
    t.ok(v.served && v.storage)
    t.same(v.subresources, { status: {} }, 'status subresource')
    t.equal(`${crd.spec.group}/${v.name}`, API_VERSION)
  }
  t.same(crds.BrowserSession.spec.names.shortNames, ['bs'])
  t.same(crds.Network.spec.names.shortNames, ['nnet'])
})

t.test('[ISSUE-38] v1 is served and stored; v1alpha1 is still served, deprecated, with the same shape (conversion None)', async (t) => {
  for (const [kind, crd] of Object.entries(crds)) {
    t.same(crd.spec.versions.map((v: Schema) => [v.name, v.served, v.storage]), [[VERSION, true, true], ...DEPRECATED_VERSIONS.map((n) => [n, true, false])], `${kind}: v1 stored, v1alpha1 served`)
    t.same(crd.spec.conversion, { strategy: 'None' }, `${kind}: the api-server rewrites apiVersion only, no webhook`)
    const [stable, alpha] = crd.spec.versions
    // strategy None is only right while the shapes are identical: schema, subresources, columns
    t.same(alpha.schema, stable.schema, `${kind}: v1alpha1 has v1's schema`)
    t.same(alpha.subresources, stable.subresources)
    t.same(alpha.additionalPrinterColumns, stable.additionalPrinterColumns)
    t.equal(stable.deprecated, undefined, `${kind}: v1 is not deprecated`)
    t.equal(alpha.deprecated, true)
    t.equal(alpha.deprecationWarning, `nightjar.dev/v1alpha1 ${kind} is deprecated; use nightjar.dev/v1 ${kind}`, 'kubectl and clients of v1alpha1 are told what to use')
  }
})

t.test('the enums are the ones crds/types.ts declares', async (t) => {
  const spec = schemaOf(crds.BrowserSession).properties.spec.properties
  t.same(spec.browserKind.enum, BROWSER_KINDS)
  t.same(spec.egress.enum, EGRESS_MODES)
})

t.test('printer columns show phase, egress, identity and age', async (t) => {
  const cols = (crd: Schema) => Object.fromEntries(crd.spec.versions[0].additionalPrinterColumns.map((c: Schema) => [c.name, c.jsonPath]))
  t.match(cols(crds.BrowserSession), { Phase: '.status.phase', Egress: '.spec.egress', Identity: '.spec.identityId', Age: '.metadata.creationTimestamp' })
  t.match(cols(crds.Network), { Daemons: '.status.daemonCount', Online: '.status.onlineDaemonCount', Age: '.metadata.creationTimestamp' })
  // every simple column path names a field the schema has
  for (const crd of Object.values(crds)) {
    for (const c of crd.spec.versions[0].additionalPrinterColumns as Schema[]) {
      if (c.jsonPath.startsWith('.metadata') || c.jsonPath.includes('[')) continue
      let node: Schema | undefined = schemaOf(crd)
      for (const part of c.jsonPath.slice(1).split('.')) node = node?.properties?.[part]
      t.ok(node, `${crd.spec.names.kind} column ${c.name} → ${c.jsonPath} exists`)
    }
  }
})

t.test('schemas are structural', async (t) => {
  for (const [kind, crd] of Object.entries(crds)) {
    for (const v of crd.spec.versions) t.same(structuralErrors(v.schema.openAPIV3Schema), [], `${kind} ${v.name} is structural`)
  }
  // the checker itself catches the classic mistakes
  t.match(structuralErrors({ type: 'object', properties: { a: { description: 'untyped' } } }), ['.a: type is required'])
  t.match(structuralErrors({ type: 'object', properties: { a: { type: 'array' } } }), ['.a: array needs a single items schema'])
  t.match(structuralErrors({ type: 'object', properties: { a: { type: 'object' } } }), [/object without properties/])
  t.match(structuralErrors({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), [/only name and generateName/])
  t.match(structuralErrors({ type: 'object', properties: { a: { type: 'string', anyOf: [{ type: 'string' }] } } }), [/type is not allowed inside anyOf/])
  t.match(
    structuralErrors({ type: 'object', properties: { c: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], items: { type: 'object', properties: { type: { type: 'string' } } } } } }),
    [/must be required or defaulted/],
  )
})

t.test('conditions are a map list keyed by type with the metav1.Condition fields', async (t) => {
  for (const crd of Object.values(crds)) {
    const c = schemaOf(crd).properties.status.properties.conditions
    t.equal(c['x-kubernetes-list-type'], 'map')
    t.same(c['x-kubernetes-list-map-keys'], ['type'])
    t.same(Object.keys(c.items.properties).sort(), ['lastTransitionTime', 'message', 'observedGeneration', 'reason', 'status', 'type'])
    t.same(c.items.properties.status.enum, ['True', 'False', 'Unknown'])
  }
})

const meta = (name: string, generation = 1) => ({ name, namespace: 'nightjar', uid: 'uid', resourceVersion: '7', generation, creationTimestamp: '2025-01-01T00:00:00Z', labels: { 'nightjar.dev/org': 'norg_test' } })

t.test('every BrowserSession the reconciler writes fits the schema, nothing pruned', async (t) => {
  const schema = schemaOf(crds.BrowserSession)
  const now = new Date('2025-06-01T12:00:00.123Z')
  const base: BrowserSession = {
    apiVersion: API_VERSION,
    kind: 'BrowserSession',
    metadata: meta('nsess_x'),
    spec: sessionSpec({
      identityId: 'nident_1',
      browserKind: 'cloak',
      egress: 'split',
      networkRef: { name: 'nnet_1' },
      declaredHosts: ['localhost:3000', '[::1]:8080'],
      viewport: { width: 1280, height: 800 },
      url: 'https://login.example.com/',
      warmResume: { versionId: 'niver_1' },
      leaseExpiresAt: '2025-06-01T13:00:00Z',
    }),
  }
  const withStatus = (status: BrowserSession['status']): BrowserSession => ({ ...base, status })
  const pending = withStatus(statusForPod(base, { sessionId: 'nsess_x', phase: 'Pending', podName: 'browser-pod-1' }, now))
  const live = withStatus(statusForPod(pending, { sessionId: 'nsess_x', phase: 'Ready', podName: 'browser-pod-1', endpoint: 'http://127.0.0.1:4000' }, now))
  const failed = withStatus(failedStatus(live, 'PodFailed', 'browser pod exited (code 1)', now))
  const ended = withStatus(endedStatus(live, now))
  for (const [name, obj] of Object.entries({ spec: base, pending, live, failed, ended })) t.same(validate(schema, obj), [], `${name} validates`)
  t.same(validate(schema, { ...base, spec: sessionSpec() }), [], 'the minimal spec validates')
  // and the validator does reject what the api-server would
  t.match(validate(schema, { ...base, spec: { ...base.spec, egress: 'vpn' } }), [/not in local\|split\|platform/])
  t.match(validate(schema, { ...base, spec: { ...base.spec, token: 'x' } }), [/unknown field/])
})

t.test('every Network the reconciler writes fits the schema, nothing pruned', async (t) => {
  const schema = schemaOf(crds.Network)
  const base: Network = { apiVersion: API_VERSION, kind: 'Network', metadata: meta('nnet_1'), spec: { orgId: 'norg_test', name: 'laptop', declaredHosts: ['localhost:3000'] } }
  const status = networkStatus(base, { daemonCount: 2, onlineDaemonCount: 1 }, new Date())
  t.same(validate(schema, base), [])
  t.same(validate(schema, { ...base, status }), [])
})
