// The Helm chart: `helm lint --strict` and `helm template` for the default values and for
// a values file that sets every option; every rendered manifest validated against the
// Kubernetes schemas (kubernetes-models) and checked for unknown fields; Pod Security
// "restricted" for every pod template; least-privilege RBAC; the NetworkPolicy deny floor;
// the CRD templates equal to crds/*.yaml; the env the chart renders accepted by the
// processes' own config parsers. helm comes from scripts/fetch-helm.mjs (.tools/helm).
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { parse } from 'yaml'
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute'
import { loadConfig } from '../../api-server/config.ts'
import { loadOperatorConfig } from '../../operator/kube/operator-config.ts'
import { browserPodManifest } from '../../operator/kube/pod-spec.ts'
import { CRD_FILES, ROOT } from '../operator/kube/helpers.ts'
import { modelFor, structuralErrors, unknownFields } from '../operator/kube/openapi.ts'
import { restrictedViolations } from '../operator/kube/pod-security.ts'
import { CHART, find, FULL, helm, type Obj, RELEASE_NS, render } from './render.ts'
import { standardChannelViolations } from './gateway-api.ts'

const envOf = (container: Obj) => Object.fromEntries((container.env ?? []).map((e: Obj) => [e.name, e.value ?? e.valueFrom]))
const apiPod = (docs: Obj[]): Obj | undefined => find(docs, 'Deployment', /api-server$/)[0]?.spec.template.spec

async function validateAll(t: Test, docs: Obj[]) {
  t.ok(docs.length > 0, 'rendered something')
  for (const doc of docs) {
    const what = `${doc.kind}/${doc.metadata?.name}`
    if (doc.apiVersion === 'gateway.networking.k8s.io/v1' && doc.kind === 'HTTPRoute') {
      // not a built-in type: the Gateway API's own model, and only standard-channel fields
      t.doesNotThrow(() => new HTTPRoute(doc as any).validate(), `${what} is valid against the Gateway API v1 schema`)
      t.same(standardChannelViolations(doc), [], `${what} uses only standard-channel fields`)
      t.ok(doc.metadata.namespace, `${what} names its namespace`)
      continue
    }
    // the Prometheus Operator's kinds are not Kubernetes' own: test/charts/monitoring.test.ts checks them field by field
    if (doc.apiVersion === 'monitoring.coreos.com/v1') continue
    const group = doc.apiVersion.includes('/') ? doc.apiVersion : `${doc.apiVersion}`
    const mod = await import(`kubernetes-models/${group}/${doc.kind}`)
    t.doesNotThrow(() => new mod[doc.kind](doc).validate(), `${what} is valid against the Kubernetes schema`)
    const model = modelFor(doc.apiVersion, doc.kind)
    t.ok(model, `${what}: a known type`)
    t.same(unknownFields(doc, model!), [], `${what} has no field Kubernetes does not know`)
    if (doc.kind !== 'Namespace' && !doc.kind.startsWith('Cluster') && doc.kind !== 'CustomResourceDefinition') t.ok(doc.metadata.namespace, `${what} names its namespace`)
    const pod = doc.kind === 'Deployment' ? doc.spec.template.spec : undefined
    if (pod) t.same(restrictedViolations(pod), [], `${what}: pods meet Pod Security "restricted"`)
  }
}

t.test('helm lint --strict passes for the default values and for every option', async (t) => {
  for (const extra of [[], ['-f', FULL]]) {
    const r = helm(t, ['lint', '--strict', CHART, ...extra])
    t.ok(r.ok, `helm lint --strict ${extra.join(' ') || '(defaults)'}${r.ok ? '' : `\n${r.out}`}`)
  }
})

t.test('default values render valid manifests', async (t) => {
  const docs = render(t)
  await validateAll(t, docs)
  t.same(find(docs, 'CustomResourceDefinition').map((d) => d.metadata.name).sort(), ['browsersessions.nightjar.dev', 'networks.nightjar.dev'])
  t.equal(find(docs, 'Ingress').length, 0, 'no Ingress unless asked')
  const apiEnv = envOf(find(docs, 'Deployment', /api-server$/)[0].spec.template.spec.containers[0])
  t.match(apiEnv, { NIGHTJAR_RECORDING_STORE: 'directory', NIGHTJAR_RECORDING_RETENTION_DAYS: '30', NIGHTJAR_VIDEO_MAX_MINUTES: '60', NIGHTJAR_VIDEO_MAX_MB: '500' }, 'recordings in the data volume, and the video bounds, by default')
  t.notOk('NIGHTJAR_RECORDING_S3_BUCKET' in apiEnv, 'no bucket without store s3')
  const cookie = find(docs, 'Secret', /-cookie$/)[0]
  t.equal(Buffer.from(Object.values<string>(cookie.data)[0], 'base64').length, 48, 'a generated cookie secret')
  t.equal(cookie.metadata.annotations['helm.sh/resource-policy'], 'keep')
  const replica = find(docs, 'Secret', /-replica$/)[0]
  t.equal(Buffer.from(Object.values<string>(replica.data)[0], 'base64').length, 48, 'a generated replica secret')
  t.equal(replica.metadata.annotations['helm.sh/resource-policy'], 'keep')
})

