// The operator's reconcilers — unchanged, through operator/manager.ts — on the Kubernetes
// adapters, against the Kubernetes-API test server over real HTTP. The test plays the
// kubelet (marks pods Running/Ready, fails them) and the browser pods' pod API.
import t, { type Test } from 'tap'
import { Pod } from 'kubernetes-models/v1'
import { LABELS, type BrowserSession } from '../../../crds/types.ts'
import { startOperator } from '../../../operator/manager.ts'
import { kubeName, kubeResources, KubePodDirectory, KubePodRuntime } from '../../../operator/kube/index.ts'
import type { Condition } from '../../../ports/ports.ts'
import { RecordingMetrics } from '../../../operator/runtime/metrics.ts'
import { waitFor } from '../../helpers/wait.ts'
import { countingClient, ManualDaemonCounts, newNetwork, newSession } from '../helpers.ts'
import type { FakeKubeApi } from './fake-apiserver.ts'
import { kubeConfig, NS, startApi } from './helpers.ts'
import { FakeKubelet } from './kubelet.ts'
import { unknownFields } from './openapi.ts'

const FAST = { initialMs: 5, maxMs: 50, jitter: 0.5 }
const IMAGE = 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0'

type Obj = Record<string, any>
const cond = (s: BrowserSession | undefined, type: string): Condition | undefined => s?.status?.conditions?.find((c) => c.type === type)
const podsOf = (api: FakeKubeApi, session: string) => api.list('pods', NS).filter((p) => p.metadata.labels?.[LABELS.session] === session)
const writes = (api: FakeKubeApi) => api.requests.filter((r) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(r.method)).length

async function setup(t: Test, opts: { poolSize?: number; autoKubelet?: boolean; operator?: boolean; startTimeoutMs?: number; poolRefillDelayMs?: number; cloakImage?: string } = {}) {
  const api = await startApi()
  const kubelet = await FakeKubelet.create(api, NS)
  if (opts.autoKubelet) kubelet.auto()
  const kc = kubeConfig(api)
  const resources = kubeResources(kc, NS)
  const sessions = countingClient(resources.sessions)
  const newRuntime = (poolSize = opts.poolSize ?? 0) =>
    new KubePodRuntime({ kc, namespace: NS, pod: { image: IMAGE, podApiPort: kubelet.podApiPort, ...(opts.cloakImage ? { cloakImage: opts.cloakImage } : {}) }, poolSize, informerBackoff: FAST, configureTimeoutMs: 5000, startTimeoutMs: opts.startTimeoutMs, poolRefillDelayMs: opts.poolRefillDelayMs })
  const pods = newRuntime()
  await pods.start()
  const metrics = new RecordingMetrics()
  const daemonCounts = new ManualDaemonCounts()
  const operator = opts.operator === false ? undefined : await startOperator({ sessions, networks: resources.networks, pods, daemonCounts, metrics, informer: { backoff: FAST }, resyncMs: 0 })
  t.teardown(async () => {
    await operator?.stop()
    pods.stop()
    await kubelet.close()
    await api.close()
  })
  const phase = (name: string, want: string) =>
    waitFor(async () => {
      const s = await resources.sessions.get(name)
      return s?.status?.phase === want ? s : undefined
    }, { what: `${name} ${want}` })
  const podFor = (session: string) => waitFor(() => podsOf(api, session)[0], { what: `pod of ${session}` })
  return { api, kc, kubelet, store: resources.sessions, networks: resources.networks, sessions, pods, newRuntime, operator: operator!, metrics, daemonCounts, phase, podFor }
}

