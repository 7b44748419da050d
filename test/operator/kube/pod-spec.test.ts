// The browser pod, its token Secret and what a Pod object says about a session — as pure
// functions, checked against the Kubernetes schemas (kubernetes-models), a strict
// unknown-field check, and the Pod Security "restricted" profile.
import t, { type Test } from 'tap'
import { Pod, Secret } from 'kubernetes-models/v1'
import { ConfigError } from '../../../api-server/config.ts'
import { loadOperatorConfig } from '../../../operator/kube/operator-config.ts'
import { browserPodManifest, keptBrowserPod, tokenSecretManifest, type BrowserPodOptions, type PodResource } from '../../../operator/kube/pod-spec.ts'
import { endpointOfPod, podObservation } from '../../../operator/kube/pod-state.ts'
import { nodeOf } from '../../../operator/kube/pod-writes.ts'
import { sessionPodName } from '../../../operator/kube/pod-runtime.ts'
import { isDnsSubdomain, kubeName } from '../../../operator/kube/names.ts'
import { unknownFields } from './openapi.ts'
import { restrictedViolations } from './pod-security.ts'

type Obj = Record<string, any>
const owner = { apiVersion: 'nightjar.dev/v1', kind: 'BrowserSession', name: 'nsess-x-12345678', uid: 'u-1', controller: true, blockOwnerDeletion: true }
const FULL: BrowserPodOptions = {
  image: 'registry.example/nightjar-browser-pod:0.1.0',
  imagePullPolicy: 'Always',
  podApiPort: 9000,
  resources: { requests: { cpu: '1', memory: '1536Mi' }, limits: { cpu: '2', memory: '3Gi', 'ephemeral-storage': '2Gi' } },
  shmSize: '512Mi',
  serviceAccountName: 'nightjar-browser',
  runtimeClassName: 'gvisor',
  priorityClassName: 'nightjar-browsers',
  nodeSelector: { 'nightjar.dev/browsers': 'true' },
  tolerations: [{ key: 'browsers', operator: 'Exists', effect: 'NoSchedule' }],
  imagePullSecrets: ['regcred'],
  podLabels: { team: 'agents' },
  podAnnotations: { 'cost-center': 'ai' },
  denyCidrs: ['10.0.0.0/8', '169.254.0.0/16'],
  hostAliases: { 'example.com': '198.18.0.10' },
}

function validPod(t: Test, pod: Obj) {
  t.doesNotThrow(() => new Pod(pod as never).validate(), 'valid against the Pod schema')
  t.same(unknownFields(pod, 'V1Pod'), [], 'no field Kubernetes does not know')
  t.same(restrictedViolations(pod.spec), [], 'meets Pod Security "restricted"')
}

