// Warm resume on Kubernetes without the database or the KMS key in the operator: the
// api-server's hand-over (AuthStateHandOver) writes the opened auth-state into a Secret the
// BrowserSession owns, and the operator's SecretAuthStateSource reads it for the pod launch —
// both against the Kubernetes-API test server over real HTTP, the operator's reconcilers
// unchanged, the test playing the kubelet and the browser pod's API.
// The state is compared with isDeepStrictEqual, never t.same: a failing test must not print it.
import t, { type Test } from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { CoreV1Api } from '@kubernetes/client-node'
import { LABELS, type BrowserSession, type BrowserSessionSpec } from '../../../crds/types.ts'
import { startOperator } from '../../../operator/manager.ts'
import { AuthStateHandOver, authStateSecretName, kubeName, kubeResources, KubePodRuntime, SecretAuthStateSource } from '../../../operator/kube/index.ts'
import { authStateSecretManifest } from '../../../operator/kube/auth-state-secrets.ts'
import type { AuthStateSource, StorageState } from '../../../ports/ports.ts'
import { waitFor } from '../../helpers/wait.ts'
import { capturingLogger, ManualDaemonCounts, newSession } from '../helpers.ts'
import { kubeConfig, NS, startApi } from './helpers.ts'
import { FakeKubelet } from './kubelet.ts'

const FAST = { initialMs: 5, maxMs: 50, jitter: 0.5 }
const IMAGE = 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0'
const CANARY = 'Cnry-' + Math.random().toString(36).slice(2, 12) + '-as'
const STATE: StorageState = {
  cookies: [{ name: 'app_session', value: `S.${CANARY}`, domain: 'app.example.com', path: '/', expires: -1, httpOnly: false, secure: false, sameSite: 'Lax' }],
  origins: [{ origin: 'http://app.example.com', localStorage: [{ name: 'app_token', value: `L.${CANARY}` }] }],
}

type Obj = Record<string, any>
const warmSpec = (versionId: string): Partial<BrowserSessionSpec> => ({ identityId: 'nident_1', warmResume: { versionId } })
const decode = (secret: Obj) => JSON.parse(Buffer.from(secret.data.storageState, 'base64').toString('utf8'))

