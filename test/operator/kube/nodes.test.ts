// Nodes going away under browser pods, on the Kubernetes adapters against the
// Kubernetes-API test server over real HTTP: the test plays two nodes (their Node objects,
// their kubelets' heartbeat Leases, a scheduler that spreads pods and honours affinity and
// cordons) and the pods' APIs. A stopped node's kubelet stops renewing its Lease, its
// pods' APIs stop answering, and — as on a real cluster — a graceful delete of one of
// its pods never completes (the API server keeps the pod until its kubelet confirms).
// Timings are scaled down through the runtime's options; the defaults are in docs/nodes.md.
import t, { type Test } from 'tap'
import { LABELS, type BrowserSession } from '../../../crds/types.ts'
import { startOperator } from '../../../operator/manager.ts'
import { kubeName, kubeResources, KubeEventRecorder, KubePodRuntime } from '../../../operator/kube/index.ts'
import { NodeHealth } from '../../../operator/kube/node-health.ts'
import { RecordingMetrics } from '../../../operator/runtime/metrics.ts'
import { waitFor } from '../../helpers/wait.ts'
import { ManualDaemonCounts, newSession } from '../helpers.ts'
import type { FakeKubeApi } from './fake-apiserver.ts'
import { kubeConfig, NS, startApi } from './helpers.ts'
import { FakeKubelet } from './kubelet.ts'

type Obj = Record<string, any>
const FAST = { initialMs: 5, maxMs: 50, jitter: 0.5 }
const IMAGE = 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0'
const NODES = ['node-a', 'node-b']
const LEASE_NS = 'kube-node-lease'
/** scaled-down node timings: suspect after 600 ms of silence, lost after 400 ms more unanswered */
const SUSPECT_MS = 600
const CHECKS = { intervalMs: 100, unreachableMs: 400, probeTimeoutMs: 200, drainGraceMs: 1500 }

const microTime = (d = new Date()) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
const browserPods = (api: FakeKubeApi) => api.list('pods', NS).filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'browser-pod')
const warmPods = (api: FakeKubeApi) => browserPods(api).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
const podsOf = (api: FakeKubeApi, session: string) => api.list('pods', NS).filter((p) => p.metadata.labels?.[LABELS.session] === session)
const readyReason = (s: BrowserSession | undefined) => s?.status?.conditions?.find((c) => c.type === 'Ready')?.reason

/** the token Secret a pod's container reads its pod token from */
const podSecret = (api: FakeKubeApi, pod: string): string => api.get('pods', NS, pod)?.spec.containers[0].env.find((e: Obj) => e.name === 'NIGHTJAR_POD_TOKEN').valueFrom.secretKeyRef.name

async function setup(t: Test, opts: { poolSize?: number } = {}) {
  const api = await startApi()
  for (const name of NODES) {
    api.add('nodes', '', { metadata: { name, labels: { 'kubernetes.io/hostname': name } }, spec: {} })
    api.mutate('nodes', '', name, (n) => {
      n.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] }
    })
    api.add('leases', LEASE_NS, { metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime() } })
  }
  // the kubelets' heartbeats (a kubelet renews its Lease every 10 s; here every 100 ms)
  const beating = new Set(NODES)
  const heartbeat = setInterval(() => {
    for (const name of beating) api.mutate('leases', LEASE_NS, name, (l) => void (l.spec.renewTime = microTime()))
  }, 100)
  // the scheduler: the schedulable, not-excluded node with the fewest browser pods
  const kubelet = await FakeKubelet.create(api, NS)
  kubelet.nodeFor = (podName) => {
    const pod = api.get('pods', NS, podName)
    const excluded = new Set<string>(
      (pod?.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields ?? []).flatMap((f: Obj) => (f.key === 'metadata.name' && f.operator === 'NotIn' ? f.values : [])),
    )
    const existing = new Set(browserPods(api).map((p) => p.metadata.name))
    const load = (n: string) => [...kubelet.placement].filter(([p, on]) => on === n && existing.has(p)).length
    const fits = NODES.filter((n) => !excluded.has(n) && !api.get('nodes', '', n)?.spec.unschedulable && !api.deadNodes.has(n))
    return fits.sort((a, b) => load(a) - load(b) || a.localeCompare(b))[0]
  }
  kubelet.auto()
  const kc = kubeConfig(api)
  const resources = kubeResources(kc, NS)
  const events = new KubeEventRecorder({ kc, instance: 'operator-0' })
  const pods = new KubePodRuntime({
    kc,
    namespace: NS,
    pod: { image: IMAGE, podApiPort: kubelet.podApiPort },
    poolSize: opts.poolSize ?? 2,
    informerBackoff: FAST,
    configureTimeoutMs: 5000,
    events,
    poolEventSubject: { apiVersion: 'v1', kind: 'Pod', name: 'operator-0', namespace: NS, uid: 'op-uid' },
    nodes: new NodeHealth({ kc, suspectAfterMs: SUSPECT_MS, informerBackoff: FAST }),
    nodeChecks: CHECKS,
  })
  await pods.start()
  const operator = await startOperator({ sessions: resources.sessions, networks: resources.networks, pods, daemonCounts: new ManualDaemonCounts(), metrics: new RecordingMetrics(), informer: { backoff: FAST }, resyncMs: 0, events })
  t.teardown(async () => {
    clearInterval(heartbeat)
    await operator.stop()
    pods.stop()
    await kubelet.close()
    await api.close()
  })
  const session = (name: string) => resources.sessions.get(name)
  const create = (id: string) => resources.sessions.create(newSession(id))
  const phase = (name: string, want: string) => waitFor(async () => ((await session(name))?.status?.phase === want ? session(name) : undefined), { what: `${name} ${want}` })
  const nodeOf = (name: string) => kubelet.placement.get(podsOf(api, name)[0]?.metadata.name ?? '')
  /** live sessions until one runs on each node (which pod a session gets is the pool's choice) */
  const sessionsOnEveryNode = async (prefix: string) => {
    const on = new Map<string, string>()
    for (let i = 0; on.size < NODES.length && i < 8; i++) {
      const id = `nsess_${prefix}${i}`
      await create(id)
      await phase(id, 'Live')
      const node = nodeOf(id)!
      if (!on.has(node)) on.set(node, id)
    }
    if (on.size < NODES.length) throw new Error('no live session on every node')
    return on
  }
  const eventsFor = (id: string, reason: string) => api.list('events', NS).filter((e) => e.involvedObject?.name === kubeName(id) && e.reason === reason)
  return { api, kubelet, beating, session, create, phase, nodeOf, sessionsOnEveryNode, eventsFor }
}