t.test('a session pod: owner, labels, hardening, token by reference, probes, every option', async (t) => {
  const pod = browserPodManifest(
    { name: 'nightjar-browser-sabc', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 'nightjar-browser-sabc-token', labels: { 'nightjar.dev/session': 'nsess_X' }, owner, launch: { sessionId: 'nsess_X' } },
    FULL,
  ) as Obj
  validPod(t, pod)
  t.same(pod.metadata.ownerReferences, [owner])
  t.match(pod.metadata.labels, { team: 'agents', 'nightjar.dev/session': 'nsess_X', 'app.kubernetes.io/component': 'browser-pod', 'nightjar.dev/browser-kind': 'chromium' })
  t.notOk('nightjar.dev/pool' in pod.metadata.labels)
  t.match(pod.metadata.annotations, { 'cost-center': 'ai', 'nightjar.dev/token-secret': 'nightjar-browser-sabc-token', 'nightjar.dev/launch': '{"sessionId":"nsess_X"}' })
  const s = pod.spec
  t.equal(s.automountServiceAccountToken, false)
  t.equal(s.enableServiceLinks, false)
  t.equal(s.restartPolicy, 'Never')
  t.match(s, { serviceAccountName: 'nightjar-browser', runtimeClassName: 'gvisor', priorityClassName: 'nightjar-browsers', nodeSelector: FULL.nodeSelector, tolerations: FULL.tolerations, imagePullSecrets: [{ name: 'regcred' }] })
  // Chromium's sandbox on by default: the chart's profile, RuntimeDefault plus the namespaces it creates
  t.match(s.securityContext, { runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001, seccompProfile: { type: 'Localhost', localhostProfile: 'nightjar/chromium-sandbox.json' } })
  const c = s.containers[0]
  t.same(c.securityContext.seccompProfile, { type: 'Localhost', localhostProfile: 'nightjar/chromium-sandbox.json' })
  t.match(c, { image: FULL.image, imagePullPolicy: 'Always', resources: FULL.resources, ports: [{ name: 'node-api', containerPort: 9000 }] })
  t.match(c.securityContext, { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })
  const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]))
  t.same(env.NIGHTJAR_POD_TOKEN, { secretKeyRef: { name: 'nightjar-browser-sabc-token', key: 'token' } })
  t.equal(env.NIGHTJAR_POD_HOST, '0.0.0.0')
  t.equal(env.NIGHTJAR_POD_PORT, '9000')
  t.equal(env.NIGHTJAR_BROWSER_SANDBOX, 'chromium')
  t.equal(env.NIGHTJAR_DENY_CIDRS, '10.0.0.0/8,169.254.0.0/16')
  t.same(JSON.parse(env.NIGHTJAR_HOST_ALIASES), FULL.hostAliases)
  t.same(env.NIGHTJAR_POD_NAME, { fieldRef: { fieldPath: 'metadata.name' } })
  t.match(c.readinessProbe, { httpGet: { path: '/healthz', port: 'node-api' }, periodSeconds: 1 })
  t.notOk(c.startupProbe, 'no startup probe: readiness would wait for the period after it (the operator times a start out)')
  // writable places: /tmp, the home directory, and /dev/shm in memory
  t.same(c.volumeMounts.map((m: Obj) => m.mountPath).sort(), ['/dev/shm', '/home/nightjar', '/tmp'])
  t.same(s.volumes.find((v: Obj) => v.name === 'dshm').emptyDir, { medium: 'Memory', sizeLimit: '512Mi' })
})

t.test('[ISSUE-35] sandbox none: --no-sandbox is the operator’s explicit choice, and the pod keeps RuntimeDefault', async (t) => {
  const pod = browserPodManifest({ name: 'nightjar-browser-nosb', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 't', pool: true }, { image: 'img:1', sandbox: 'none' }) as Obj
  validPod(t, pod)
  t.same(pod.spec.securityContext.seccompProfile, { type: 'RuntimeDefault' })
  t.same(pod.spec.containers[0].securityContext.seccompProfile, { type: 'RuntimeDefault' })
  t.equal(pod.spec.containers[0].env.find((e: Obj) => e.name === 'NIGHTJAR_BROWSER_SANDBOX').value, 'none')
  const chosen = browserPodManifest({ name: 'nightjar-browser-spo', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 't', pool: true }, { image: 'img:1', seccompProfile: { type: 'Localhost', localhostProfile: 'operator/nightjar/chromium.json' } }) as Obj
  t.same(chosen.spec.securityContext.seccompProfile, { type: 'Localhost', localhostProfile: 'operator/nightjar/chromium.json' }, 'a profile placed another way (the Security Profiles Operator) is used as given')
})

t.test('a pool pod: the pool label, no owner, minimal options', async (t) => {
  const pod = browserPodManifest({ name: 'nightjar-browser-pool1', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 'nightjar-browser-pool1-token', pool: true }, { image: 'img:1' }) as Obj
  validPod(t, pod)
  t.equal(pod.metadata.labels['nightjar.dev/pool'], 'warm')
  t.notOk(pod.metadata.ownerReferences)
  t.match(pod.spec.containers[0].resources, { requests: { cpu: '100m', memory: '384Mi' }, limits: { memory: '2Gi' } })
  t.notOk(pod.spec.containers[0].env.some((e: Obj) => e.name === 'NIGHTJAR_DENY_CIDRS'))
})

