// The chart's observability values: ServiceMonitors and PodMonitors that select
// exactly the api-server's and the operator's metrics endpoints, a PrometheusRule whose
// alerts read series the code exports, a Grafana dashboard ConfigMap for the sidecar, and the
// tracing settings reaching the api-server, the operator and — without the collector's
// headers — the browser pods. helm comes from scripts/fetch-helm.mjs (.tools/helm).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { parseAllDocuments } from 'yaml'
import { loadOperatorConfig } from '../../operator/kube/operator-config.ts'
import { browserPodManifest } from '../../operator/kube/pod-spec.ts'
import { ROOT } from '../operator/kube/helpers.ts'

type Obj = Record<string, any>
const HELM = `${ROOT}.tools/helm`
const CHART = `${ROOT}charts/nightjar`
const FULL = `${CHART}/ci/full-values.yaml`
const NS = 'nightjar'
const OBSERVABILITY_DOC = readFileSync(`${ROOT}docs/observability.md`, 'utf8')

function render(t: Test, extra: string[] = []): Obj[] {
  if (!existsSync(HELM)) {
    t.fail('helm is not installed at .tools/helm — run `node scripts/fetch-helm.mjs`')
    return []
  }
  const r = spawnSync(HELM, ['template', 'nj', CHART, '--namespace', NS, ...extra], { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: '/tmp/nightjar-helm/cache', HELM_CONFIG_HOME: '/tmp/nightjar-helm/config', HELM_DATA_HOME: '/tmp/nightjar-helm/data' } })
  if (r.status !== 0) {
    t.fail(`helm template failed:\n${r.stdout}${r.stderr}`)
    return []
  }
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj).filter(Boolean)
}

const find = (docs: Obj[], kind: string, name?: RegExp) => docs.filter((d) => d.kind === kind && (!name || name.test(d.metadata.name)))
const envOf = (container: Obj) => Object.fromEntries((container.env ?? []).map((e: Obj) => [e.name, e.value ?? e.valueFrom]))
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v)
const container = (docs: Obj[], name: RegExp) => find(docs, 'Deployment', name)[0].spec.template.spec.containers[0]
/** every series a PromQL expression reads (names of the nightjar_, controller_runtime_, workqueue_ and leader_election_ families) */
const seriesIn = (expr: string) => [...new Set([...expr.matchAll(/\b((?:nightjar|controller_runtime|workqueue|leader_election)_[a-z_]+)/g)].map((m) => m[1].replace(/_(bucket|sum|count)$/, '')))]

t.test('[ISSUE-38] by default: no monitoring objects and no tracing', async (t) => {
  const docs = render(t)
  t.same(docs.filter((d) => d.apiVersion === 'monitoring.coreos.com/v1'), [], 'no ServiceMonitor, PodMonitor or PrometheusRule')
  t.same(find(docs, 'ConfigMap', /dashboard/), [], 'no dashboard')
  for (const c of [container(docs, /api-server$/), container(docs, /operator$/)]) {
    t.same(Object.keys(envOf(c)).filter((k) => k.startsWith('OTEL_')), [], `${c.name}: no OTEL_ variable, so no tracing`)
  }
})