t.test('a values file setting every option renders valid manifests', async (t) => {
  const docs = render(t, ['-f', FULL])
  await validateAll(t, docs)
  t.equal(find(docs, 'CustomResourceDefinition').length, 0, 'crds.install=false leaves the CRDs out')
  const ns = find(docs, 'Namespace')[0]
  t.equal(ns.metadata.name, 'nightjar-sessions')
  t.equal(ns.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted')
  const [main, control] = [find(docs, 'Ingress', /^nightjar-prod$/)[0], find(docs, 'Ingress', /-control$/)[0]]
  t.same(main.spec.rules[0].http.paths.map((p: Obj) => p.path), ['/v1', '/mcp', '/oauth', '/.well-known', '/openapi.json', '/admin'])
  t.same(control.spec.rules[0].http.paths.map((p: Obj) => [p.path, p.pathType]), [['/ws/control', 'Exact']])
  t.equal(control.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'], '3600')
  t.same(main.spec.tls, [{ hosts: ['agents.example.com'], secretName: 'agents-tls' }])
  const api = find(docs, 'Deployment', /api-server$/)[0].spec.template.spec
  t.notOk(api.initContainers, 'no key-file copy with AWS KMS')
  t.equal(envOf(api.containers[0]).NIGHTJAR_HOST, '::', 'an IPv6 or dual-stack cluster listens on ::')
  t.match(envOf(api.containers[0]), { NIGHTJAR_KMS_PROVIDER: 'aws', NIGHTJAR_KMS_REGION: 'eu-west-1', NIGHTJAR_EXTRA: '1', NIGHTJAR_BASE_URL: 'https://agents.example.com' })
  t.same(api.imagePullSecrets, [{ name: 'regcred' }, { name: 'mirror' }])
  t.equal(envOf(api.containers[0]).NIGHTJAR_METRICS_PORT, '9090', '/metrics moves to its own port')
  t.same(envOf(api.containers[0]).NIGHTJAR_METRICS_TOKEN, { secretKeyRef: { name: 'nightjar-metrics', key: 'token' } }, 'the metrics token comes from its Secret')
  t.ok(api.containers[0].ports.some((p: Obj) => p.name === 'metrics' && p.containerPort === 9090), 'the container names the metrics port')
  const apiService = find(docs, 'Service', /api-server$/)[0]
  t.ok(apiService.spec.ports.some((p: Obj) => p.name === 'metrics' && p.port === 9090 && p.targetPort === 'metrics'), 'the Service exposes it in the cluster')
  t.equal(find(docs, 'Deployment', /api-server$/)[0].spec.replicas, 3)
  t.same(envOf(api.containers[0]).NIGHTJAR_REPLICA_SECRET, { secretKeyRef: { name: 'nightjar-replica', key: 'channel' } }, 'the replica secret comes from the named Secret')
  t.equal(find(docs, 'Secret').length, 0, 'no generated Secret when every one is named')
  t.match(envOf(api.containers[0]), { NIGHTJAR_REPLICA_HEARTBEAT_SECONDS: '3', NIGHTJAR_SHUTDOWN_DRAIN_SECONDS: '60' })
  // recordings and videos in one bucket every replica shares; an empty endpoint is AWS's own
  t.match(envOf(api.containers[0]), { NIGHTJAR_RECORDING_STORE: 's3', NIGHTJAR_RECORDING_RETENTION_DAYS: '14', NIGHTJAR_RECORDING_S3_BUCKET: 'nightjar-recordings', NIGHTJAR_RECORDING_S3_PREFIX: 'prod/', NIGHTJAR_RECORDING_S3_REGION: 'eu-west-1', NIGHTJAR_VIDEO_MAX_MINUTES: '30', NIGHTJAR_VIDEO_MAX_MB: '200' })
  t.notOk('NIGHTJAR_RECORDING_S3_ENDPOINT' in envOf(api.containers[0]), 'no endpoint variable when none is set')
  t.equal(api.terminationGracePeriodSeconds, 90, 'an explicit grace period')
  t.equal(find(docs, 'Service', /^nightjar-prod-api-server-replicas$/)[0]?.spec.clusterIP, 'None')
  const browserSa = find(docs, 'ServiceAccount', /browsers$/)[0]
  t.equal(browserSa.metadata.namespace, 'nightjar-sessions')
  t.equal(browserSa.automountServiceAccountToken, false)
})

t.test('the env the chart renders is accepted by the processes that read it', async (t) => {
  for (const extra of [[], ['-f', FULL]]) {
    const docs = render(t, extra)
    const op = find(docs, 'Deployment', /operator$/)[0]?.spec.template.spec.containers[0]
    const api = find(docs, 'Deployment', /api-server$/)[0]?.spec.template.spec.containers[0]
    if (!op || !api) continue
    // downward-API and Secret-backed values stand in as the kubelet would resolve them, and
    // $(VAR) references to variables listed earlier expand as the kubelet expands them
    const stand = (k: string) => k === 'DATABASE_URL' ? 'postgres://u:p@db:5432/nightjar' : k === 'NIGHTJAR_COOKIE_SECRET' ? 'x'.repeat(48) : k === 'NIGHTJAR_REPLICA_SECRET' ? 'r'.repeat(48) : k === 'NIGHTJAR_METRICS_TOKEN' ? 'm'.repeat(32) : k === 'POD_IP' ? '10.1.2.3' : k.includes('NAMESPACE') ? RELEASE_NS : 'pod-0'
    const resolve = (env: Obj) => {
      const out: Record<string, string> = {}
      for (const [k, v] of Object.entries(env)) out[k] = typeof v === 'string' ? v.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, name) => out[name] ?? ref) : stand(k)
      return out
    }
    const opCfg = loadOperatorConfig(resolve(envOf(op)), RELEASE_NS)
    const values = parse(readFileSync(extra.length ? FULL : `${CHART}/values.yaml`, 'utf8'))
    t.same(opCfg.browser.resources, values.browserPods.resources, 'browser pod resources reach the operator')
    t.same(opCfg.browser.denyCidrs, values.browserPods.networkPolicy.denyCidrs, 'the gateway gets the NetworkPolicy deny floor')
    t.equal(opCfg.poolSize, values.browserPods.warmPoolSize)
    t.match(opCfg.browser.image, new RegExp(`/${values.images.browserPod}:`))
    t.match(opCfg.browser.cloakImage, new RegExp(`/${values.images.browserPodCloak}:`))
    t.doesNotThrow(() => loadConfig(resolve(envOf(api))), 'the api-server accepts its env')
    t.equal(resolve(envOf(api)).NIGHTJAR_REPLICA_ADDRESS, 'http://10.1.2.3:8080', 'the replica address expands to the pod IP and the container port')
  }
})

