// The BrowserSession controller end to end on the embedded runtime: the in-process
// store, the real controller/informer machinery and real child-process pods (fake pods
// speaking the browser pod's contract).
import t, { type Test } from 'tap'
import type { BrowserSession } from '../../../crds/types.ts'
import { desiredPod, ownerReference } from '../../../operator/controllers/browser-session/desired-pod.ts'
import { BrowserSessionReconciler } from '../../../operator/controllers/browser-session/reconciler.ts'
import { createEmbeddedResources, EmbeddedPodRuntime, startEmbeddedOperator } from '../../../operator/embedded/index.ts'
import type { AuthStateSource, Condition } from '../../../ports/ports.ts'
import { RecordingMetrics } from '../../../operator/runtime/metrics.ts'
import { waitFor } from '../../helpers/wait.ts'
import { alive, countingClient, fakePodCommand, ManualDaemonCounts, newSession, POD_TIMEOUT } from '../helpers.ts'

const cond = (s: BrowserSession | undefined, type: string): Condition | undefined => s?.status?.conditions?.find((c) => c.type === type)
const unclaimed = (pods: EmbeddedPodRuntime) => pods.processes().filter((p) => !p.sessionId && p.state === 'running')

async function setup(t: Test, opts: { poolSize?: number; authState?: AuthStateSource; retentionMs?: number } = {}) {
  const { sessions: store, networks } = createEmbeddedResources()
  const sessions = countingClient(store)
  const pods = new EmbeddedPodRuntime({ command: fakePodCommand(), poolSize: opts.poolSize ?? 2, killGraceMs: 2000 })
  pods.start()
  const metrics = new RecordingMetrics()
  const events: { name: string; type: string; reason: string; message: string }[] = []
  const operator = await startEmbeddedOperator({
    events: { record: (subject, type, reason, message) => events.push({ name: subject.name, type, reason, message }) },
    sessionRetentionMs: opts.retentionMs,
    sessions,
    networks,
    pods,
    daemonCounts: new ManualDaemonCounts(),
    metrics,
    authState: opts.authState,
    informer: { backoff: { initialMs: 5, maxMs: 50 } },
  })
  t.teardown(async () => {
    await operator.stop()
    await pods.shutdown()
  })
  const phase = (name: string, want: string) =>
    waitFor(async () => {
      const s = await store.get(name)
      return s?.status?.phase === want ? s : undefined
    }, { what: `${name} ${want}`, timeoutMs: POD_TIMEOUT })
  return { store, sessions, networks, pods, metrics, operator, phase, events }
}