t.test('the image by browserKind: cloak pods run the cloak image (full Chromium, Xvfb), every other the headless one', async (t) => {
  const opts = { image: 'reg/nightjar-browser-pod:1', cloakImage: 'reg/nightjar-browser-pod-cloak:1' }
  const imageOf = (browserKind: 'chromium' | 'cloak', o: BrowserPodOptions) => {
    const pod = browserPodManifest({ name: `nightjar-browser-${browserKind}`, namespace: 'ns', browserKind, tokenSecretName: 't', owner, labels: { 'nightjar.dev/session': 'nsess_X' } }, o) as Obj
    validPod(t, pod)
    return pod.spec.containers[0].image
  }
  t.equal(imageOf('chromium', opts), 'reg/nightjar-browser-pod:1', 'chromium: the headless image')
  t.equal(imageOf('cloak', opts), 'reg/nightjar-browser-pod-cloak:1', 'cloak: the cloak image')
  const pool = browserPodManifest({ name: 'nightjar-browser-pool1', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 't', pool: true }, opts) as Obj
  t.equal(pool.spec.containers[0].image, 'reg/nightjar-browser-pod:1', 'warm pool pods (chromium) run the headless image')
  t.equal(imageOf('cloak', { image: 'reg/one:1' }), 'reg/one:1', 'no cloak image configured: cloak pods run the one image, as before')

  const env = { NIGHTJAR_BROWSER_IMAGE: 'reg/nightjar-browser-pod:1', NIGHTJAR_POD_NAME: 'op-0' }
  t.equal(loadOperatorConfig(env, 'ns').browser.cloakImage, undefined, 'NIGHTJAR_BROWSER_CLOAK_IMAGE unset: no cloak image')
  const cfg = loadOperatorConfig({ ...env, NIGHTJAR_BROWSER_CLOAK_IMAGE: 'reg/nightjar-browser-pod-cloak:1' }, 'ns')
  t.equal(imageOf('cloak', cfg.browser), 'reg/nightjar-browser-pod-cloak:1', 'NIGHTJAR_BROWSER_CLOAK_IMAGE reaches cloak pods')
  t.equal(imageOf('chromium', cfg.browser), 'reg/nightjar-browser-pod:1', 'and not chromium pods')
  t.throws(() => loadOperatorConfig({ ...env, NIGHTJAR_BROWSER_CLOAK_IMAGE: '' }, 'ns'), /NIGHTJAR_BROWSER_CLOAK_IMAGE/, 'set but empty is an error, not the default')
})

t.test('[ISSUE-51] a chromium session that loads extensions runs the cloak image’s full Chromium (the headless shell has no extension system)', async (t) => {
  const opts = { image: 'reg/nightjar-browser-pod:1', cloakImage: 'reg/nightjar-browser-pod-cloak:1', chromiumPath: '/usr/lib/chromium/chromium-headless-shell' }
  const pod = (o: BrowserPodOptions, fullBrowser: boolean) => {
    const p = browserPodManifest({ name: 'nightjar-browser-ext', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 't', owner, labels: { 'nightjar.dev/session': 'nsess_X' }, fullBrowser }, o) as Obj
    validPod(t, p)
    const c = p.spec.containers[0]
    return { image: c.image, chromium: c.env.find((e: { name: string }) => e.name === 'NIGHTJAR_CHROMIUM_PATH')?.value, kind: c.env.find((e: { name: string }) => e.name === 'NIGHTJAR_BROWSER_KIND')?.value }
  }
  t.same(pod(opts, true), { image: 'reg/nightjar-browser-pod-cloak:1', chromium: '/usr/bin/chromium', kind: 'chromium' }, 'the full image and its chromium, still browserKind chromium (headless)')
  t.same(pod(opts, false), { image: 'reg/nightjar-browser-pod:1', chromium: '/usr/lib/chromium/chromium-headless-shell', kind: 'chromium' }, 'a session without extensions: the headless shell')
  t.same(pod({ image: 'reg/one:1', chromiumPath: '/usr/lib/chromium/chromium-headless-shell' }, true), { image: 'reg/one:1', chromium: '/usr/lib/chromium/chromium-headless-shell', kind: 'chromium' },
    'no cloak image: the one image as it is (its pod then refuses the extensions, 503 extensions_unsupported)')
})