t.test('[ISSUE-38] monitors select exactly the metrics endpoints, with the metrics token', async (t) => {
  const docs = render(t, ['-f', FULL])
  const services = find(docs, 'Service')
  const monitors = find(docs, 'ServiceMonitor')
  t.same(monitors.map((m) => m.metadata.name).sort(), ['nightjar-prod-api-server', 'nightjar-prod-operator'])
  for (const m of monitors) {
    t.equal(m.metadata.labels.release, 'kube-prometheus-stack', 'carries the labels a Prometheus selects by')
    t.same(m.spec.namespaceSelector.matchNames, [NS])
    const matched = services.filter((s) => s.metadata.namespace === NS && selects(m.spec.selector.matchLabels, s.metadata.labels))
    t.equal(matched.length, 1, `${m.metadata.name} selects one Service (${matched.map((s) => s.metadata.name).join(', ')})`)
    const [endpoint] = m.spec.endpoints
    t.ok(matched[0]?.spec.ports.some((p: Obj) => p.name === endpoint.port), `its port ${endpoint.port} is a port of ${matched[0]?.metadata.name}`)
    t.equal(endpoint.path, '/metrics')
    t.equal(endpoint.interval, '15s')
  }
  const api = monitors.find((m) => m.metadata.name.endsWith('api-server'))!
  t.equal(api.spec.endpoints[0].port, 'metrics', 'the api-server is scraped on its metrics port when it has one')
  t.same(api.spec.endpoints[0].authorization, { type: 'Bearer', credentials: { name: 'nightjar-metrics', key: 'token' } }, 'with the metrics token')
  t.notOk(monitors.find((m) => m.metadata.name.endsWith('operator'))!.spec.endpoints[0].authorization, 'the operator needs none')

  const deployments = find(docs, 'Deployment')
  for (const m of find(docs, 'PodMonitor')) {
    const matched = deployments.filter((d) => selects(m.spec.selector.matchLabels, d.spec.template.metadata.labels))
    t.equal(matched.length, 1, `${m.metadata.name} selects one Deployment's pods`)
    const port = m.spec.podMetricsEndpoints[0].port
    t.ok(matched[0]?.spec.template.spec.containers[0].ports.some((p: Obj) => p.name === port), `its port ${port} is a container port of ${matched[0]?.metadata.name}`)
    t.equal(m.spec.podMetricsEndpoints[0].interval, '20s')
  }
  t.equal(find(docs, 'PodMonitor').length, 2)

  const withoutPort = render(t, ['--set', 'metrics.serviceMonitor.enabled=true'])
  t.equal(find(withoutPort, 'ServiceMonitor', /api-server$/)[0].spec.endpoints[0].port, 'http', 'without a metrics port, the main one')
  t.notOk(find(withoutPort, 'ServiceMonitor', /api-server$/)[0].spec.endpoints[0].authorization, 'and no token when none is set')
})