t.test('desired pod is a pure function of the session', async (t) => {
  const session = {
    apiVersion: 'nightjar.dev/v1',
    kind: 'BrowserSession',
    metadata: { name: 'nsess_x', uid: 'uid-1', resourceVersion: '1', generation: 1, creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: { ...newSession('nsess_x', { egress: 'local', declaredHosts: ['localhost:3000'], identityId: 'nident_1', viewport: { width: 1280, height: 800 } }).spec },
  } as BrowserSession
  const pod = desiredPod(session)
  t.same(pod, {
    sessionId: 'nsess_x',
    browserKind: 'chromium',
    egress: { mode: 'local', declaredHosts: ['localhost:3000'] },
    viewport: { width: 1280, height: 800 },
    labels: {
      'app.kubernetes.io/name': 'nightjar',
      'app.kubernetes.io/component': 'browser-pod',
      'nightjar.dev/session': 'nsess_x',
      'nightjar.dev/org': 'norg_test',
      'nightjar.dev/agent': 'nagt_test',
      'nightjar.dev/identity': 'nident_1',
    },
  })
  t.same(desiredPod(session), pod, 'same input, same output')
  session.spec.egress = 'platform'
  t.same(desiredPod(session).egress, { mode: 'platform', declaredHosts: [] }, 'platform egress tunnels nothing')
  t.same(ownerReference(session), { apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: 'nsess_x', uid: 'uid-1', controller: true, blockOwnerDeletion: true })
  session.metadata.annotations = { 'nightjar.dev/requested-at': '2025-01-01T00:00:00.250Z' }
  t.equal(desiredPod(session).requestedAt, Date.parse('2025-01-01T00:00:00.250Z'), 'when the start was asked for reaches the runtime (the pool\u2019s demand)')
  session.metadata.annotations = { 'nightjar.dev/requested-at': 'yesterday' }
  t.notOk('requestedAt' in desiredPod(session), 'an unreadable time is left out (the runtime counts the claim as now)')
  t.notOk('fullBrowser' in desiredPod(session), 'a session without extensions may take any chromium pod')
  session.spec.extensions = true
  t.equal(desiredPod(session).fullBrowser, true, 'one with extensions asks for the full browser')
})

t.test('session created → pod claimed from the warm pool → Live with endpoint', async (t) => {
  const { store, pods, phase } = await setup(t)
  await waitFor(() => unclaimed(pods).length === 2, { what: 'warm pool', timeoutMs: POD_TIMEOUT })
  const warm = unclaimed(pods).map((p) => p.podName)
  await store.create(newSession('nsess_live', { egress: 'split', declaredHosts: ['localhost:8080'] }))
  const live = await phase('nsess_live', 'Live')
  t.ok(warm.includes(live.status!.podName!), 'served by a pool pod')
  t.match(live.status!.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.match(live.status!.startedAt, /Z$/)
  for (const [type, status] of [['Ready', 'True'], ['PodScheduled', 'True'], ['Degraded', 'False']] as const) {
    const c = cond(live, type)
    t.equal(c?.status, status, `${type} ${status}`)
    t.equal(c?.observedGeneration, 1)
  }
  // the api-server's way in: endpoint from status, token from the PodDirectory
  const access = (await pods.lookup('nsess_live'))!
  t.equal(access.endpoint, live.status!.endpoint)
  t.notOk(JSON.stringify(live).includes(access.token), 'the token is not in the resource')
  const res = await fetch(`${access.endpoint}/v1/fake/config`, { headers: { authorization: `Bearer ${access.token}` } })
  const body = (await res.json()) as { configured: { egress: unknown } }
  t.same(body.configured.egress, { mode: 'split', declaredHosts: ['localhost:8080'] }, 'launch-time egress reached the pod')
  await waitFor(() => unclaimed(pods).length === 2, { what: 'pool refilled', timeoutMs: POD_TIMEOUT })
})

t.test('desiredState Ended → pod deleted, phase Ended with endedAt', async (t) => {
  const { store, pods, phase } = await setup(t, { poolSize: 1 })
  await store.create(newSession('nsess_end'))
  await phase('nsess_end', 'Live')
  const pid = pods.processes().find((p) => p.sessionId === 'nsess_end')!.pid!
  await store.patch('nsess_end', { spec: { desiredState: 'Ended' } })
  const ended = await phase('nsess_end', 'Ended')
  t.match(ended.status!.endedAt, /Z$/)
  t.equal(ended.status!.endpoint, undefined, 'no endpoint once ended')
  t.equal(cond(ended, 'Ready')?.reason, 'SessionEnded')
  t.equal(cond(ended, 'Ready')?.observedGeneration, 2)
  t.notOk(alive(pid), 'the pod process is gone when Ended is visible')
  t.equal((await pods.observe('nsess_end')).phase, 'Gone')
  t.equal(await pods.lookup('nsess_end'), undefined)
})

t.test('child process killed → session Failed, and the pod is not restarted', async (t) => {
  const { store, pods, phase } = await setup(t, { poolSize: 1 })
  await store.create(newSession('nsess_kill'))
  const live = await phase('nsess_kill', 'Live')
  const pid = pods.processes().find((p) => p.sessionId === 'nsess_kill')!.pid!
  process.kill(pid, 'SIGKILL')
  const failed = await phase('nsess_kill', 'Failed')
  t.equal(cond(failed, 'Ready')?.status, 'False')
  t.equal(cond(failed, 'Ready')?.reason, 'PodFailed')
  t.equal(cond(failed, 'Degraded')?.status, 'True')
  t.equal(cond(failed, 'Degraded')?.reason, 'PodFailed')
  t.match(cond(failed, 'Degraded')?.message, /killed \(SIGKILL\)/)
  t.equal(failed.status!.podName, live.status!.podName)
  t.match(failed.status!.endedAt, /Z$/)
  await waitFor(async () => (await pods.observe('nsess_kill')).phase === 'Gone', { what: 'dead pod cleared' })
  // ending a failed session keeps it Failed (terminal) and starts nothing
  await store.patch('nsess_kill', { spec: { desiredState: 'Ended' } })
  await waitFor(async () => cond(await store.get('nsess_kill'), 'Ready')?.observedGeneration === 2, { what: 'generation observed' })
  t.equal((await store.get('nsess_kill'))!.status!.phase, 'Failed')
  t.notOk(pods.processes().some((p) => p.sessionId === 'nsess_kill'), 'no new pod for a failed session')
})

t.test('a second reconcile of a settled object makes no writes', async (t) => {
  const { sessions: store } = createEmbeddedResources()
  const sessions = countingClient(store)
  const pods = new EmbeddedPodRuntime({ command: fakePodCommand(), poolSize: 1 })
  pods.start()
  t.teardown(() => pods.shutdown())
  const reconciler = new BrowserSessionReconciler({ sessions, pods })
  await waitFor(() => unclaimed(pods).length === 1, { timeoutMs: POD_TIMEOUT })

  await store.create(newSession('nsess_settle'))
  await reconciler.reconcile('nsess_settle')
  t.same(sessions.writes, ['patchStatus nsess_settle'], 'first reconcile: one status write')
  t.equal((await store.get('nsess_settle'))!.status!.phase, 'Live', 'warm claim is Live in one reconcile')
  const rv = (await store.get('nsess_settle'))!.metadata.resourceVersion
  await reconciler.reconcile('nsess_settle')
  await reconciler.reconcile('nsess_settle')
  t.same(sessions.writes, ['patchStatus nsess_settle'], 'Live: no further writes')
  t.equal((await store.get('nsess_settle'))!.metadata.resourceVersion, rv)

  await store.patch('nsess_settle', { spec: { desiredState: 'Ended' } })
  await reconciler.reconcile('nsess_settle')
  t.equal(sessions.writes.length, 2)
  await reconciler.reconcile('nsess_settle')
  t.equal(sessions.writes.length, 2, 'Ended: no further writes')

  await store.create(newSession('nsess_fail'))
  await reconciler.reconcile('nsess_fail')
  process.kill(pods.processes().find((p) => p.sessionId === 'nsess_fail')!.pid!, 'SIGKILL')
  await waitFor(async () => (await pods.observe('nsess_fail')).phase === 'Failed')
  await reconciler.reconcile('nsess_fail')
  t.equal((await store.get('nsess_fail'))!.status!.phase, 'Failed')
  const n = sessions.writes.length
  await reconciler.reconcile('nsess_fail')
  t.equal(sessions.writes.length, n, 'Failed: no further writes')
})

t.test('the running operator does not write on re-reconcile (resync, own status events)', async (t) => {
  const { store, sessions, metrics, operator, phase } = await setup(t, { poolSize: 1 })
  await store.create(newSession('nsess_quiet'))
  await phase('nsess_quiet', 'Live')
  // let the reconcile triggered by our own status write run, then force more
  await waitFor(() => operator.informers.sessions.get('nsess_quiet')?.status?.phase === 'Live', { what: 'cache caught up' })
  const writes = sessions.writes.length
  const before = metrics.count('browsersession')
  for (let i = 0; i < 3; i++) operator.controllers.sessions.enqueue('nsess_quiet')
  await waitFor(() => metrics.count('browsersession') > before, { what: 'another reconcile' })
  operator.controllers.sessions.enqueue('nsess_quiet')
  await waitFor(() => metrics.count('browsersession') > before + 1, { what: 'and another' })
  t.equal(sessions.writes.length, writes, 'settled: zero writes')
})

t.test('a cold start goes Pending (PodScheduled) then Live', async (t) => {
  const { store, phase } = await setup(t, { poolSize: 0 })
  const seen: string[] = []
  const w = store.watch('0', { onEvent: (e) => e.type !== 'BOOKMARK' && e.object.status?.phase && seen.push(e.object.status.phase), onClose() {} })
  t.teardown(() => w.stop())
  await store.create(newSession('nsess_cold'))
  const pending = await phase('nsess_cold', 'Pending')
  t.equal(cond(pending, 'PodScheduled')?.status, 'True')
  t.equal(cond(pending, 'Ready')?.reason, 'PodStarting')
  await phase('nsess_cold', 'Live')
  await waitFor(() => seen.includes('Live'))
  t.same([...new Set(seen)], ['Pending', 'Live'])
})

t.test('a deleted resource takes its pod with it', async (t) => {
  const { store, pods, phase } = await setup(t, { poolSize: 1 })
  await store.create(newSession('nsess_del'))
  await phase('nsess_del', 'Live')
  const pid = pods.processes().find((p) => p.sessionId === 'nsess_del')!.pid!
  await store.delete('nsess_del')
  await waitFor(() => !alive(pid), { what: 'pod exit' })
  t.equal((await pods.observe('nsess_del')).phase, 'Gone')
})

t.test('warm resume hands the auth-state to the pod, or fails the session clearly', async (t) => {
  const loaded: string[] = []
  const authState: AuthStateSource = {
    async load({ versionId }) {
      loaded.push(versionId)
      return versionId === 'niver_ok' ? { cookies: [{ name: 'sid', value: 'x' }], origins: [] } : undefined
    },
  }
  const { store, pods, phase } = await setup(t, { poolSize: 1, authState })
  await store.create(newSession('nsess_warm', { identityId: 'nident_1', browserKind: 'chromium', warmResume: { versionId: 'niver_ok' } }))
  await phase('nsess_warm', 'Live')
  const access = (await pods.lookup('nsess_warm'))!
  const res = await fetch(`${access.endpoint}/v1/fake/config`, { headers: { authorization: `Bearer ${access.token}` } })
  t.equal(((await res.json()) as { configured: { hasStorageState: boolean } }).configured.hasStorageState, true)
  t.notOk(JSON.stringify(await store.get('nsess_warm')).includes('sid'), 'auth-state is not in the resource')

  await store.create(newSession('nsess_nover', { identityId: 'nident_1', warmResume: { versionId: 'niver_missing' } }))
  const failed = await phase('nsess_nover', 'Failed')
  t.equal(cond(failed, 'Degraded')?.reason, 'AuthStateNotFound')
  t.same(loaded, ['niver_ok', 'niver_missing'], 'loaded once per launch')
})

t.test('warm resume without an auth-state source fails as AuthStateUnavailable', async (t) => {
  const { store, phase } = await setup(t, { poolSize: 0 })
  await store.create(newSession('nsess_noauth', { identityId: 'nident_1', warmResume: { versionId: 'niver_1' } }))
  const failed = await phase('nsess_noauth', 'Failed')
  t.equal(cond(failed, 'Degraded')?.reason, 'AuthStateUnavailable')
})

t.test('on start, pods whose session is gone are deleted', async (t) => {
  const { sessions, networks } = createEmbeddedResources()
  const pods = new EmbeddedPodRuntime({ command: fakePodCommand(), poolSize: 0 })
  t.teardown(() => pods.shutdown())
  const notified: string[] = []
  pods.subscribe((s) => notified.push(s))
  await pods.ensure(desiredPod({ metadata: { name: 'nsess_orphan' }, spec: newSession('x').spec } as BrowserSession), {
    apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: 'nsess_orphan', uid: 'u',
  })
  await waitFor(() => notified.includes('nsess_orphan'), { timeoutMs: POD_TIMEOUT })
  const pid = pods.processes()[0].pid!
  const operator = await startEmbeddedOperator({ sessions, networks, pods, daemonCounts: new ManualDaemonCounts() })
  t.teardown(() => operator.stop())
  await waitFor(() => !alive(pid), { what: 'orphan pod deleted' })
  t.same(await pods.list(), [])
})

t.test('stopping the operator and the pod runtime leaves no child process running', async (t) => {
  const { store, pods, operator, phase } = await setup(t, { poolSize: 2 })
  await store.create(newSession('nsess_a'))
  await store.create(newSession('nsess_b'))
  await phase('nsess_a', 'Live')
  await phase('nsess_b', 'Live')
  await waitFor(() => unclaimed(pods).length === 2, { timeoutMs: POD_TIMEOUT })
  const pids = pods.processes().map((p) => p.pid!)
  t.equal(pids.length, 4)
  await operator.stop()
  await pods.shutdown()
  t.same(pids.filter(alive), [], 'every pod exited')
})

t.test('a lagging cache neither deletes a live pod nor starts one for a finished session', async (t) => {
  const { sessions: store } = createEmbeddedResources()
  const pods = new EmbeddedPodRuntime({ command: fakePodCommand(), poolSize: 0 })
  t.teardown(() => pods.shutdown())
  const notified: string[] = []
  pods.subscribe((s) => notified.push(s))
  const direct = new BrowserSessionReconciler({ sessions: store, pods })

  // the cache has not seen the session yet: its pod must survive
  await store.create(newSession('nsess_new'))
  await direct.reconcile('nsess_new')
  await waitFor(() => notified.includes('nsess_new'), { timeoutMs: POD_TIMEOUT })
  await direct.reconcile('nsess_new')
  t.equal((await store.get('nsess_new'))!.status!.phase, 'Live')
  const blind = new BrowserSessionReconciler({ sessions: store, pods, cache: { get: () => undefined } })
  await blind.reconcile('nsess_new')
  t.equal((await pods.observe('nsess_new')).phase, 'Ready', 'pod kept')

  // the cache still shows a fresh session that has in fact already ended: no pod
  const stale = await store.create(newSession('nsess_done'))
  await store.patch('nsess_done', { spec: { desiredState: 'Ended' } })
  await direct.reconcile('nsess_done')
  const before = pods.processes().length
  const lagging = new BrowserSessionReconciler({ sessions: store, pods, cache: { get: (n) => (n === 'nsess_done' ? stale : undefined) } })
  await lagging.reconcile('nsess_done')
  t.equal(pods.processes().length, before, 'no pod started')
  t.equal((await pods.observe('nsess_done')).phase, 'Gone')
})

t.test('events say what happened to a session: live (naming its pod), ended; a lost pod is a Warning with its cause', async (t) => {
  const { store, pods, phase, events } = await setup(t, { poolSize: 1 })
  await store.create(newSession('nsess_ev'))
  await phase('nsess_ev', 'Live')
  await store.patch('nsess_ev', { spec: { desiredState: 'Ended' } })
  await phase('nsess_ev', 'Ended')
  await waitFor(() => events.some((e) => e.reason === 'Ended'), { what: 'the Ended event' })
  t.same(events.filter((e) => e.name === 'nsess_ev').map((e) => `${e.type} ${e.reason}`), ['Normal Live', 'Normal Ended'])
  t.match(events.find((e) => e.reason === 'Live')!.message, /^browser pod \S+ ready at http:/)

  await store.create(newSession('nsess_ev2'))
  await phase('nsess_ev2', 'Live')
  const pid = pods.processes().find((p) => p.sessionId === 'nsess_ev2')!.pid!
  process.kill(pid, 'SIGKILL')
  await phase('nsess_ev2', 'Failed')
  await waitFor(() => events.some((e) => e.name === 'nsess_ev2' && e.type === 'Warning'), { what: 'the failure event' })
  const warning = events.find((e) => e.name === 'nsess_ev2' && e.type === 'Warning')!
  t.not(warning.reason, 'PodFailed', `the event names the specific cause (${warning.reason})`)
  t.match(warning.message, /browser pod/)
})

t.test('with a retention, an ended session resource is deleted once it is due, and its row of work is done', async (t) => {
  // endedAt has second precision, so the resource reads Ended for at least 0.5 s of the 1.5 s
  const { store, phase } = await setup(t, { poolSize: 0, retentionMs: 1500 })
  await store.create(newSession('nsess_ret'))
  await phase('nsess_ret', 'Live')
  await store.patch('nsess_ret', { spec: { desiredState: 'Ended' } })
  const ended = await phase('nsess_ret', 'Ended')
  const endedAt = Date.parse(ended.status!.endedAt!)
  await waitFor(async () => (await store.get('nsess_ret')) === undefined, { what: 'the resource deleted after its retention', timeoutMs: POD_TIMEOUT })
  t.ok(Date.now() - endedAt >= 1500 - 1000, 'not deleted before the retention (endedAt has second precision)')
})