t.test('session created → Pod with the expected spec → Ready → configured → Live', async (t) => {
  const { api, kc, kubelet, store, phase, podFor } = await setup(t)
  const id = 'nsess_Live1AbCdEfGhIjKlMnOp'
  const session = await store.create({
    ...newSession(id, { egress: 'local', declaredHosts: ['app.internal:3000'], networkRef: { name: 'nnet_x' }, identityId: 'nident_1', viewport: { width: 1280, height: 800 } }),
  })
  const pod: Obj = await podFor(id)
  const pending = await phase(id, 'Pending')
  t.equal(pending.status?.podName, pod.metadata.name)
  t.equal(cond(pending, 'PodScheduled')?.status, 'True')

  // ownership: the BrowserSession, by object name and uid, as the garbage collector needs it
  t.same(pod.metadata.ownerReferences, [
    { apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: kubeName(id), uid: session.metadata.uid, controller: true, blockOwnerDeletion: true },
  ])
  t.match(pod.metadata.labels, {
    'app.kubernetes.io/name': 'nightjar',
    'app.kubernetes.io/component': 'browser-pod',
    'app.kubernetes.io/managed-by': 'nightjar-operator',
    [LABELS.session]: id,
    [LABELS.org]: 'norg_test',
    [LABELS.agent]: 'nagt_test',
    [LABELS.identity]: 'nident_1',
  })
  const spec = pod.spec
  t.equal(spec.automountServiceAccountToken, false)
  t.equal(spec.restartPolicy, 'Never')
  t.match(spec.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'Localhost', localhostProfile: 'nightjar/chromium-sandbox.json' } }) // Chromium's sandbox needs the chart's profile
  const c = spec.containers[0]
  t.equal(c.image, IMAGE)
  t.match(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
  const tokenEnv = c.env.find((e: Obj) => e.name === 'NIGHTJAR_POD_TOKEN')
  t.same(Object.keys(tokenEnv.valueFrom), ['secretKeyRef'], 'the token comes from a Secret')
  const secret = api.get('secrets', NS, tokenEnv.valueFrom.secretKeyRef.name)!
  t.ok(secret, 'the token Secret exists')
  t.same(secret.metadata.ownerReferences.map((r: Obj) => r.kind), ['BrowserSession'], 'a cold pod’s token Secret is owned by the session')
  const token = Buffer.from(secret.data.token, 'base64').toString('utf8')
  t.notOk(JSON.stringify(pod).includes(token), 'the token is nowhere in the Pod object')
  // the pod as created is a valid Pod with no field Kubernetes does not know
  const { status: _s, ...asCreated } = pod
  t.doesNotThrow(() => new Pod(asCreated as never).validate())
  t.same(unknownFields(asCreated, 'V1Pod'), [])

  // the kubelet starts it: the runtime configures the pod API, then the session is Live
  const fake = await kubelet.run(pod.metadata.name)
  const live = await phase(id, 'Live')
  t.equal(live.status?.endpoint, `http://${fake.ip}:${kubelet.podApiPort}`)
  t.equal(cond(live, 'Ready')?.status, 'True')
  t.ok(live.status?.startedAt)
  t.same(fake.configured, { sessionId: id, egress: { mode: 'local', declaredHosts: ['app.internal:3000'] }, viewport: { width: 1280, height: 800 } })
  t.equal(api.get('pods', NS, pod.metadata.name)!.metadata.annotations['nightjar.dev/configured'], 'true')

  // the api-server's view: endpoint and token from the Pod and its Secret
  const directory = new KubePodDirectory({ kc, namespace: NS })
  const access = await directory.lookup(id)
  t.equal(access?.endpoint, live.status?.endpoint)
  t.ok(access?.token === fake.token, 'the directory hands out the token the pod accepts')
  t.equal(await directory.lookup('nsess_unknown'), undefined)
})

t.test('session ended → pod and token deleted → Ended', async (t) => {
  const { api, kubelet, store, phase, podFor } = await setup(t)
  const id = 'nsess_End1'
  await store.create(newSession(id))
  const pod = await podFor(id)
  await kubelet.run(pod.metadata.name)
  await phase(id, 'Live')
  await store.patch(id, { spec: { desiredState: 'Ended' } })
  const ended = await phase(id, 'Ended')
  t.same(podsOf(api, id), [], 'the pod is gone before the session reads Ended')
  t.equal(api.get('secrets', NS, `${pod.metadata.name}-token`), undefined, 'the token does not outlive its pod')
  t.ok(ended.status?.endedAt)
  t.equal(cond(ended, 'Ready')?.reason, 'SessionEnded')
})

t.test('pod failed → session Failed; the dead pod is cleaned up', async (t) => {
  const { api, kubelet, store, phase, podFor } = await setup(t)
  const id = 'nsess_Fail1'
  await store.create(newSession(id))
  const pod = await podFor(id)
  await kubelet.run(pod.metadata.name)
  await phase(id, 'Live')
  await kubelet.fail(pod.metadata.name, 'OOMKilled', 137)
  const failed = await phase(id, 'Failed')
  t.equal(cond(failed, 'Degraded')?.status, 'True')
  t.match(cond(failed, 'Ready')?.message, /OOMKilled, exit code 137/)
  t.equal(cond(failed, 'Ready')?.reason, 'OOMKilled', 'the OOM kill is the failure reason the api-server shows')
  await waitFor(() => podsOf(api, id).length === 0, { what: 'failed pod deleted' })
})