t.test('two browser images: the headless one for every kind but cloak, which gets the full browser', async (t) => {
  const opEnv = (extra: string[]) => envOf(find(render(t, extra), 'Deployment', /operator$/)[0]?.spec.template.spec.containers[0] ?? {})
  const defaults = opEnv([])
  t.equal(defaults.NIGHTJAR_BROWSER_IMAGE, 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.2.0', 'the headless image, tagged with the appVersion')
  t.equal(defaults.NIGHTJAR_BROWSER_CLOAK_IMAGE, 'ghcr.io/nightjar-dev/nightjar-browser-pod-cloak:0.2.0', 'the cloak image beside it, from the same registry and tag')
  const set = opEnv(['--set', 'images.registry=registry.example.com/platform', '--set', 'images.tag=9.9.9', '--set', 'images.browserPodCloak=my-cloak'])
  t.equal(set.NIGHTJAR_BROWSER_CLOAK_IMAGE, 'registry.example.com/platform/my-cloak:9.9.9', 'images.browserPodCloak names it')
  t.equal(set.NIGHTJAR_BROWSER_IMAGE, 'registry.example.com/platform/nightjar-browser-pod:9.9.9', 'and leaves the headless image alone')
  const cfg = loadOperatorConfig({ NIGHTJAR_BROWSER_IMAGE: set.NIGHTJAR_BROWSER_IMAGE, NIGHTJAR_BROWSER_CLOAK_IMAGE: set.NIGHTJAR_BROWSER_CLOAK_IMAGE, NIGHTJAR_POD_NAME: 'op-0' }, RELEASE_NS)
  const pod = (browserKind: 'chromium' | 'cloak') => (browserPodManifest({ name: 'p', namespace: RELEASE_NS, browserKind, tokenSecretName: 't', pool: true }, cfg.browser) as Obj).spec.containers[0].image
  t.equal(pod('chromium'), set.NIGHTJAR_BROWSER_IMAGE, 'a chromium pod runs the headless image')
  t.equal(pod('cloak'), 'registry.example.com/platform/my-cloak:9.9.9', 'a cloak pod runs the cloak image')
  for (const bad of ['images.browserPodCloak=', 'images.browserPodClaok=x']) {
    const r = helm(t, ['template', 'nj', CHART, '--set', bad])
    t.notOk(r.ok, `the schema rejects ${bad}`)
  }
})

t.test('RBAC is namespaced and least-privilege', async (t) => {
  for (const extra of [[], ['-f', FULL]]) {
    const docs = render(t, extra)
    // node health reads Nodes, cluster-wide, and nothing else there
    const nodeRead = docs.filter((d) => d.kind.startsWith('Cluster') && d.metadata.name.endsWith('-node-health'))
    t.same(nodeRead.map((d) => d.kind), ['ClusterRole', 'ClusterRoleBinding'], 'node health: one ClusterRole and its binding')
    t.same(nodeRead[0].rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }], 'it reads Nodes only')
    t.same(nodeRead[1].subjects.map((s: Obj) => s.name), [find(docs, 'Deployment', /operator$/)[0].spec.template.spec.serviceAccountName], 'bound to the operator alone')
    const clusterWide = docs.filter((d) => d.kind.startsWith('Cluster') && !nodeRead.includes(d))
    if (extra.length) t.equal(clusterWide.length, 0, 'no other cluster-wide roles without crds.install')
    else {
      // the release that installs the CRDs migrates what they store after an upgrade
      t.same(clusterWide.map((d) => `${d.kind} ${d.metadata.name}`), ['ClusterRole nj-nightjar-nightjar-storage-migration', 'ClusterRoleBinding nj-nightjar-nightjar-storage-migration'], 'one other cluster-wide grant: the storage migration')
      const crdNames = ['browsersessions.nightjar.dev', 'networks.nightjar.dev']
      t.same(clusterWide[0].rules.map((r: Obj) => [r.apiGroups, r.resources, r.resourceNames, r.verbs]), [
        [['apiextensions.k8s.io'], ['customresourcedefinitions'], crdNames, ['get']],
        [['apiextensions.k8s.io'], ['customresourcedefinitions/status'], crdNames, ['patch']],
        [['nightjar.dev'], ['browsersessions', 'networks'], undefined, ['list']],
        [['nightjar.dev'], ['browsersessions/status', 'networks/status'], undefined, ['patch']],
      ], 'read and patch the status of our two CRDs only (pinned by name); list the resources and patch their status, nothing else')
      t.same(clusterWide[1].subjects, [{ kind: 'ServiceAccount', name: 'nj-nightjar-operator', namespace: RELEASE_NS }], 'bound to the operator alone')
    }
    const roles = find(docs, 'Role')
    for (const role of roles) {
      for (const rule of role.rules) {
        t.notOk([...rule.verbs, ...rule.resources, ...rule.apiGroups].includes('*'), `${role.metadata.name}: no wildcards`)
      }
    }
    const op = roles.find((r) => r.metadata.name.endsWith('-operator'))!
    const secretRule = op.rules.find((r: Obj) => r.resources.includes('secrets'))
    t.notOk(secretRule.verbs.some((v: string) => ['list', 'watch'].includes(v)), 'the operator cannot list Secrets')
    const statusRule = op.rules.find((r: Obj) => r.resources.includes('browsersessions/status'))
    t.ok(statusRule, 'status through the subresource')
    const crRules = op.rules.filter((r: Obj) => r.resources.includes('browsersessions') || r.resources.includes('networks'))
    t.same(crRules.map((r: Obj) => [r.resources, r.verbs]), [[['browsersessions', 'networks'], ['get', 'list', 'watch']], [['browsersessions'], ['delete']]], 'the operator reads the resources and deletes only ended sessions (retention); never creates or edits them')
    const lease = roles.find((r) => r.metadata.name.endsWith('-leader-election'))!
    const pinned = lease.rules.find((r: Obj) => r.verbs.includes('update'))
    t.same(pinned.resourceNames, [extra.length ? 'nightjar-prod-operator' : 'nightjar-operator'], 'the Lease rule is pinned by name')
    t.same(lease.rules.find((r: Obj) => !r.resourceNames).verbs, ['create'], 'only create is unpinned (RBAC cannot pin it)')
    t.equal(lease.metadata.namespace, RELEASE_NS)
    const api = roles.find((r) => r.metadata.name.endsWith('-api-server'))!
    t.same(api.rules.find((r: Obj) => r.resources.includes('secrets')).verbs, ['get', 'create'], 'pod tokens are read; warm-resume auth-state Secrets are created, never listed, edited or deleted')
    for (const b of find(docs, 'RoleBinding')) t.ok(roles.some((r) => r.metadata.name === b.roleRef.name && r.metadata.namespace === b.metadata.namespace), `${b.metadata.name} binds a Role of its namespace`)
  }
})

