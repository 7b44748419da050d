// Every manifest the chart renders goes through a real kube-apiserver's server-side dry-run
// (decoding, defaulting, validation, admission) for the default values, the values file
// that sets every option, and the toggles between. The HTTPRoute alone is left out: this
// control plane has no Gateway API CRDs to install, so test/charts/httproute.test.ts
// checks it against the Gateway API's v1 model instead.
import t, { type Test } from 'tap'
import { parseAllDocuments, stringify } from 'yaml'
import { CHART, helm, kubectl, kubectlJson, testNamespace } from './helpers.ts'

type Obj = Record<string, any>
const FULL = `${CHART}/ci/full-values.yaml`
const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'RuntimeClass', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass'])

/** kind/name as `kubectl apply -o name` prints it (kind lower-cased, with its group) */
const nameOf = (doc: Obj) => {
  const group = doc.apiVersion.includes('/') ? `.${doc.apiVersion.split('/')[0]}` : ''
  return `${doc.kind.toLowerCase()}${group}/${doc.metadata.name}`
}

async function dryRun(t: Test, label: string, args: string[]) {
  const ns = await testNamespace(t, 'njdry')
  const sessions = await testNamespace(t, 'njdrys')
  const version = (await kubectlJson(['version'])).serverVersion.gitVersion.replace(/^v/, '')
  const out = await helm(['template', 'nj', CHART, '--namespace', ns, '--kube-version', version, '--set', `sessionsNamespace.name=${sessions}`, ...args])
  const docs = parseAllDocuments(out).map((d) => d.toJS() as Obj).filter(Boolean)
  // kinds whose CRDs this control plane lacks: the Gateway API's route, and the Prometheus
  // Operator's monitors and rules (test/charts/monitoring.test.ts checks those field by field)
  const foreign = (d: Obj) => d.kind === 'HTTPRoute' || d.apiVersion === 'monitoring.coreos.com/v1'
  const routes = docs.filter((d) => d.kind === 'HTTPRoute')
  const monitoring = docs.filter((d) => d.apiVersion === 'monitoring.coreos.com/v1')
  const applied = docs.filter((d) => !foreign(d))
  t.ok(applied.length >= 10, `${label}: ${applied.length} manifests rendered`)
  // the kubelets' Leases live in kube-node-lease: the operator's Role to read them goes there
  for (const d of applied) if (!CLUSTER_SCOPED.has(d.kind)) t.ok([ns, sessions, 'kube-node-lease'].includes(d.metadata.namespace), `${label}: ${nameOf(d)} names its namespace`)
  const answer = await kubectl(['apply', '--dry-run=server', '-o', 'name', '-f', '-'], { input: applied.map((d) => stringify(d)).join('---\n') })
  const accepted = answer.trim().split('\n').sort()
  t.same(accepted, applied.map(nameOf).sort(), `${label}: the server accepted every manifest`)
  return { docs, routes, monitoring }
}

t.test('the dry-run is not a rubber stamp: the server refuses what it would refuse for real', async (t) => {
  const ns = await testNamespace(t, 'njdry')
  const bad = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bad', namespace: ns }, spec: { replicas: -1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } }
  const err = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: stringify(bad) }).then(() => '', (e: Error) => e.message)
  t.match(err, /replicas|selector/, 'a Deployment with negative replicas and a selector that misses its pods is refused')
  t.equal((await kubectlJson(['-n', ns, 'get', 'deployments'])).items.length, 0, 'and a dry-run stores nothing')
})

t.test('[ISSUE-38] default values: every rendered manifest passes the server-side dry-run', async (t) => {
  const { routes } = await dryRun(t, 'defaults', [])
  t.equal(routes.length, 0, 'no HTTPRoute by default')
})

t.test('[ISSUE-38] the values file that sets every option: every rendered manifest but the HTTPRoute and the Prometheus objects passes the server-side dry-run', async (t) => {
  const { docs, routes, monitoring } = await dryRun(t, 'full values', ['-f', FULL])
  t.same(routes.map((r) => r.metadata.name), ['nightjar-prod'], 'the HTTPRoute is left out (no Gateway API CRDs here)')
  t.same([...new Set(monitoring.map((m) => m.kind))].sort(), ['PodMonitor', 'PrometheusRule', 'ServiceMonitor'], 'and so are the Prometheus Operator\'s objects (no CRDs for them either)')
  const kinds = new Set(docs.map((d) => d.kind))
  for (const kind of ['Deployment', 'PodDisruptionBudget', 'Ingress', 'NetworkPolicy', 'Namespace', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']) t.ok(kinds.has(kind), `${kind} among them`)
  const api = docs.find((d) => d.kind === 'Deployment' && d.metadata.name.endsWith('-api-server'))
  t.ok(api?.spec.template.spec.topologySpreadConstraints?.length && api?.spec.template.spec.priorityClassName, 'with topologySpreadConstraints and a priorityClassName on the pods')
})

t.test('[ISSUE-38] the toggles between: each renders manifests the server accepts', async (t) => {
  const toggles: [string, string[]][] = [
    ['Ingress with TLS, no control Ingress, metrics on their own port, KMS off, one replica', ['--set', 'ingress.enabled=true', '--set', 'ingress.tls.enabled=true', '--set', 'ingress.tls.secretName=tls', '--set', 'ingress.control.enabled=false', '--set', 'apiServer.metrics.port=9090', '--set', 'kms.provider=none', '--set', 'apiServer.replicas=1']],
    ['no PodDisruptionBudgets, no metrics Service, no NetworkPolicy, no seccomp installer, no CRDs', ['--set', 'apiServer.pdb.enabled=false', '--set', 'operator.pdb.enabled=false', '--set', 'browserPods.disruptionBudget.enabled=false', '--set', 'operator.metricsService.enabled=false', '--set', 'browserPods.networkPolicy.enabled=false', '--set', 'browserPods.seccompProfile.installer.enabled=false', '--set', 'crds.install=false']],
    ['a RuntimeClass, a created sessions namespace, existing ServiceAccounts and Secrets', ['--set', 'browserPods.runtimeClassName=gvisor-dry-run', '--set', 'browserPods.runtimeClass.create=true', '--set', 'sessionsNamespace.create=true', '--set', 'apiServer.serviceAccount.create=false', '--set', 'apiServer.serviceAccount.name=default', '--set', 'apiServer.cookieSecret.existingSecret=cookie', '--set', 'apiServer.replicaSecret.existingSecret=replica']],
    ['spread and priority for the api-server and the operator', ['--set', 'apiServer.priorityClassName=system-cluster-critical', '--set', 'operator.priorityClassName=system-cluster-critical', '--set-json', 'apiServer.topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app.kubernetes.io/component":"api-server"}}}]', '--set-json', 'operator.topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app.kubernetes.io/component":"operator"}}}]']],
  ]
  for (const [label, args] of toggles) await dryRun(t, label, args)
})