t.test('[ISSUE-38] the PrometheusRule: the alerts that matter, on series the code exports, with the thresholds set', async (t) => {
  const docs = render(t, ['-f', FULL])
  const [rule] = find(docs, 'PrometheusRule')
  t.equal(rule.metadata.labels.release, 'kube-prometheus-stack')
  const rules: Obj[] = rule.spec.groups.flatMap((g: Obj) => g.rules)
  t.same(rules.map((r) => r.alert), ['NightjarStartsFailing', 'NightjarStartLatencyHigh', 'NightjarWarmPoolExhausted', 'NightjarOperatorLeaderMissing'])
  const expr = (alert: string) => rules.find((r) => r.alert === alert)!.expr as string
  t.match(expr('NightjarStartsFailing'), /> 0\.2\b/, 'startFailureRatio')
  t.match(expr('NightjarStartLatencyHigh'), /histogram_quantile\(0\.95,.*nightjar_session_start_duration_seconds_bucket.*> 30\b/s, 'startLatencySeconds on the start histogram')
  t.match(expr('NightjarWarmPoolExhausted'), /result="miss".*> 0\.25\b/s, 'warmPoolMissRatio')
  t.equal(rules.find((r) => r.alert === 'NightjarOperatorLeaderMissing')!.for, '2m', 'leaderMissingFor')
  t.match(expr('NightjarOperatorLeaderMissing'), /leader_election_master_status\{name="nightjar-prod-operator"/, 'the release\'s own Lease')
  for (const r of rules) {
    t.match(r.expr, new RegExp(`namespace="${NS}"`), `${r.alert} reads this release's namespace only`)
    t.ok(r.annotations.summary && r.annotations.description, `${r.alert} says what and where to look`)
    for (const series of seriesIn(r.expr)) t.ok(OBSERVABILITY_DOC.includes(`\`${series}\``), `${r.alert} reads ${series}, which docs/observability.md lists`)
  }
  const noPool = find(render(t, ['--set', 'metrics.prometheusRule.enabled=true', '--set', 'browserPods.warmPoolSize=0']), 'PrometheusRule')[0]
  t.notOk(noPool.spec.groups[0].rules.some((r: Obj) => r.alert === 'NightjarWarmPoolExhausted'), 'no pool, no pool alert')
})

t.test('[ISSUE-38] the dashboard: a ConfigMap for Grafana\'s sidecar, every panel on a documented series', async (t) => {
  const docs = render(t, ['-f', FULL])
  const [cm] = find(docs, 'ConfigMap', /dashboard$/)
  t.equal(cm.metadata.labels.grafana_dashboard, '1', 'the sidecar\'s label')
  t.equal(cm.metadata.annotations.grafana_folder, 'Nightjar')
  const dashboard = JSON.parse(cm.data['nightjar.json'])
  t.equal(dashboard.uid, 'nightjar')
  const exprs: string[] = dashboard.panels.flatMap((p: Obj) => p.targets.map((x: Obj) => x.expr))
  t.ok(exprs.length >= 15, `panels query the series (${exprs.length} queries)`)
  const read = new Set(exprs.flatMap(seriesIn))
  for (const series of read) t.ok(OBSERVABILITY_DOC.includes(`\`${series}\``), `the dashboard reads ${series}, which docs/observability.md lists`)
  for (const series of ['nightjar_session_starts_total', 'nightjar_session_start_duration_seconds', 'nightjar_warm_pool_claims_total', 'nightjar_credential_fills_total', 'nightjar_browser_pod_failures_total', 'leader_election_master_status']) {
    t.ok(read.has(series), `a panel shows ${series}`)
  }
})

t.test('[ISSUE-38] tracing: the standard variables on the api-server and operator; browser pods get where to send, never the headers', async (t) => {
  const docs = render(t, ['-f', FULL])
  const api = envOf(container(docs, /api-server$/))
  const op = envOf(container(docs, /operator$/))
  for (const [name, env] of [['nightjar-api-server', api], ['nightjar-operator', op]] as const) {
    t.match(env, {
      OTEL_SERVICE_NAME: name,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }, `${name}: the OTEL_ variables`)
    t.same(env.OTEL_EXPORTER_OTLP_HEADERS, { secretKeyRef: { name: 'nightjar-otlp', key: 'headers' } }, `${name}: the headers from their Secret`)
  }
  t.equal(op.NIGHTJAR_BROWSER_TRACING, 'false', 'tracing.browserPods.enabled: false reaches the operator')

  // what the operator then gives a browser pod, from the env the chart renders (defaults + an endpoint)
  const on = envOf(container(render(t, ['--set', 'tracing.endpoint=http://otel:4318', '--set', 'tracing.headers.existingSecret=otlp']), /operator$/))
  const resolved = Object.fromEntries(Object.entries(on).map(([k, v]) => [k, typeof v === 'string' ? v : k === 'OTEL_EXPORTER_OTLP_HEADERS' ? 'authorization=Bearer collector-secret' : k.includes('NAMESPACE') ? NS : 'pod-0']))
  const config = loadOperatorConfig(resolved, NS)
  const pod: Obj = browserPodManifest({ name: 'p', namespace: NS, browserKind: 'chromium', tokenSecretName: 's', pool: true }, config.browser)
  const podEnv = envOf(pod.spec.containers[0])
  t.match(podEnv, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, 'the pod sends where the operator does')
  t.notOk('OTEL_EXPORTER_OTLP_HEADERS' in podEnv, 'never with the collector\'s headers')
  t.notOk(JSON.stringify(pod).includes('collector-secret'), 'which appear nowhere in the pod')
  t.notOk('OTEL_SERVICE_NAME' in podEnv, 'the pod names itself (nightjar-browser-pod)')
  const off = loadOperatorConfig({ ...resolved, NIGHTJAR_BROWSER_TRACING: 'false' }, NS)
  t.notOk(off.browser.tracingEnv, 'tracing.browserPods.enabled: false gives pods nothing')
})