t.test('the token Secret: immutable, base64, labelled, optionally owned', async (t) => {
  const secret = tokenSecretManifest({ name: 'p-token', namespace: 'ns', podName: 'p', token: 'tok-123', owner }) as Obj
  t.doesNotThrow(() => new Secret(secret as never).validate())
  t.same(unknownFields(secret, 'V1Secret'), [])
  t.equal(secret.immutable, true)
  t.ok(Buffer.from(secret.data.token, 'base64').toString() === 'tok-123')
  t.match(secret.metadata.labels, { 'app.kubernetes.io/component': 'node-token', 'nightjar.dev/pod': 'p' })
  t.same(secret.metadata.ownerReferences, [owner])
})

t.test('what a Pod says about its session', async (t) => {
  const now = new Date('2030-01-01T00:10:00Z')
  const base = (over: Obj = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: '2030-01-01T00:09:00Z', annotations: {}, ...over.metadata },
    spec: { containers: [{ name: 'browser', ports: [{ name: 'node-api', containerPort: 8090 }] }] },
    status: over.status ?? { phase: 'Pending' },
  })
  const running = { phase: 'Running', podIP: '10.1.2.3', conditions: [{ type: 'Ready', status: 'True' }] }
  const obs = (pod: Obj | undefined, startTimeoutMs = 300_000) => podObservation('nsess_x', pod as never, { now, startTimeoutMs })
  t.same(obs(undefined), { sessionId: 'nsess_x', phase: 'Gone' })
  t.equal(obs(base()).phase, 'Pending')
  t.equal(obs(base({ status: { ...running, conditions: [{ type: 'Ready', status: 'False' }] } })).phase, 'Pending', 'running but not answering yet')
  t.equal(obs(base({ status: running })).phase, 'Running', 'up, not configured')
  const ready = obs(base({ metadata: { annotations: { 'nightjar.dev/configured': 'true' } }, status: running }))
  t.same(ready, { sessionId: 'nsess_x', podName: 'p', phase: 'Ready', endpoint: 'http://10.1.2.3:8090' })
  t.equal(obs(base({ metadata: { annotations: { 'nightjar.dev/configured': 'true' } }, status: { ...running, podIP: 'fd00::5' } })).endpoint, 'http://[fd00::5]:8090')
  t.equal(
    obs(base({ metadata: { annotations: { 'nightjar.dev/configured': 'true' } }, status: { ...running, conditions: [{ type: 'Ready', status: 'False' }] } })).phase,
    'Ready',
    'a configured browser stays Ready through a readiness flap',
  )
  t.match(obs(base({ metadata: { deletionTimestamp: '2030-01-01T00:09:30Z' }, status: running })), { phase: 'Failed', reason: 'PodDeleted' })
  t.match(obs(base({ metadata: { annotations: { 'nightjar.dev/failure-reason': 'ConfigureFailed', 'nightjar.dev/failure-message': 'nope' } } })), { phase: 'Failed', reason: 'ConfigureFailed', message: 'nope' })
  t.match(obs(base({ status: { phase: 'Failed', reason: 'Evicted' } })), { phase: 'Failed', reason: 'PodExited', message: /Evicted/ })
  t.match(obs(base({ status: { phase: 'Running', containerStatuses: [{ name: 'browser', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] } })), { phase: 'Failed', reason: 'OOMKilled', message: /OOMKilled, exit code 137/ })
  t.match(obs(base({ status: { phase: 'Pending', containerStatuses: [{ name: 'browser', state: { waiting: { reason: 'InvalidImageName' } } }] } })), { phase: 'Failed', reason: 'StartFailed' })
  t.equal(obs(base({ status: { phase: 'Pending', containerStatuses: [{ name: 'browser', state: { waiting: { reason: 'ImagePullBackOff' } } }] } })).phase, 'Pending', 'a pull back-off may still resolve')
  t.match(obs(base(), 30_000), { phase: 'Failed', reason: 'StartTimeout' }, 'not ready by the start deadline')
  t.equal(obs(base({ metadata: { annotations: { 'nightjar.dev/claimed-at': '2030-01-01T00:09:55Z' } } }), 30_000).phase, 'Pending', 'a claimed pool pod’s clock starts at the claim')
})