async function setup(t: Test, opts: { now?: () => number } = {}) {
  const api = await startApi()
  const kubelet = (await FakeKubelet.create(api, NS)).auto()
  const kc = kubeConfig(api)
  const { sessions, networks } = kubeResources(kc, NS)
  const log = capturingLogger()
  // the api-server's side: its own source opens captured versions (here: one, niver_1)
  const opened: AuthStateSource = { load: async (s) => (s.versionId === 'niver_1' && s.identityId === 'nident_1' ? structuredClone(STATE) : undefined) }
  const handOver = new AuthStateHandOver({ kc, namespace: NS, source: opened })
  const source = new SecretAuthStateSource({ kc, namespace: NS, waitMs: 60_000, now: opts.now })
  let stopOperator: (() => Promise<void>) | undefined
  const operator = async () => {
    const pods = new KubePodRuntime({ kc, namespace: NS, pod: { image: IMAGE, podApiPort: kubelet.podApiPort }, poolSize: 0, informerBackoff: FAST, configureTimeoutMs: 5000, log })
    await pods.start()
    const running = await startOperator({ sessions, networks, pods, daemonCounts: new ManualDaemonCounts(), authState: source, log, informer: { backoff: FAST }, resyncMs: 0 })
    stopOperator = async () => {
      await running.stop()
      pods.stop()
    }
  }
  t.teardown(async () => {
    await stopOperator?.()
    await kubelet.close()
    await api.close()
  })
  const phase = (name: string, want: string) =>
    waitFor(async () => {
      const s = await sessions.get(name)
      return s?.status?.phase === want ? s : undefined
    }, { what: `${name} ${want}` })
  const secretOf = (id: string) => api.get('secrets', NS, authStateSecretName(id))
  /** the operator has looked for the session's Secret (and found none) at least once */
  const looked = (id: string) =>
    waitFor(() => api.requests.some((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}/secrets/${authStateSecretName(id)}`), { what: `the operator looking for ${id}'s auth-state` })
  const configuredState = (session: BrowserSession) => [...kubelet.podApis.values()].find((n) => n.configured?.sessionId === session.metadata.name)?.configured?.storageState
  return { api, kc, kubelet, sessions, log, handOver, source, operator, phase, secretOf, looked, configuredState }
}

t.test('the api-server hands the opened auth-state over in an immutable Secret its BrowserSession owns', async (t) => {
  const { sessions, handOver, secretOf } = await setup(t)
  const id = 'nsess_Warm1AbCdEfGhIjKlMnOp'
  const session = await sessions.create(newSession(id, warmSpec('niver_1')))
  t.equal(await handOver.handOver(session), true)
  const secret = secretOf(id)!
  t.ok(secret, `the Secret is named after the session: ${authStateSecretName(id)}`)
  t.equal(secret.immutable, true, 'immutable: nobody can swap the state')
  t.equal(secret.type, 'Opaque')
  t.same(secret.metadata.ownerReferences, [{ apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: kubeName(id), uid: session.metadata.uid }], 'owned by the BrowserSession (object name and uid), so the garbage collector takes it with the session')
  t.match(secret.metadata.labels, {
    'app.kubernetes.io/name': 'nightjar',
    'app.kubernetes.io/component': 'auth-state',
    'app.kubernetes.io/managed-by': 'nightjar-api-server',
    [LABELS.session]: id,
    [LABELS.org]: 'norg_test',
    [LABELS.identity]: 'nident_1',
    'nightjar.dev/auth-state-version': 'niver_1',
  })
  t.same(Object.keys(secret.data), ['storageState'], 'one key')
  t.ok(isDeepStrictEqual(decode(secret), STATE), 'it holds exactly the opened state')
  t.notOk(JSON.stringify(await sessions.get(id)).includes(CANARY), 'the BrowserSession does not hold the state')
  t.equal(await handOver.handOver(session), true, 'handing over again (a retried call) is fine: the Secret is already there')
})

t.test('warm resume without a database or key in the operator: the pod is configured with exactly the handed-over state, and the Secret is dropped', async (t) => {
  const { api, sessions, log, handOver, operator, phase, secretOf, configuredState } = await setup(t)
  const id = 'nsess_Warm2AbCdEfGhIjKlMnOp'
  await handOver.handOver(await sessions.create(newSession(id, warmSpec('niver_1'))))
  await operator()
  const live = await phase(id, 'Live')
  t.ok(isDeepStrictEqual(configuredState(live), STATE), 'the browser pod got the state in its configure call')
  t.equal(secretOf(id), undefined, 'once the pod runtime held it, the operator deleted the Secret')
  const pod = api.get('pods', NS, live.status!.podName!)!
  for (const [what, text] of [['the BrowserSession', JSON.stringify(live)], ['the Pod', JSON.stringify(pod)], ['the operator’s logs', log.lines.join('\n')]] as const) {
    t.notOk(text.includes(CANARY), `the state is not in ${what}`)
  }
})

t.test('a Secret still on its way is waited for, quietly: the session goes live once the api-server hands it over', async (t) => {
  const { sessions, log, handOver, operator, phase, looked, configuredState } = await setup(t)
  await operator()
  const id = 'nsess_Warm3AbCdEfGhIjKlMnOp'
  const session = await sessions.create(newSession(id, warmSpec('niver_1')))
  await looked(id)
  t.equal((await sessions.get(id))?.status?.phase, undefined, 'the session waits: not failed, no pod asked for')
  await handOver.handOver(session)
  t.ok(isDeepStrictEqual(configuredState(await phase(id, 'Live')), STATE), 'live, restored')
  t.notOk(log.lines.some((l) => l.startsWith('warn') || l.startsWith('error')), 'waiting for the hand-over is routine, not a warning')
})

t.test('a Secret never handed over fails the session as AuthStateNotFound once the start timeout has passed', async (t) => {
  let skew = 0
  const { sessions, operator, phase, looked } = await setup(t, { now: () => Date.now() + skew })
  await operator()
  const id = 'nsess_Warm4AbCdEfGhIjKlMnOp'
  await sessions.create(newSession(id, warmSpec('niver_1')))
  await looked(id)
  skew = 61_000 // the api-server died between the resource and its Secret; a minute goes by
  const failed = await phase(id, 'Failed')
  const ready = failed.status?.conditions?.find((c) => c.type === 'Ready')
  t.equal(ready?.reason, 'AuthStateNotFound')
  t.equal(ready?.message, 'auth-state version niver_1 not found')
})

t.test('a Secret holding another version is never used, and is dropped with the failed session', async (t) => {
  const { kc, sessions, operator, phase, secretOf } = await setup(t)
  const id = 'nsess_Warm5AbCdEfGhIjKlMnOp'
  const session = await sessions.create(newSession(id, warmSpec('niver_2')))
  // a state for niver_1 under this session's name (the label says which version it is)
  const other = authStateSecretManifest({ session: { ...session, spec: { ...session.spec, warmResume: { versionId: 'niver_1' } } }, namespace: NS, state: STATE })
  await kc.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: NS, body: other })
  await operator()
  const failed = await phase(id, 'Failed')
  t.equal(failed.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'AuthStateNotFound')
  await waitFor(() => secretOf(id) === undefined, { what: 'the unused Secret deleted' })
  t.pass('the operator deleted the Secret it could not use')
})

t.test('a version that no longer exists: the hand-over says so and writes nothing', async (t) => {
  const { sessions, handOver, secretOf } = await setup(t)
  const id = 'nsess_Warm6AbCdEfGhIjKlMnOp'
  t.equal(await handOver.handOver(await sessions.create(newSession(id, warmSpec('niver_gone')))), false)
  t.equal(secretOf(id), undefined)
})

t.test('an auth-state nobody used goes with its session: deleting the BrowserSession collects the Secret', async (t) => {
  const { sessions, handOver, secretOf } = await setup(t)
  const id = 'nsess_Warm7AbCdEfGhIjKlMnOp'
  await handOver.handOver(await sessions.create(newSession(id, warmSpec('niver_1'))))
  t.ok(secretOf(id))
  await sessions.delete(id)
  t.equal(secretOf(id), undefined, 'the garbage collector followed the ownerReference')
})