t.test('[ISSUE-37] a lost node: its sessions fail with NodeLost and an Event, their pods are force-deleted, the pool refills on the surviving node, the other node’s sessions run on; back, it takes pods again', async (t) => {
  const { api, kubelet, beating, session, create, phase, sessionsOnEveryNode, eventsFor } = await setup(t)
  const on = await sessionsOnEveryNode('Lost')
  const [doomed, survivor] = [on.get('node-a')!, on.get('node-b')!]
  await waitFor(() => warmPods(api).length === 2 && warmPods(api).every((p) => p.status?.phase === 'Running'), { what: 'a full warm pool' })

  // no false positive: a kubelet that stops heartbeating while its pods still answer (a
  // kubelet restart) leaves its sessions alone, however long the operator probes them
  beating.delete('node-b')
  const survivorPod = podsOf(api, survivor)[0].metadata.name
  const probed = kubelet.podApis.get(survivorPod)!
  await waitFor(() => probed.healthCalls >= Math.ceil((2 * CHECKS.unreachableMs) / CHECKS.intervalMs), { what: 'the operator probing the silent node’s pods for twice the unreachable window' })
  t.equal((await session(survivor))?.status?.phase, 'Live', 'a node whose pods answer is not lost')
  t.notOk(api.get('pods', NS, survivorPod)?.metadata.annotations?.['nightjar.dev/failure-reason'])
  beating.add('node-b')

  // node-a stops: kubelet, runtime and containers; its Node still says Ready (the node
  // controller's 40 s grace has not passed) — the operator does not wait for that
  const doomedPod = podsOf(api, doomed)[0].metadata.name
  const tokenSecret = podSecret(api, doomedPod)
  const warmOnA = warmPods(api).filter((p) => kubelet.placement.get(p.metadata.name) === 'node-a').map((p) => p.metadata.name)
  const stoppedAt = Date.now()
  beating.delete('node-a')
  await kubelet.stopNode('node-a')

  const failed = await phase(doomed, 'Failed')
  const took = Date.now() - stoppedAt
  t.equal(readyReason(failed), 'NodeLost', 'the session’s failure reason (the api-server’s failureReason) is NodeLost')
  t.match(failed?.status?.conditions?.find((c) => c.type === 'Ready')?.message, /lost with its node: node node-a's kubelet has not renewed its lease/)
  // budget: lease silence + unreachable window + two check intervals, plus the reconcile
  t.ok(took < SUSPECT_MS + CHECKS.unreachableMs + 2 * CHECKS.intervalMs + 2000, `failed ${took} ms after the node stopped`)
  const [event] = await waitFor(() => eventsFor(doomed, 'NodeLost')[0] && eventsFor(doomed, 'NodeLost'), { what: 'the NodeLost Event' })
  t.equal(event.type, 'Warning')
  t.match(event.message, /node-a/)

  // the pods of the dead node are gone from the API (force-deleted: a graceful delete would wait for its kubelet forever)
  await waitFor(() => !api.get('pods', NS, doomedPod), { what: 'the lost session pod force-deleted' })
  await waitFor(() => warmOnA.every((n) => !api.get('pods', NS, n)), { what: 'the lost warm pods force-deleted' })
  t.ok(api.requests.some((r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${doomedPod}`)), 'deleted through the API')
  await waitFor(() => !api.get('secrets', NS, tokenSecret), { what: 'the lost pod’s token Secret deleted' })

  // the warm pool refills on the surviving node
  await waitFor(() => warmPods(api).length === 2 && warmPods(api).every((p) => p.status?.phase === 'Running' && kubelet.placement.get(p.metadata.name) === 'node-b'), { what: 'the warm pool refilled on node-b' })
  const refill = warmPods(api).find((p) => !warmOnA.includes(p.metadata.name) && p.spec.affinity)
  if (refill) t.same(refill.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields, [{ key: 'metadata.name', operator: 'NotIn', values: ['node-a'] }], 'refills are kept off the lost node')

  // the other node's session ran through all of it
  t.equal((await session(survivor))?.status?.phase, 'Live', 'the session on node-b is still live')
  t.notOk(eventsFor(survivor, 'NodeLost').length)

  // a new session meanwhile runs on the surviving node
  await create('nsess_During')
  await phase('nsess_During', 'Live')

  // node-a comes back: heartbeats again, and once the operator sees it, new pods may go there
  api.deadNodes.delete('node-a')
  beating.add('node-a')
  const onA = () => browserPods(api).some((p) => kubelet.placement.get(p.metadata.name) === 'node-a' && p.status?.phase === 'Running')
  for (let i = 0; i < 10 && !onA(); i++) {
    await create(`nsess_After${i}`)
    await phase(`nsess_After${i}`, 'Live')
  }
  await waitFor(onA, { what: 'a browser pod on node-a again' })
  t.notOk(browserPods(api).some((p) => p.metadata.name === doomedPod || warmOnA.includes(p.metadata.name)), 'nothing of the old pods is left')
})

t.test('[ISSUE-37] a drain: warm pods leave the cordoned node at once and are replaced elsewhere; a live session runs on until drainGraceSeconds, then ends with NodeDrained and an Event, and its pod goes', async (t) => {
  const { api, kubelet, session, create, phase, sessionsOnEveryNode, eventsFor } = await setup(t)
  const on = await sessionsOnEveryNode('Drain')
  const [drained, other] = [on.get('node-a')!, on.get('node-b')!]
  await waitFor(() => warmPods(api).length === 2 && warmPods(api).every((p) => p.status?.phase === 'Running'), { what: 'a full warm pool' })
  const warmOnA = warmPods(api).filter((p) => kubelet.placement.get(p.metadata.name) === 'node-a').map((p) => p.metadata.name)
  const sessionPod = podsOf(api, drained)[0].metadata.name

  // kubectl drain: cordon (spec.unschedulable and the unschedulable taint, dated), then evictions
  const cordonedAt = Date.now()
  api.mutate('nodes', '', 'node-a', (n) => {
    n.spec.unschedulable = true
    n.spec.taints = [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: new Date(cordonedAt).toISOString().replace(/\.\d{3}Z$/, 'Z') }]
  })
  // an eviction of a warm pod (no PodDisruptionBudget covers it) deletes it: the pool replaces it
  const [evicted, ...restOnA] = warmOnA
  if (evicted) api.remove('pods', NS, evicted)
  await waitFor(() => [evicted, ...restOnA].every((n) => !n || !api.get('pods', NS, n)), { what: 'the warm pods off the cordoned node' })
  await waitFor(() => warmPods(api).length === 2 && warmPods(api).every((p) => p.status?.phase === 'Running' && kubelet.placement.get(p.metadata.name) === 'node-b'), { what: 'the warm pool refilled on node-b' })
  const stillLive = (await session(drained))?.status?.phase
  const checkedAt = Date.now()

  const ended = await phase(drained, 'Failed')
  const endedAfter = Date.now() - cordonedAt
  if (checkedAt - cordonedAt < CHECKS.drainGraceMs - 200) t.equal(stillLive, 'Live', 'the session ran on while the warm pods left')
  t.ok(endedAfter >= CHECKS.drainGraceMs - 1000, `ended ${endedAfter} ms after the cordon, not before the grace (timeAdded has whole seconds)`)
  t.equal(readyReason(ended), 'NodeDrained')
  t.match(ended?.status?.conditions?.find((c) => c.type === 'Ready')?.message, /node-a is being drained/)
  const [event] = await waitFor(() => eventsFor(drained, 'NodeDrained')[0] && eventsFor(drained, 'NodeDrained'), { what: 'the NodeDrained Event' })
  t.equal(event.type, 'Warning')
  await waitFor(() => !api.get('pods', NS, sessionPod), { what: 'the drained session pod deleted (so the drain completes)' })
  t.equal(api.list('pods', NS).filter((p) => kubelet.placement.get(p.metadata.name) === 'node-a').length, 0, 'node-a is empty')
  t.equal((await session(other))?.status?.phase, 'Live', 'the session on node-b is untouched')

  // uncordoned, the node takes pods again
  api.mutate('nodes', '', 'node-a', (n) => {
    n.spec.unschedulable = false
    n.spec.taints = []
  })
  await create('nsess_Back')
  await phase('nsess_Back', 'Live')
  await waitFor(() => browserPods(api).some((p) => kubelet.placement.get(p.metadata.name) === 'node-a' && p.status?.phase === 'Running'), { what: 'a browser pod on node-a again' })
})