t.test('names: session pods and mapped ids are valid object names', async (t) => {
  const a = sessionPodName('nsess_AbC')
  t.equal(a, sessionPodName('nsess_AbC'), 'deterministic: a retried ensure finds the same pod')
  t.not(a, sessionPodName('nsess_abc'))
  t.ok(isDnsSubdomain(a) && a.length <= 63, 'a DNS-1123 label')
  for (const id of ['nsess_AbC', 'nnet_Z9', '__', 'x'.repeat(300)]) t.ok(isDnsSubdomain(kubeName(id)), `${id.slice(0, 20)} maps to a valid name`)
  t.equal(kubeName('already-valid'), 'already-valid')
})

t.test('operator configuration: defaults, and a bad value names its variable', async (t) => {
  const cfg = loadOperatorConfig({ NIGHTJAR_BROWSER_IMAGE: 'img:1', NIGHTJAR_POD_NAME: 'op-0' }, 'nightjar-system')
  t.match(cfg, { watchNamespace: 'nightjar-system', leaseNamespace: 'nightjar-system', leaseName: 'nightjar-operator', identity: 'op-0', port: 8081, poolSize: 2, leaseDurationMs: 15_000 })
  const full = loadOperatorConfig(
    {
      NIGHTJAR_BROWSER_IMAGE: 'img:1',
      NIGHTJAR_WATCH_NAMESPACE: 'sessions',
      NIGHTJAR_BROWSER_RESOURCES: '{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"memory":"2Gi"}}',
      NIGHTJAR_BROWSER_TOLERATIONS: '[{"key":"k","operator":"Exists"}]',
      NIGHTJAR_DENY_CIDRS: '10.0.0.0/8, fd00::/8',
      NIGHTJAR_BROWSER_IMAGE_PULL_SECRETS: 'a,b',
    },
    undefined,
  )
  t.equal(full.watchNamespace, 'sessions')
  t.same(full.browser.denyCidrs, ['10.0.0.0/8', 'fd00::/8'])
  t.same(full.browser.imagePullSecrets, ['a', 'b'])
  const bad = (env: Record<string, string>) => {
    try {
      loadOperatorConfig({ NIGHTJAR_BROWSER_IMAGE: 'img:1', ...env }, undefined)
      return 'no error'
    } catch (e) {
      t.ok(e instanceof ConfigError)
      return (e as Error).message
    }
  }
  t.match(bad({ NIGHTJAR_BROWSER_IMAGE: '' }), /NIGHTJAR_BROWSER_IMAGE/)
  t.match(bad({ NIGHTJAR_DENY_CIDRS: '10.0.0.0/33' }), /NIGHTJAR_DENY_CIDRS: 10\.0\.0\.0\/33 is not a CIDR/)
  t.match(bad({ NIGHTJAR_BROWSER_RESOURCES: '{"requests":{"gpu":"1"}}' }), /NIGHTJAR_BROWSER_RESOURCES/)
  t.match(bad({ NIGHTJAR_RENEW_DEADLINE_SECONDS: '20' }), /NIGHTJAR_RENEW_DEADLINE_SECONDS: must be less than/)
  t.match(bad({ NIGHTJAR_WATCH_NAMESPACE: 'Bad_NS' }), /NIGHTJAR_WATCH_NAMESPACE/)
})