t.test('browser pods: the NetworkPolicy deny floor, DNS and the control plane', async (t) => {
  const docs = render(t, ['-f', FULL])
  const np = find(docs, 'NetworkPolicy')[0]
  if (!np) return
  t.equal(np.metadata.namespace, 'nightjar-sessions')
  t.same(np.spec.podSelector.matchLabels, { 'app.kubernetes.io/component': 'browser-pod', 'app.kubernetes.io/managed-by': 'nightjar-operator' }, 'selects the pods the operator creates')
  const [internet, control, dns, extra] = np.spec.egress
  t.same(internet.to, [
    { ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '169.254.0.0/16'] } },
    { ipBlock: { cidr: '::/0', except: ['fd00:ec2::/32'] } },
  ])
  t.same(internet.ports, [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }])
  t.match(control.to[0].podSelector.matchLabels, { 'app.kubernetes.io/component': 'api-server' })
  t.same(dns.ports.map((p: Obj) => p.protocol), ['UDP', 'TCP'])
  t.same(extra.ports, [{ port: 5432, protocol: 'TCP' }])
  t.same(np.spec.ingress[0].ports, [{ port: 9222, protocol: 'TCP' }], 'the pod API port only')
  t.same(np.spec.ingress[0].from.map((f: Obj) => f.podSelector.matchLabels['app.kubernetes.io/component']), ['api-server', 'operator'])
  const defaults = find(render(t), 'NetworkPolicy')[0]
  t.ok(defaults.spec.egress[0].to[0].ipBlock.except.includes('169.254.0.0/16'), 'the default floor denies the metadata range')
})

