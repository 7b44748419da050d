// The Kubernetes runtime's half of a traced start: the BrowserSession's
// nightjar.dev/traceparent annotation parents the operator's reconcile, and a cold pod's
// configure — started later, from a watch event — still joins that trace and carries it to
// the pod's API in `traceparent`. Real HTTP to the Kubernetes-API test server, a real
// OTLP/HTTP receiver, the SDK exporting as in a cluster.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { ANNOTATIONS } from '../../../crds/types.ts'
import { startOperator } from '../../../operator/manager.ts'
import { kubeResources, KubePodRuntime } from '../../../operator/kube/index.ts'
import { startTracing } from '../../../telemetry/tracing.ts'
import { waitFor } from '../../helpers/wait.ts'
import { otlpReceiver } from '../../helpers/otlp-receiver.ts'
import { ManualDaemonCounts, newSession } from '../helpers.ts'
import { kubeConfig, NS, startApi } from './helpers.ts'
import { FakeKubelet } from './kubelet.ts'

const FAST = { initialMs: 5, maxMs: 50, jitter: 0.5 }

t.test('[ISSUE-38] a start\'s trace crosses the BrowserSession to the reconcile and a cold pod\'s configure', async (t) => {
  const receiver = await otlpReceiver(t)
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' })
  const tracing = await startTracing('nightjar-operator')
  t.teardown(() => tracing.shutdown())

  const api = await startApi()
  const kubelet = await FakeKubelet.create(api, NS)
  kubelet.auto()
  const kc = kubeConfig(api)
  const resources = kubeResources(kc, NS)
  // no warm pool: the pod starts cold, and is configured when the watch shows it up
  const pods = new KubePodRuntime({ kc, namespace: NS, pod: { image: 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0', podApiPort: kubelet.podApiPort }, poolSize: 0, informerBackoff: FAST, configureTimeoutMs: 5000 })
  await pods.start()
  const operator = await startOperator({ sessions: resources.sessions, networks: resources.networks, pods, daemonCounts: new ManualDaemonCounts(), informer: { backoff: FAST }, resyncMs: 0 })
  t.teardown(async () => {
    await operator.stop()
    pods.stop()
    await kubelet.close()
    await api.close()
  })

  // what the api-server writes: the start span's context on the resource
  const traceId = randomBytes(16).toString('hex')
  const startSpanId = randomBytes(8).toString('hex')
  const id = 'nsess_Trace1AbCdEfGhIjKlMn'
  const session = newSession(id)
  session.metadata.annotations = { [ANNOTATIONS.traceparent]: `00-${traceId}-${startSpanId}-01` }
  await resources.sessions.create(session)
  await waitFor(async () => (await resources.sessions.get(id))?.status?.phase === 'Live', { timeoutMs: 20_000, what: 'the session live' })

  const spans = await waitFor(async () => {
    await tracing.flush()
    const inTrace = receiver.spans.filter((s) => s.traceId === traceId)
    return inTrace.some((s) => s.name === 'pod.configure') ? inTrace : undefined
  }, { what: 'the configure span' })
  const reconciles = spans.filter((s) => s.name === 'BrowserSession reconcile')
  t.ok(reconciles.length >= 1, `the starting session's reconciles are in the start's trace (${reconciles.length})`)
  t.ok(reconciles.every((s) => s.parentSpanId === startSpanId), 'each a child of the start span named by the annotation')
  t.ok(reconciles.every((s) => s.attributes['nightjar.session.id'] === id && s.service === 'nightjar-operator'))
  const configure = spans.find((s) => s.name === 'pod.configure')!
  t.ok(reconciles.some((s) => s.spanId === configure.parentSpanId), 'the cold pod\'s configure is a child of the reconcile that created the pod')
  t.equal(configure.attributes['nightjar.outcome'], 'ok')

  const fake = [...kubelet.podApis.values()].find((n) => n.configured?.sessionId === id)
  t.equal(fake?.configureTraceparent?.split('-')[1], traceId, 'the pod\'s configure call carries the trace')
  t.equal(fake?.configureTraceparent?.split('-')[2], configure.spanId, 'with the configure span as its parent')
})