t.test('[ISSUE-37] spread: a soft spread over nodes by default; nodeSelector, tolerations, affinity, topologySpreadConstraints and priorityClassName as given', async (t) => {
  const input = { name: 'nightjar-browser-pool1', namespace: 'ns', browserKind: 'chromium' as const, tokenSecretName: 'nightjar-browser-pool1-token', pool: true }
  const plain = browserPodManifest(input, { image: 'x' }) as Obj
  validPod(t, plain)
  t.same(plain.spec.topologySpreadConstraints, [
    { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'browser-pod', 'app.kubernetes.io/managed-by': 'nightjar-operator' } } },
  ], 'every browser pod, warm or claimed, counts in one soft spread over nodes')
  const selects = plain.spec.topologySpreadConstraints[0].labelSelector.matchLabels
  t.ok(Object.entries(selects).every(([k, v]) => plain.metadata.labels[k] === v), 'the spread selects the pod itself')
  t.notOk(plain.spec.affinity ?? plain.spec.nodeSelector ?? plain.spec.tolerations ?? plain.spec.priorityClassName, 'nothing else by default')

  const affinity = {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['browsers'] }] }, { matchExpressions: [{ key: 'spare', operator: 'Exists' }] }] } },
    podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'browser-pod' } } } }] },
  }
  const spread = [{ maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'browser-pod' } } }]
  const custom = browserPodManifest(input, { ...FULL, affinity, topologySpreadConstraints: spread }) as Obj
  validPod(t, custom)
  t.same(custom.spec.affinity, affinity)
  t.same(custom.spec.topologySpreadConstraints, spread, 'a given spread replaces the default')
  t.same(custom.spec.nodeSelector, FULL.nodeSelector)
  t.same(custom.spec.tolerations, FULL.tolerations)
  t.equal(custom.spec.priorityClassName, FULL.priorityClassName)
  t.notOk((browserPodManifest(input, { image: 'x', topologySpreadConstraints: [] }) as Obj).spec.topologySpreadConstraints, '[] turns spreading off')

  // nodes the operator knows are lost or draining join every nodeSelectorTerm (terms are ORed)
  // (a metadata.name requirement holds one value: the API server refuses more, so each node is
  // its own NotIn, ANDed within the term; test/cluster/pod-dry-run.test.ts sends these to a real one)
  const avoiding = browserPodManifest({ ...input, avoidNodes: ['node-b', 'node-a', 'node-b'] }, { ...FULL, affinity }) as Obj
  validPod(t, avoiding)
  const exclusions = [{ key: 'metadata.name', operator: 'NotIn', values: ['node-a'] }, { key: 'metadata.name', operator: 'NotIn', values: ['node-b'] }]
  t.same(avoiding.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.map((term: Obj) => term.matchFields), [exclusions, exclusions])
  t.same(avoiding.spec.affinity.podAntiAffinity, affinity.podAntiAffinity)
  t.same(affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0], { matchExpressions: [{ key: 'pool', operator: 'In', values: ['browsers'] }] }, 'the configured affinity is not changed in place')
  const bare = browserPodManifest({ ...input, avoidNodes: ['node-a'] }, { image: 'x' }) as Obj
  t.same(bare.spec.affinity, { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-a'] }] }] } } })

  // the operator's env → options
  const cfg = loadOperatorConfig({
    NIGHTJAR_BROWSER_IMAGE: 'x',
    NIGHTJAR_BROWSER_AFFINITY: JSON.stringify(affinity),
    NIGHTJAR_BROWSER_TOPOLOGY_SPREAD: JSON.stringify(spread),
    NIGHTJAR_BROWSER_NODE_SELECTOR: JSON.stringify(FULL.nodeSelector),
    NIGHTJAR_BROWSER_TOLERATIONS: JSON.stringify(FULL.tolerations),
    NIGHTJAR_BROWSER_PRIORITY_CLASS: 'nightjar-browsers',
    NIGHTJAR_DRAIN_GRACE_SECONDS: '120',
  }, 'ns')
  t.match(cfg.browser, { affinity, topologySpreadConstraints: spread, nodeSelector: FULL.nodeSelector, tolerations: FULL.tolerations, priorityClassName: 'nightjar-browsers' })
  t.same(cfg.nodes, { suspectAfterMs: 15_000, unreachableMs: 6_000, drainGraceMs: 120_000 })
  t.equal(loadOperatorConfig({ NIGHTJAR_BROWSER_IMAGE: 'x' }, 'ns').browser.topologySpreadConstraints, undefined, 'unset: the default spread')
  t.equal(loadOperatorConfig({ NIGHTJAR_BROWSER_IMAGE: 'x', NIGHTJAR_NODE_WATCH: 'false' }, 'ns').nodes, undefined)
  t.throws(() => loadOperatorConfig({ NIGHTJAR_BROWSER_IMAGE: 'x', NIGHTJAR_BROWSER_AFFINITY: '[1]' }, 'ns'), /NIGHTJAR_BROWSER_AFFINITY/)
})