t.test('a pod that refuses configure fails the session (ConfigureFailed)', async (t) => {
  const { kubelet, store, phase, podFor } = await setup(t)
  const id = 'nsess_Refused1'
  await store.create(newSession(id))
  const pod = await podFor(id)
  const fake = await kubelet.run(pod.metadata.name, { configureStatus: 400 })
  const failed = await phase(id, 'Failed')
  t.match(cond(failed, 'Ready')?.message, /could not be configured: configure rejected: HTTP 400/)
  t.equal(fake.configureCalls, 1, 'a 4xx is final, not retried')
})

t.test('session deleted → its pod is deleted, and garbage-collected through the owner reference', async (t) => {
  const { api, kubelet, store, phase, podFor } = await setup(t)
  const id = 'nsess_Del1'
  await store.create(newSession(id))
  const pod = await podFor(id)
  await kubelet.run(pod.metadata.name)
  await phase(id, 'Live')
  await store.delete(id)
  await waitFor(() => podsOf(api, id).length === 0 && api.list('secrets', NS).length === 0, { what: 'pod and secret gone' })
  t.pass('pod and token secret removed')
})

t.test('warm pool: a session claims a ready pool pod (Live at once) and the pool refills', async (t) => {
  const { api, store, phase } = await setup(t, { poolSize: 1, autoKubelet: true })
  const poolPods = () => api.list('pods', NS).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
  const first = await waitFor(() => poolPods().find((p) => p.status?.phase === 'Running'), { what: 'a ready pool pod' })
  const secret = await waitFor(() => api.get('secrets', NS, `${first.metadata.name}-token`)?.metadata.ownerReferences && api.get('secrets', NS, `${first.metadata.name}-token`), { what: 'pool secret adopted by its pod' })
  t.same(secret.metadata.ownerReferences.map((r: Obj) => r.kind), ['Pod'], 'a pool pod owns its token Secret')
  const id = 'nsess_Warm1'
  await store.create(newSession(id))
  const live = await phase(id, 'Live')
  t.equal(live.status?.podName, first.metadata.name, 'the pool pod was claimed')
  const claimed = api.get('pods', NS, first.metadata.name)!
  t.equal(claimed.metadata.labels[LABELS.session], id)
  t.notOk('nightjar.dev/pool' in claimed.metadata.labels, 'no longer in the pool')
  t.equal(claimed.metadata.ownerReferences[0].name, kubeName(id))
  const adopted = api.get('secrets', NS, `${first.metadata.name}-token`)!
  t.same(adopted.metadata.ownerReferences.map((r: Obj) => r.kind), ['BrowserSession'], 'its token Secret now belongs to the session')
  await waitFor(() => poolPods().length === 1 && poolPods()[0].metadata.name !== first.metadata.name, { what: 'pool refilled' })
})

t.test('[ISSUE-51] a session that loads extensions passes the warm pool by: its own pod runs the full Chromium of the cloak image', async (t) => {
  const { api, store, phase, podFor } = await setup(t, { poolSize: 1, autoKubelet: true, cloakImage: 'reg/nightjar-browser-pod-cloak:1' })
  const poolPods = () => api.list('pods', NS).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
  const warm = await waitFor(() => poolPods().find((p) => p.status?.phase === 'Running'), { what: 'a ready pool pod' })
  const id = 'nsess_Ext1'
  await store.create(newSession(id, { extensions: true }))
  const live = await phase(id, 'Live')
  const pod: Obj = await podFor(id)
  t.not(live.status?.podName, warm.metadata.name, 'the warm pod (the headless shell) was not claimed')
  t.equal(pod.spec.containers[0].image, 'reg/nightjar-browser-pod-cloak:1', 'the full browser’s image')
  t.equal(pod.spec.containers[0].env.find((e: Obj) => e.name === 'NIGHTJAR_CHROMIUM_PATH')?.value, '/usr/bin/chromium')
  t.equal(pod.spec.containers[0].env.find((e: Obj) => e.name === 'NIGHTJAR_BROWSER_KIND')?.value, 'chromium', 'still a chromium session')
  t.ok(poolPods().some((p) => p.metadata.name === warm.metadata.name), 'the warm pod waits for the next plain session')
})