t.test('the local KMS key is copied into a private file, never mounted group-readable', async (t) => {
  const docs = render(t)
  const spec = find(docs, 'Deployment', /api-server$/)[0]?.spec.template.spec
  if (!spec) return
  t.equal(spec.initContainers[0].name, 'kms-key')
  t.match(spec.initContainers[0].command.join(' '), /chmodSync\('\/var\/run\/nightjar\/kms\/kms\.key',0o600\)/)
  t.equal(envOf(spec.containers[0]).NIGHTJAR_KMS_KEY_FILE, '/var/run/nightjar/kms/kms.key')
  t.same(spec.volumes.find((v: Obj) => v.name === 'kms').emptyDir, { medium: 'Memory', sizeLimit: '1Mi' })
  const none = find(render(t, ['--set', 'kms.provider=none']), 'Deployment', /api-server$/)[0]?.spec.template.spec
  t.notOk(none?.initContainers)
})

t.test('values.schema.json refuses unknown keys and incomplete settings', async (t) => {
  for (const [args, why] of [
    [['--set', 'bogus=1'], /additional properties 'bogus' not allowed/],
    [['--set', 'operator.leaderElection.bogus=1'], /additional properties 'bogus' not allowed/],
    [['--set', 'kms.provider=aws'], /keyId/],
    [['--set', 'browserPods.networkPolicy.denyCidrs[0]=not-a-cidr'], /denyCidrs/],
    [['--set', 'apiServer.listenHost=localhost'], /listenHost/],
    [['--set', 'operator.priorityClassName=Platform_High'], /priorityClassName/],
    [['--set', 'apiServer.pdb.bogus=1'], /additional properties 'bogus' not allowed/],
    [['--set', 'gateway.httpRoute.enabled=true'], /parentRefs/],
    [['--set', 'apiServer.recordings.store=s3'], /bucket/],
    [['--set', 'apiServer.recordings.store=disk'], /store/],
  ] as [string[], RegExp][]) {
    const r = helm(t, ['template', 'nj', CHART, ...args])
    t.notOk(r.ok, `${args.join(' ')} is refused`)
    t.match(r.out, why)
  }
})

t.test('the chart’s CRD templates equal crds/*.yaml (no drift), with helm.sh/resource-policy: keep', async (t) => {
  for (const file of CRD_FILES) {
    const source = readFileSync(`${ROOT}crds/${file}`, 'utf8')
    const copy = readFileSync(`${CHART}/files/crds/${file}`, 'utf8')
    t.ok(source === copy, `charts/nightjar/files/crds/${file} is a copy of crds/${file} (fix: cp crds/*.yaml charts/nightjar/files/crds/)`)
  }
  const rendered = find(render(t), 'CustomResourceDefinition')
  for (const file of CRD_FILES) {
    const want = parse(readFileSync(`${ROOT}crds/${file}`, 'utf8'))
    const got = rendered.find((d) => d.metadata.name === want.metadata.name)
    if (!got) {
      t.fail(`${want.metadata.name} not rendered`)
      continue
    }
    t.equal(got.metadata.annotations?.['helm.sh/resource-policy'], 'keep')
    const { annotations: _a, ...meta } = got.metadata
    t.same({ ...got, metadata: meta }, want, `${want.metadata.name}: rendered = crds/${file}`)
  }
})