t.test('[ISSUE-49] the pod the operator keeps answers every question the whole pod does, at a fraction of its size', async (t) => {
  const manifest = browserPodManifest(
    { name: 'nightjar-browser-skept', namespace: 'ns', browserKind: 'chromium', tokenSecretName: 'nightjar-browser-skept-token', labels: { 'nightjar.dev/session': 'nsess_K' }, owner, launch: { sessionId: 'nsess_K' } },
    FULL,
  ) as Obj
  const now = new Date('2026-12-03T12:00:00Z')
  // the pod as a real API server and kubelet report it: defaults, the projected token, images and IDs
  const served = (status: Obj): Obj => ({
    ...manifest,
    metadata: { ...manifest.metadata, uid: 'u-pod', resourceVersion: '42', creationTimestamp: '2026-12-03T11:59:00Z', annotations: { ...manifest.metadata.annotations, 'nightjar.dev/sandbox': 'chromium' } },
    spec: {
      ...manifest.spec,
      nodeName: 'node-a', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30, preemptionPolicy: 'PreemptLowerPriority', priority: 0,
      tolerations: [...(manifest.spec.tolerations ?? []), { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      volumes: [...(manifest.spec.volumes ?? []), { name: 'kube-api-access-x7k2p', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } }],
    },
    status,
  })
  const condition = (type: string, status: string) => ({ type, status, lastProbeTime: null, lastTransitionTime: '2026-12-03T11:59:30Z' })
  const containerStatus = (state: Obj, ready: boolean) => ({
    name: 'browser', ready, started: ready, restartCount: 0, state, lastState: {},
    image: FULL.image, imageID: 'registry.example/nightjar-browser-pod@sha256:' + 'a'.repeat(64), containerID: 'containerd://' + 'b'.repeat(64),
  })
  const base = { hostIP: '10.0.0.5', hostIPs: [{ ip: '10.0.0.5' }], startTime: '2026-12-03T11:59:01Z', qosClass: 'Burstable' }
  const states: Record<string, Obj> = {
    pending: { ...base, phase: 'Pending', conditions: [condition('PodScheduled', 'True')], containerStatuses: [containerStatus({ waiting: { reason: 'ContainerCreating' } }, false)] },
    ready: {
      ...base, phase: 'Running', podIP: '10.244.1.7', podIPs: [{ ip: '10.244.1.7' }],
      conditions: [condition('Initialized', 'True'), condition('Ready', 'True'), condition('ContainersReady', 'True'), condition('PodScheduled', 'True')],
      containerStatuses: [containerStatus({ running: { startedAt: '2026-12-03T11:59:20Z' } }, true)],
    },
    cannotPull: { ...base, phase: 'Pending', conditions: [condition('PodScheduled', 'True')], containerStatuses: [containerStatus({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } }, false)] },
    oomKilled: { ...base, phase: 'Failed', podIP: '10.244.1.7', containerStatuses: [containerStatus({ terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: 'x', finishedAt: 'y' } }, false)] },
    evicted: { ...base, phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' },
  }
  for (const [name, status] of Object.entries(states)) {
    const whole = served(status) as PodResource
    const kept = keptBrowserPod(structuredClone(whole))
    for (const timeout of [300_000, 1]) {
      t.same(podObservation('nsess_K', kept, { now, startTimeoutMs: timeout }), podObservation('nsess_K', whole, { now, startTimeoutMs: timeout }), `${name}: the same observation (start timeout ${timeout} ms)`)
    }
    t.equal(endpointOfPod(kept), endpointOfPod(whole), `${name}: the same endpoint`)
    t.equal(nodeOf(kept), 'node-a', `${name}: the node is kept (a lost node's pods are found by it)`)
    t.same(kept.metadata, whole.metadata, `${name}: metadata whole (labels, annotations, owner, deletion)`)
    const ratio = JSON.stringify(kept).length / JSON.stringify(whole).length
    t.ok(ratio < 0.6, `${name}: kept ${JSON.stringify(kept).length} of ${JSON.stringify(whole).length} characters`)
  }
})