t.test('[ISSUE-37] a claim that leaves a warm pod lets its session start before the refill; a claim that empties the pool refills once it is configured', async (t) => {
  const { api, store, phase } = await setup(t, { poolSize: 2, autoKubelet: true, poolRefillDelayMs: 60_000 })
  const poolPods = () => api.list('pods', NS).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
  const podsCreated = () => api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods')).length
  await waitFor(() => poolPods().filter((p) => p.status?.phase === 'Running').length === 2, { what: 'two ready pool pods' })
  const before = podsCreated()
  await store.create(newSession('nsess_Defer1'))
  await phase('nsess_Defer1', 'Live')
  t.equal(podsCreated(), before, 'one warm pod is left: no new pod takes the cores while the claimed session starts')
  t.equal(poolPods().length, 1)
  await store.create(newSession('nsess_Defer2'))
  await phase('nsess_Defer2', 'Live')
  await waitFor(() => podsCreated() > before, { what: 'the emptied pool refilling' })
  t.pass('the claim that emptied the pool refilled it once configured, without waiting for the delay')
})

t.test('a pod that never becomes ready fails its session at the start deadline', async (t) => {
  const { api, store, phase } = await setup(t, { startTimeoutMs: 1500 })
  const id = 'nsess_Slow1'
  await store.create(newSession(id))
  // a pod is created, but no kubelet ever starts it (an image that never pulls)
  const failed = await phase(id, 'Failed')
  t.ok(api.requests.some((r) => r.method === 'POST' && r.path.endsWith('/pods')), 'a pod was created')
  t.match(cond(failed, 'Ready')?.message, /not ready within/)
  await waitFor(() => podsOf(api, id).length === 0, { what: 'pod removed' })
})

t.test('[ISSUE-37] a pool pod that never comes up is replaced at its start deadline (no kubelet startup probe does it)', async (t) => {
  const { api } = await setup(t, { poolSize: 1, startTimeoutMs: 1500 })
  const poolPods = () => api.list('pods', NS).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
  // no kubelet ever starts it (an image that hangs on start)
  const first = await waitFor(() => poolPods()[0], { what: 'a pool pod' })
  t.notOk(first.spec.containers[0].startupProbe, 'the pod has no startup probe to end it')
  const replacement = await waitFor(() => poolPods().find((p) => p.metadata.name !== first.metadata.name), { what: 'a replacement pool pod' })
  t.ok(replacement, 'a new pool pod replaces it')
  await waitFor(() => !api.get('pods', NS, first.metadata.name), { what: 'the pod that never came up deleted' })
})

t.test('a pool pod that dies unclaimed is replaced', async (t) => {
  const { api, kubelet } = await setup(t, { poolSize: 1, autoKubelet: true })
  const poolPods = () => api.list('pods', NS).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
  const first = await waitFor(() => poolPods().find((p) => p.status?.phase === 'Running'), { what: 'a ready pool pod' })
  await kubelet.fail(first.metadata.name)
  await waitFor(() => !api.get('pods', NS, first.metadata.name), { what: 'dead pool pod deleted' })
  const next = await waitFor(() => poolPods().find((p) => p.status?.phase === 'Running'), { what: 'a replacement' })
  t.not(next.metadata.name, first.metadata.name)
  t.equal(poolPods().length, 1, 'the pool stays at its size')
})