t.test('CRD schemas are structural', async (t) => {
  for (const file of CRD_FILES) {
    const crd = parse(readFileSync(`${ROOT}crds/${file}`, 'utf8'))
    for (const v of crd.spec.versions) t.same(structuralErrors(v.schema.openAPIV3Schema), [], `${crd.metadata.name} ${v.name}`)
  }
  // and the checker is not a rubber stamp
  t.ok(structuralErrors({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }).some((e) => /type is required/.test(e)))
  t.ok(structuralErrors({ type: 'object', properties: { s: { type: 'object' } } }).some((e) => /without properties/.test(e)))
  t.ok(structuralErrors({ type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'] } } }).some((e) => /required or defaulted/.test(e)))
})

t.test('the chart renders for the server it is installed on: 1.20 gets policy/v1beta1 PodDisruptionBudgets and CRDs without CEL rules', async (t) => {
  const cel = (docs: Obj[]) => find(docs, 'CustomResourceDefinition').flatMap((c) => c.spec.versions.filter((v: Obj) => v.schema.openAPIV3Schema.properties.spec['x-kubernetes-validations']))
  const old = render(t, ['--kube-version', '1.20.2'])
  t.same(find(old, 'PodDisruptionBudget').map((p) => p.apiVersion), ['policy/v1beta1', 'policy/v1beta1', 'policy/v1beta1'], 'policy/v1 does not exist before 1.21')
  t.equal(cel(old).length, 0, 'a 1.20 schema does not know x-kubernetes-validations: helm would refuse the release')
  const current = render(t, ['--kube-version', '1.27.0'])
  t.same(find(current, 'PodDisruptionBudget').map((p) => p.apiVersion), ['policy/v1', 'policy/v1', 'policy/v1'])
  t.equal(cel(current).length, 4, 'both CRDs keep their CEL rules (in both served versions) where the server enforces them')
  for (const p of find(current, 'PodDisruptionBudget')) {
    const mod = await import('kubernetes-models/policy/v1/PodDisruptionBudget')
    t.doesNotThrow(() => new mod.PodDisruptionBudget(p).validate(), `${p.metadata.name} is a valid policy/v1 PodDisruptionBudget`)
  }
})

t.test('the operator may record Events in the sessions namespace and on its own Pod, and nothing more on them', async (t) => {
  const roles = find(render(t), 'Role')
  for (const name of [/-operator$/, /-operator-leader-election$/]) {
    const role = roles.find((r) => name.test(r.metadata.name))!
    const rule = role.rules.find((r: Obj) => r.resources.includes('events'))
    t.same(rule?.verbs, ['create', 'patch'], `${role.metadata.name}: create and patch Events only`)
  }
  const op = find(render(t), 'Deployment', /-operator$/)[0]
  t.same(envOf(op.spec.template.spec.containers[0]).NIGHTJAR_POD_UID, { fieldRef: { fieldPath: 'metadata.uid' } }, 'the operator knows its own Pod uid (downward API) to record pool events on it')
})

t.test('the api-server runs 2 replicas by default: a PodDisruptionBudget, a headless Service between them, the replica channel, rollouts that keep the count', async (t) => {
  const docs = render(t)
  const deploy = find(docs, 'Deployment', /api-server$/)[0]
  if (!deploy) return
  const selector = deploy.spec.selector.matchLabels
  t.equal(deploy.spec.replicas, 2, 'two replicas by default')
  t.same(deploy.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }, 'a rollout starts a new pod before it stops an old one: never below the desired count')
  const pdb = find(docs, 'PodDisruptionBudget', /api-server$/)[0]
  t.equal(pdb?.spec.maxUnavailable, 1, 'voluntary disruptions take one api-server pod at a time')
  t.notOk(pdb?.spec.minAvailable)
  t.same(pdb?.spec.selector.matchLabels, selector)

  const pod = deploy.spec.template.spec
  const container = pod.containers[0]
  const port = container.ports.find((p: Obj) => p.name === 'http').containerPort
  const env = envOf(container)
  t.equal(env.NIGHTJAR_PORT, String(port), 'the server listens on the container port')
  const peers = find(docs, 'Service', /-api-server-replicas$/)
  t.same(peers.map((s) => s.metadata.name), ['nj-nightjar-api-server-replicas'], 'one Service for replica-to-replica traffic')
  const peer = peers[0]
  t.equal(peer.spec.clusterIP, 'None', 'headless: one DNS record per pod')
  t.equal(peer.spec.publishNotReadyAddresses, true, 'a draining (not ready) replica still holds WebSockets: it stays addressable')
  t.same(peer.spec.selector, selector, 'selects the api-server pods')
  t.same(peer.spec.ports, [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }], 'on the container port')
  t.equal(find(docs, 'Service', /-api-server$/)[0]?.spec.clusterIP, undefined, 'the client-facing Service keeps its ClusterIP')

  const names = container.env.map((e: Obj) => e.name)
  t.ok(names.indexOf('POD_IP') >= 0 && names.indexOf('POD_IP') < names.indexOf('NIGHTJAR_REPLICA_ADDRESS'), 'POD_IP is listed before the variable that expands it (the kubelet expands only earlier ones)')
  t.same(env.POD_IP, { fieldRef: { fieldPath: 'status.podIP' } }, 'the pod IP from the downward API')
  t.equal(env.NIGHTJAR_REPLICA_ADDRESS, `http://$(POD_IP):${port}`, 'other replicas reach this one at its pod IP and container port')
  t.equal(env.NIGHTJAR_REPLICA_HEARTBEAT_SECONDS, '5')
  const secret = find(docs, 'Secret', /-replica$/)[0]
  t.same(env.NIGHTJAR_REPLICA_SECRET, { secretKeyRef: { name: 'nj-nightjar-replica', key: 'replica-secret' } }, 'the replica secret from the generated Secret')
  t.equal(secret?.metadata.name, 'nj-nightjar-replica')
  const generated = Buffer.from(secret?.data['replica-secret'] ?? '', 'base64').toString()
  t.match(generated, /^[\x21-\x7e]{32,512}$/, '32-512 printable characters, as the api-server requires')
  t.not(generated, Buffer.from(find(docs, 'Secret', /-cookie$/)[0].data['cookie-secret'], 'base64').toString(), 'not the cookie secret')
  const template = readFileSync(`${CHART}/templates/api-server.yaml`, 'utf8') + readFileSync(`${CHART}/templates/_helpers.tpl`, 'utf8')
  t.match(template, /define "nightjar\.generatedSecret"[\s\S]*lookup "v1" "Secret"/, 'generated Secrets are read back on upgrade (lookup), like the cookie secret')
  t.match(template, /include "nightjar\.generatedSecret" \(dict "ctx" \$ "name" \(include "nightjar\.replicaSecretName" \.\)/, 'the replica secret is one of them')

  const own = render(t, ['--set', 'apiServer.replicaSecret.existingSecret=peers', '--set', 'apiServer.replicaSecret.key=k'])
  t.equal(find(own, 'Secret', /-replica$/).length, 0, 'no generated Secret when one is named')
  t.same(envOf(apiPod(own)?.containers[0] ?? {}).NIGHTJAR_REPLICA_SECRET, { secretKeyRef: { name: 'peers', key: 'k' } }, 'apiServer.replicaSecret.existingSecret is honoured')

  // graceful shutdown: the kubelet waits longer than the server drains
  t.equal(env.NIGHTJAR_SHUTDOWN_DRAIN_SECONDS, '60', 'the chart sets the drain (long enough for a start in flight during a rollout)')
  t.ok(pod.terminationGracePeriodSeconds > Number(env.NIGHTJAR_SHUTDOWN_DRAIN_SECONDS), `grace period ${pod.terminationGracePeriodSeconds}s > drain ${env.NIGHTJAR_SHUTDOWN_DRAIN_SECONDS}s`)
  t.equal(env.NIGHTJAR_SHUTDOWN_DELAY_SECONDS, '10', 'and a shutdown delay, served on while kube-proxy stops routing to the pod')
  t.equal(pod.terminationGracePeriodSeconds, 85, 'delay + drain + 15s by default')
  const longer = apiPod(render(t, ['--set', 'apiServer.shutdownDrainSeconds=120']))
  t.equal(envOf(longer?.containers[0] ?? {}).NIGHTJAR_SHUTDOWN_DRAIN_SECONDS, '120')
  t.equal(longer?.terminationGracePeriodSeconds, 145, 'the grace period follows the drain')
  const short = helm(t, ['template', 'nj', CHART, '--set', 'apiServer.terminationGracePeriodSeconds=35'])
  t.notOk(short.ok, 'a grace period at or below the drain is refused')
  t.match(short.out, /terminationGracePeriodSeconds \(35\) must be above apiServer\.shutdownDelaySeconds \+ apiServer\.shutdownDrainSeconds \(70\)/)

  // a NetworkPolicy that restricts ingress to api-server pods must let the other replicas in
  for (const np of [...find(docs, 'NetworkPolicy'), ...find(render(t, ['-f', FULL]), 'NetworkPolicy')]) {
    const labels = { ...selector, ...deploy.spec.template.metadata.labels }
    const selectsApi = np.metadata.namespace === RELEASE_NS && Object.entries(np.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) && (np.spec.policyTypes ?? ['Ingress']).includes('Ingress')
    if (!selectsApi) continue
    const peersAllowed = (np.spec.ingress ?? []).some((r: Obj) => (r.from ?? []).some((f: Obj) => f.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'api-server') && (!r.ports || r.ports.some((p: Obj) => p.port === port || p.port === 'http')))
    t.ok(peersAllowed, `${np.metadata.name} lets api-server replicas reach each other on port ${port}`)
  }

  const single = render(t, ['--set', 'apiServer.replicas=1'])
  t.equal(find(single, 'Deployment', /api-server$/)[0]?.spec.replicas, 1, 'one replica still renders')
})

t.test('[ISSUE-38] availability: api-server and operator pods take topologySpreadConstraints and a priorityClassName, beside their PodDisruptionBudgets', async (t) => {
  const docs = render(t, ['-f', FULL])
  const values = parse(readFileSync(FULL, 'utf8'))
  for (const [component, key] of [['api-server', 'apiServer'], ['operator', 'operator']] as const) {
    const deploy = find(docs, 'Deployment', new RegExp(`-${component}$`))[0]
    const pod = deploy?.spec.template.spec
    t.same(pod?.topologySpreadConstraints, values[key].topologySpreadConstraints, `${component}: topologySpreadConstraints as given`)
    t.equal(pod?.priorityClassName, values[key].priorityClassName, `${component}: priorityClassName as given`)
    const pdb = find(docs, 'PodDisruptionBudget', new RegExp(`-${component}$`))[0]
    t.same(pdb?.spec.selector.matchLabels, deploy?.spec.selector.matchLabels, `${component}: its PodDisruptionBudget selects its pods`)
  }
  const defaults = render(t)
  for (const component of ['api-server', 'operator']) {
    const pod = find(defaults, 'Deployment', new RegExp(`-${component}$`))[0]?.spec.template.spec
    t.notOk(pod?.topologySpreadConstraints ?? pod?.priorityClassName, `${component}: neither by default (the cluster's defaults apply)`)
  }
})

t.test('[ISSUE-37] browser pods: scheduling values reach the operator, node health and its RBAC, the PodDisruptionBudget over session pods', async (t) => {
  const opEnv = (docs: Obj[]) => {
    const env = envOf(find(docs, 'Deployment', /operator$/)[0].spec.template.spec.containers[0])
    return loadOperatorConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, typeof v === 'string' ? v : 'pod-0'])), RELEASE_NS)
  }
  const values = parse(readFileSync(FULL, 'utf8')).browserPods
  const full = opEnv(render(t, ['-f', FULL]))
  t.same(full.browser.nodeSelector, values.nodeSelector)
  t.same(full.browser.tolerations, values.tolerations)
  t.same(full.browser.affinity, values.affinity)
  t.same(full.browser.topologySpreadConstraints, values.topologySpreadConstraints, 'given constraints replace the default spread')
  t.equal(full.browser.priorityClassName, values.priorityClassName)
  t.same(full.nodes, { suspectAfterMs: 20_000, unreachableMs: 8_000, drainGraceMs: 300_000 })

  const defaults = render(t)
  const cfg = opEnv(defaults)
  t.equal(cfg.browser.topologySpreadConstraints, undefined, 'by default the operator’s own soft spread over nodes applies')
  t.notOk(cfg.browser.affinity ?? cfg.browser.priorityClassName, 'no affinity or priority class by default')
  t.same(cfg.nodes, { suspectAfterMs: 15_000, unreachableMs: 6_000, drainGraceMs: 600_000 })
  const leases = find(defaults, 'Role', /-node-leases$/)[0]
  t.equal(leases?.metadata.namespace, 'kube-node-lease')
  t.same(leases?.rules, [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] }], 'the kubelets’ Leases, read only')
  const pdb = find(defaults, 'PodDisruptionBudget', /-browser-sessions$/)[0]
  t.equal(pdb?.metadata.namespace, find(defaults, 'Role', /-operator$/)[0].metadata.namespace, 'in the sessions namespace')
  t.equal(pdb?.spec.maxUnavailable, 0, 'a session pod is never evicted: the operator ends its session first')
  t.same(pdb?.spec.selector, { matchLabels: { 'app.kubernetes.io/component': 'browser-pod', 'app.kubernetes.io/managed-by': 'nightjar-operator' }, matchExpressions: [{ key: 'nightjar.dev/session', operator: 'Exists' }] }, 'warm pods (no session label) are not covered and leave at once')

  const off = render(t, ['--set', 'browserPods.nodeHealth.enabled=false', '--set', 'browserPods.spreadOverNodes=false', '--set', 'browserPods.disruptionBudget.enabled=false'])
  const offCfg = opEnv(off)
  t.equal(offCfg.nodes, undefined, 'node health off')
  t.same(offCfg.browser.topologySpreadConstraints, [], 'no spread')
  t.equal(off.filter((d) => /-node-(health|leases)$/.test(d.metadata.name)).length, 0, 'and no node-reading RBAC')
  t.equal(find(off, 'PodDisruptionBudget', /-browser-sessions$/).length, 0)
})