t.test('after an upgrade changes the browser-pod settings, warm pods made under the old ones are replaced and never handed to a session', async (t) => {
  const { api, kc, kubelet, pods } = await setup(t, { poolSize: 1, autoKubelet: true, operator: false })
  const poolPods = () => api.list('pods', NS).filter((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm')
  const old = await waitFor(() => poolPods().find((p) => p.status?.phase === 'Running'), { what: 'a ready pool pod' })
  t.notOk(old.spec.runtimeClassName, 'made without a runtime class')
  // the operator is replaced by one with a runtime class (helm upgrade)
  pods.stop()
  const upgraded = new KubePodRuntime({ kc, namespace: NS, pod: { image: IMAGE, podApiPort: kubelet.podApiPort, runtimeClassName: 'gvisor' }, poolSize: 1, informerBackoff: FAST, configureTimeoutMs: 5000 })
  await upgraded.start()
  t.teardown(() => upgraded.stop())
  await waitFor(() => !api.get('pods', NS, old.metadata.name), { what: 'the old pool pod deleted' })
  const fresh = await waitFor(() => poolPods().find((p) => p.metadata.name !== old.metadata.name && p.status?.phase === 'Running' && p.spec.runtimeClassName === 'gvisor'), { what: 'a pool pod under the new settings' })
  t.not(fresh.metadata.annotations['nightjar.dev/pod-template'], old.metadata.annotations['nightjar.dev/pod-template'], 'the two carry different template digests')
})

t.test('a warm pod claimed while an upgraded operator deletes it as outdated stays with its session', async (t) => {
  const { api, kc, kubelet, pods } = await setup(t, { poolSize: 1, autoKubelet: true, operator: false })
  const old = await waitFor(() => api.list('pods', NS).find((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm' && p.status?.phase === 'Running'), { what: 'a ready pool pod' })
  pods.stop()
  // the upgraded operator's delete of the outdated pod, held until the old one's claim lands
  const held = api.holdNext('DELETE', new RegExp(`/pods/${old.metadata.name}$`))
  const upgraded = new KubePodRuntime({ kc, namespace: NS, pod: { image: IMAGE, podApiPort: kubelet.podApiPort, runtimeClassName: 'gvisor' }, poolSize: 1, informerBackoff: FAST, configureTimeoutMs: 5000 })
  await upgraded.start()
  t.teardown(() => upgraded.stop())
  await held.arrived
  // the previous leader's claim, landing while the delete is on its way
  api.mutate('pods', NS, old.metadata.name, (p) => {
    p.metadata.labels[LABELS.session] = 'nsess_ClaimedMidDelete'
    delete p.metadata.labels['nightjar.dev/pool']
  })
  held.release()
  const gone = () => !api.get('pods', NS, old.metadata.name) || !!api.get('pods', NS, old.metadata.name)?.metadata.deletionTimestamp
  await waitFor(() => gone() || upgraded.informer.get(old.metadata.name)?.metadata.labels?.[LABELS.session], { what: 'the delete answered: the pod gone, or its claim seen' })
  await waitFor(() => api.list('pods', NS).some((p) => p.metadata.name !== old.metadata.name && p.spec.runtimeClassName === 'gvisor'), { what: 'the pool refilled under the new settings' })
  const kept = api.get('pods', NS, old.metadata.name)
  t.ok(kept && !kept.metadata.deletionTimestamp, 'the claimed pod is not deleted')
  t.equal(kept?.metadata.labels[LABELS.session], 'nsess_ClaimedMidDelete', 'and still carries its session')
})

t.test('two claims race for one pool pod: exactly one wins, the other starts its own pod', async (t) => {
  const { api, newRuntime, kubelet, store } = await setup(t, { operator: false })
  kubelet.auto()
  // real owners (no operator runs here): the garbage collector must find them
  const sa = await store.create(newSession('nsess_RaceA'))
  const sb = await store.create(newSession('nsess_RaceB'))
  // two runtimes as two replicas would be during a failover overlap
  const a = newRuntime(1)
  const b = newRuntime(0)
  await a.start()
  await b.start()
  t.teardown(() => {
    a.stop()
    b.stop()
  })
  const pool = await waitFor(() => api.list('pods', NS).find((p) => p.metadata.labels?.['nightjar.dev/pool'] === 'warm' && p.status?.phase === 'Running'), { what: 'ready pool pod' })
  await waitFor(() => a.informer.get(pool.metadata.name)?.status?.phase === 'Running' && b.informer.get(pool.metadata.name)?.status?.phase === 'Running', { what: 'both caches see it' })
  const uids: Record<string, string> = { nsess_RaceA: sa.metadata.uid, nsess_RaceB: sb.metadata.uid }
  const owner = (id: string) => ({ apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: id, uid: uids[id], controller: true, blockOwnerDeletion: true })
  const launch = (id: string) => ({ sessionId: id, browserKind: 'chromium' as const, egress: { mode: 'platform' as const, declaredHosts: [] }, labels: { [LABELS.session]: id } })
  const [ra, rb] = await Promise.all([a.ensure(launch('nsess_RaceA'), owner('nsess_RaceA')).catch((e) => e), b.ensure(launch('nsess_RaceB'), owner('nsess_RaceB')).catch((e) => e)])
  const patches = api.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/pods/${pool.metadata.name}`))
  t.ok(patches.length >= 2, 'both tried to claim the same pod')
  const names = [ra.podName, rb.podName]
  t.equal(names.filter((n) => n === pool.metadata.name).length, 1, 'exactly one got the pool pod')
  t.not(names[0], names[1])
  const final = api.get('pods', NS, pool.metadata.name)
  const winners = ['nsess_RaceA', 'nsess_RaceB'].filter((id) => final?.metadata.labels?.[LABELS.session] === id)
  t.equal(winners.length, 1, 'the pool pod carries exactly one session')
})

t.test('a watch dropped mid-stream and a 410 both recover without missed work', async (t) => {
  const { api, kubelet, store, operator, phase, podFor } = await setup(t)
  kubelet.auto()
  await waitFor(() => api.openWatches('browsersessions') === 1 && api.openWatches('pods') >= 1, { what: 'watches open' })

  // 1. connections reset: what happens meanwhile is still seen (re-watch from the last version)
  const relists = operator.informers.sessions.relists
  api.dropWatches()
  await store.create(newSession('nsess_AfterDrop'))
  await phase('nsess_AfterDrop', 'Live')
  t.equal(operator.informers.sessions.relists, relists, 'resumed from its version, no relist needed')

  // 2. history compacted while the watch was down: 410 → relist → nothing missed
  await store.create(newSession('nsess_Before410'))
  await phase('nsess_Before410', 'Live')
  // keep the session watch down (every re-watch refused) while writes happen and history goes
  api.failNext('GET', /browsersessions\?.*watch=true/, 503, 1_000_000)
  api.dropWatches('browsersessions')
  await store.create(newSession('nsess_During410'))
  await store.patch('nsess_Before410', { spec: { desiredState: 'Ended' } })
  api.compact()
  api.clearFailures()
  await waitFor(() => operator.informers.sessions.relists > relists, { what: 'relist after 410' })
  await phase('nsess_During410', 'Live')
  await phase('nsess_Before410', 'Ended')
  t.same(podsOf(api, 'nsess_Before410'), [])

  // 3. a 410 ERROR event on a live stream
  const before = operator.informers.sessions.relists
  await waitFor(() => api.openWatches('browsersessions') === 1)
  api.expireWatches('browsersessions')
  await waitFor(() => operator.informers.sessions.relists > before, { what: 'relist after ERROR 410' })
  await store.create(newSession('nsess_After410'))
  await phase('nsess_After410', 'Live')
  t.pass('work after each kind of break was done')
})

t.test('a second reconcile of a settled object makes no writes', async (t) => {
  const { api, kubelet, store, sessions, operator, metrics, phase, podFor } = await setup(t)
  const id = 'nsess_Settled1'
  await store.create(newSession(id))
  const pod = await podFor(id)
  await kubelet.run(pod.metadata.name)
  await phase(id, 'Live')
  // let the last status write's own watch event be reconciled
  await waitFor(() => operator.controllers.sessions.depth === 0 && metrics.count('browsersession') > 0)
  const settled = await store.get(id)
  const sessionWrites = sessions.writes.length
  const apiWrites = writes(api)
  const reconciles = metrics.count('browsersession')
  operator.controllers.sessions.enqueue(id)
  await waitFor(() => metrics.count('browsersession') > reconciles, { what: 'reconciled again' })
  operator.controllers.sessions.enqueue(id)
  await waitFor(() => metrics.count('browsersession') > reconciles + 1, { what: 'and again' })
  t.equal(sessions.writes.length, sessionWrites, 'no status writes')
  t.equal(writes(api), apiWrites, 'no api-server writes at all (pods, secrets, sessions)')
  t.equal((await store.get(id))?.metadata.resourceVersion, settled?.metadata.resourceVersion)
})

t.test('[ISSUE-49] a resync of settled sessions reads nothing from the API server: their pods come from the cache', async (t) => {
  const { api, kubelet, store, operator, metrics, phase, podFor } = await setup(t)
  const ids = ['nsess_Resync1', 'nsess_Resync2', 'nsess_Resync3']
  for (const id of ids) {
    await store.create(newSession(id))
    await kubelet.run((await podFor(id)).metadata.name)
    await phase(id, 'Live')
  }
  await waitFor(() => operator.controllers.sessions.depth === 0 && metrics.count('browsersession') > 0)
  const before = api.requests.length
  const reconciles = metrics.count('browsersession')
  for (const id of ids) operator.controllers.sessions.enqueue(id)
  await waitFor(() => metrics.count('browsersession') >= reconciles + ids.length, { what: 'each reconciled again' })
  const podReads = api.requests.slice(before).filter((r) => r.path.includes('/pods') && r.query.watch !== 'true')
  t.same(podReads.map((r) => `${r.method} ${r.path}?${new URLSearchParams(r.query)}`), [], 'no pod read or list: each session\'s pod is in the cache')
})

t.test('[ISSUE-49] a new leader takes over settled sessions without a read per session: the pods it adopted come from its cache', async (t) => {
  const { api, kc, kubelet, store, operator, pods, phase, podFor, sessions, newRuntime } = await setup(t)
  const ids = ['nsess_Takeover1', 'nsess_Takeover2', 'nsess_Takeover3']
  for (const id of ids) {
    await store.create(newSession(id))
    await kubelet.run((await podFor(id)).metadata.name)
    await phase(id, 'Live')
  }
  await operator.stop()
  pods.stop()
  const before = api.requests.length
  const pods2 = newRuntime()
  await pods2.start()
  const metrics2 = new RecordingMetrics()
  const op2 = await startOperator({ sessions, networks: kubeResources(kc, NS).networks, pods: pods2, daemonCounts: new ManualDaemonCounts(), metrics: metrics2, informer: { backoff: FAST }, resyncMs: 0 })
  t.teardown(async () => {
    await op2.stop()
    pods2.stop()
  })
  await waitFor(() => metrics2.count('browsersession') >= ids.length && op2.controllers.sessions.depth === 0, { what: 'every session reconciled by the new leader' })
  const reconciles = metrics2.count('browsersession')
  for (const id of ids) op2.controllers.sessions.enqueue(id)
  await waitFor(() => metrics2.count('browsersession') >= reconciles + ids.length, { what: 'and again (a resync)' })
  const podRequests = api.requests.slice(before).filter((r) => r.path.includes('/pods'))
  t.ok(podRequests.some((r) => r.method === 'GET' && r.query.watch !== 'true' && !r.path.includes('/pods/')), 'the new leader listed the pods once (its informer)')
  const perSession = podRequests.filter((r) => r.path.includes('/pods/') || (r.query.labelSelector ?? '').includes(`${LABELS.session}=`))
  t.same(perSession.map((r) => `${r.method} ${r.path}?${new URLSearchParams(r.query)}`), [], 'no read of one session\'s pod: the new leader\'s informer gave it every pod')
})

t.test('Network status follows the daemon counts through the Kubernetes client', async (t) => {
  const { networks, daemonCounts } = await setup(t)
  await networks.create(newNetwork('nnet_Kube1', ['app.internal']))
  daemonCounts.set('nnet_Kube1', 2, 1)
  const net = await waitFor(async () => {
    const n = await networks.get('nnet_Kube1')
    return n?.status?.onlineDaemonCount === 1 ? n : undefined
  }, { what: 'network status' })
  t.equal(net.status?.daemonCount, 2)
  t.equal(net.status?.conditions?.[0].status, 'True')
})

t.test('a restarted operator adopts a starting pod and configures it when it comes up', async (t) => {
  const { api, kc, kubelet, store, operator, pods, phase, podFor, sessions, newRuntime } = await setup(t)
  const id = 'nsess_Adopt1'
  await store.create(newSession(id, { egress: 'split', declaredHosts: ['db.local'] }))
  const pod = await podFor(id)
  await phase(id, 'Pending')
  // the operator goes away before the pod is up...
  await operator.stop()
  pods.stop()
  // ...and a new one takes over
  const pods2 = newRuntime()
  await pods2.start()
  const op2 = await startOperator({ sessions, networks: kubeResources(kc, NS).networks, pods: pods2, daemonCounts: new ManualDaemonCounts(), informer: { backoff: FAST }, resyncMs: 0 })
  t.teardown(async () => {
    await op2.stop()
    pods2.stop()
  })
  const fake = await kubelet.run(pod.metadata.name)
  await phase(id, 'Live')
  t.same(fake.configured?.egress, { mode: 'split', declaredHosts: ['db.local'] }, 'configured from the launch settings kept on the pod')
  t.equal(podsOf(api, id).length, 1, 'no second pod')
})
