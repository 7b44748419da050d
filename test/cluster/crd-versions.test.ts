// The CRD version upgrade on a real control plane: the previous release's v1alpha1-only CRDs
// and objects, then the chart's CRDs as `helm upgrade` applies them; both versions read the
// same objects, the operator migrates them to v1 and reconciles either. Its own apiserver
// and etcd: the CRDs are cluster-wide, and the phase's shared control plane keeps the current.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { KubeConfig } from '@kubernetes/client-node'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { runOperator } from '../../cli/operator.ts'
import { API_VERSION, type BrowserSession, type Network } from '../../crds/types.ts'
import { customObjectOps } from '../../operator/kube/api-ops.ts'
import { kubeName } from '../../operator/kube/names.ts'
import { KubeResourceClient } from '../../operator/kube/resource-client.ts'
import type { Logger } from '../../ports/ports.ts'
// @ts-expect-error -- a plain .mjs script without types
import { ensureKube } from '../../scripts/fetch-kube.mjs'
import { waitFor } from '../helpers/wait.ts'
import { newNetwork, newSession } from '../operator/helpers.ts'
import { startControlPlane } from '../../devcluster/control-plane.ts'
import { CHART, HELM, KUBECTL, ROOT } from './helpers.ts'

const NS = 'nightjar'
const CRDS = ['browsersessions.nightjar.dev', 'networks.nightjar.dev']
type Obj = Record<string, any>

t.test('[ISSUE-38] CRDs upgraded from v1alpha1 to v1: both versions read, stored objects migrated, the operator reconciles both', async (t) => {
  const cp = await startControlPlane({
    binDir: ensureKube() as string,
    // no pods run here: the API server alone on loopback
    network: { bridge: 'none', hostIp: '127.0.0.1', prefix: 32, serviceCidr: '10.254.0.0/24' },
  })
  t.teardown(() => cp.stop())

  const kubectl = (args: string[], input?: string) => {
    const r = spawnSync(KUBECTL, ['--kubeconfig', cp.kubeconfig, ...args], { encoding: 'utf8', input, timeout: 60_000 })
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${(r.stderr || r.stdout).trim()}`)
    return { stdout: r.stdout, stderr: r.stderr }
  }
  const kubectlJson = (args: string[]) => JSON.parse(kubectl([...args, '-o', 'json']).stdout) as Obj
  const helmTemplate = (files: string[]) => {
    const r = spawnSync(HELM, ['template', 'nj', CHART, '--namespace', NS, '--kube-version', '1.20.2', ...files.flatMap((f) => ['--show-only', f])], {
      encoding: 'utf8',
      env: { ...process.env, HELM_CACHE_HOME: '/tmp/nightjar-helm/cache', HELM_CONFIG_HOME: '/tmp/nightjar-helm/config', HELM_DATA_HOME: '/tmp/nightjar-helm/data' },
    })
    if (r.status !== 0) throw new Error(`helm template: ${r.stderr}`)
    return r.stdout
  }
  const tokenConfig = (token?: string) => {
    const kc = new KubeConfig()
    if (!token) kc.loadFromFile(cp.kubeconfig)
    else {
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: cp.url, caFile: cp.caFile }],
        users: [{ name: 'u', token }],
        contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
        currentContext: 'c',
      })
    }
    return kc
  }
  const admin = tokenConfig()
  /** the previous release's api-server: its resource client at nightjar.dev/v1alpha1 */
  const clientAt = <T extends BrowserSession | Network>(version: string, plural: string, kind: string) =>
    new KubeResourceClient<T>({ kc: admin, mapNames: true, ops: customObjectOps(admin, { group: 'nightjar.dev', version, plural, kind, namespace: NS }) })
  const old = { sessions: clientAt<BrowserSession>('v1alpha1', 'browsersessions', 'BrowserSession'), networks: clientAt<Network>('v1alpha1', 'networks', 'Network') }
  const now = { sessions: clientAt<BrowserSession>('v1', 'browsersessions', 'BrowserSession'), networks: clientAt<Network>('v1', 'networks', 'Network') }
  /** the apiVersion an object is encoded with in etcd: what "stored as" means */
  const storedAs = async (plural: string, id: string) => {
    const key = Buffer.from(`/registry/nightjar.dev/${plural}/${NS}/${kubeName(id)}`).toString('base64')
    const r = (await (await fetch(`${cp.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key }) })).json()) as { kvs?: { value: string }[] }
    if (!r.kvs?.length) throw new Error(`${plural}/${id} is not in etcd`)
    return (JSON.parse(Buffer.from(r.kvs[0].value, 'base64').toString('utf8')) as Obj).apiVersion as string
  }
  const storedVersions = (crd: string) => kubectlJson(['get', 'crd', crd]).status.storedVersions as string[]
  const established = () => kubectl(['wait', '--for', 'condition=established', '--timeout=60s', ...CRDS.map((c) => `crd/${c}`)])

  // --- the previous release ---------------------------------------------------------------
  // its CRDs as its chart rendered them for 1.20: without CEL rules
  for (const file of CRDS) {
    const crd = parse(readFileSync(`${ROOT}test/fixtures/crds-v1alpha1/${file}.yaml`, 'utf8')) as Obj
    for (const v of crd.spec.versions) delete v.schema.openAPIV3Schema.properties.spec['x-kubernetes-validations']
    kubectl(['apply', '-f', '-'], JSON.stringify(crd))
  }
  established()
  kubectl(['create', 'namespace', NS])
  const [oldSession, oldNetwork, newSessionId] = ['nsess_WrittenAsAlpha1', 'nnet_WrittenAsAlpha1', 'nsess_WrittenAsV1']
  const createdOld = await old.sessions.create(newSession(oldSession, { url: 'https://example.com/' }))
  await old.networks.create(newNetwork(oldNetwork, ['localhost:3000']))
  t.equal(createdOld.apiVersion, 'nightjar.dev/v1alpha1')
  t.equal(await storedAs('browsersessions', oldSession), 'nightjar.dev/v1alpha1', 'the previous release stores v1alpha1')
  t.same(CRDS.map(storedVersions), [['v1alpha1'], ['v1alpha1']])

  // --- the upgrade: the chart's CRD templates, as `helm upgrade` applies them ----------------
  const upgraded = parseAllDocuments(helmTemplate(['templates/crds.yaml'])).map((d) => d.toJS() as Obj).filter(Boolean)
  t.same(upgraded.map((c) => c.metadata.name).sort(), CRDS)
  for (const crd of upgraded) kubectl(['apply', '-f', '-'], JSON.stringify(crd))
  established()
  await waitFor(() => kubectl(['api-versions']).stdout.split('\n').includes('nightjar.dev/v1'), { what: 'nightjar.dev/v1 in discovery', timeoutMs: 30_000, intervalMs: 200 })
  t.same(CRDS.map(storedVersions), [['v1alpha1', 'v1'], ['v1alpha1', 'v1']], 'until migrated, objects may be stored as either version')

  await t.test('the same objects read as v1, as v1alpha1 (with a deprecation warning) and at the preferred version', async (t) => {
    const asV1 = kubectlJson(['-n', NS, 'get', 'browsersessions.v1.nightjar.dev', kubeName(oldSession)])
    const alpha = kubectl(['-n', NS, 'get', 'browsersessions.v1alpha1.nightjar.dev', kubeName(oldSession), '-o', 'json'])
    const asAlpha = JSON.parse(alpha.stdout) as Obj
    t.equal(asV1.apiVersion, 'nightjar.dev/v1')
    t.equal(asAlpha.apiVersion, 'nightjar.dev/v1alpha1')
    t.same(asV1.spec, asAlpha.spec, 'the same spec through both versions (conversion None rewrites apiVersion only)')
    t.same(asV1.metadata, asAlpha.metadata, 'one object: same uid, resourceVersion, annotations')
    t.equal(asV1.spec.url, 'https://example.com/')
    t.match(alpha.stderr, /Warning: nightjar\.dev\/v1alpha1 BrowserSession is deprecated; use nightjar\.dev\/v1 BrowserSession/, 'kubectl says v1alpha1 is deprecated')
    t.equal(kubectlJson(['-n', NS, 'get', 'browsersessions']).items[0].apiVersion, 'nightjar.dev/v1', 'plain `kubectl get browsersessions` uses v1 (the preferred version)')
    t.match(kubectl(['-n', NS, 'get', 'networks.v1alpha1.nightjar.dev']).stdout, /^NAME\s+NAME\s+READY\s+DAEMONS\s+ONLINE\s+AGE\n/, 'v1alpha1 keeps the printer columns')
    t.match(kubectl(['-n', NS, 'get', 'bs']).stdout, /^NAME\s+PHASE\s+EGRESS\s+IDENTITY\s+AGE\n/)
    // the previous release's clients keep working during the rollout
    const net = await old.networks.get(oldNetwork)
    t.same(net?.spec.declaredHosts, ['localhost:3000'])
    t.equal((await now.networks.get(oldNetwork))?.metadata.uid, net?.metadata.uid)
  })

  // a session the new api-server writes after the upgrade
  const createdNew = await now.sessions.create(newSession(newSessionId))
  t.equal(createdNew.apiVersion, API_VERSION)
  t.equal(await storedAs('browsersessions', newSessionId), 'nightjar.dev/v1', 'new writes are stored as v1')
  t.equal(await storedAs('browsersessions', oldSession), 'nightjar.dev/v1alpha1', 'an untouched object is still stored as v1alpha1')

  // --- the new operator, as the chart's ServiceAccount with the chart's RBAC -------------------
  kubectl(['apply', '-f', '-'], helmTemplate(['templates/serviceaccounts.yaml', 'templates/rbac.yaml']))
  const sa = 'nj-nightjar-operator'
  const secretName = await waitFor(() => kubectlJson(['-n', NS, 'get', 'serviceaccount', sa]).secrets?.[0]?.name as string | undefined, { what: 'the operator token Secret', timeoutMs: 30_000, intervalMs: 200 })
  const token = Buffer.from(kubectlJson(['-n', NS, 'get', 'secret', secretName]).data.token, 'base64').toString('utf8')
  const lines: { level: string; obj: object; msg?: string }[] = []
  const log: Logger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (obj: object, msg?: string) => void lines.push({ level, obj, msg })])) as unknown as Logger
  const operator = await runOperator({
    kc: tokenConfig(token),
    log,
    env: {
      NIGHTJAR_BROWSER_IMAGE: 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0',
      NIGHTJAR_WATCH_NAMESPACE: NS,
      NIGHTJAR_POD_NAMESPACE: NS,
      NIGHTJAR_POD_NAME: 'nj-nightjar-operator-0',
      NIGHTJAR_OPERATOR_HOST: '127.0.0.1',
      NIGHTJAR_OPERATOR_PORT: '0',
      NIGHTJAR_WARM_POOL_SIZE: '0',
    },
    crdRetryMs: 200,
  })
  t.teardown(() => operator.stop())

  await t.test('the operator migrates every stored object to v1, then trims storedVersions to [v1]', async (t) => {
    await waitFor(() => CRDS.every((c) => storedVersions(c).join() === 'v1'), { what: 'storedVersions trimmed to [v1]', timeoutMs: 60_000, intervalMs: 250 })
    for (const [plural, id] of [['browsersessions', oldSession], ['browsersessions', newSessionId], ['networks', oldNetwork]]) {
      t.equal(await storedAs(plural, id), 'nightjar.dev/v1', `${plural}/${id} is stored as v1`)
    }
    t.notOk(lines.some((l) => l.level === 'warn' || l.level === 'error'), 'no warnings: the chart grants what the migration needs')
    t.ok(lines.some((l) => l.msg === 'stored objects migrated to the storage version'), 'the operator says it migrated')
    // after the trim, a later release may stop serving v1alpha1: the api-server accepts a CRD
    // without it only because no object is stored as it any more
    const v1Only = structuredClone(upgraded.find((c) => c.metadata.name === 'networks.nightjar.dev')!)
    v1Only.spec.versions = v1Only.spec.versions.filter((v: Obj) => v.name === 'v1')
    t.doesNotThrow(() => kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(v1Only)), 'dropping v1alpha1 would now be accepted')
    // and the one-shot for administrators finds nothing left to do
    const once = spawnSync(process.execPath, [`${ROOT}bin/nightjar.mjs`, 'operator', 'migrate-storage'], { encoding: 'utf8', env: { ...process.env, KUBECONFIG: cp.kubeconfig }, timeout: 60_000 })
    t.equal(once.status, 0, once.stderr)
    t.match(once.stdout, /browsersessions\.nightjar\.dev: stored as v1 only; 0 objects rewritten\nnetworks\.nightjar\.dev: stored as v1 only; 0 objects rewritten/)
  })

  await t.test('the operator reconciles a session written as v1alpha1 and one written as v1, and ends one through v1alpha1', async (t) => {
    for (const id of [oldSession, newSessionId]) {
      const s = await waitFor(async () => {
        const got = await now.sessions.get(id)
        return got?.status?.podName ? got : undefined
      }, { what: `${id} has a pod`, timeoutMs: 60_000, intervalMs: 250 })
      t.equal(s.status?.phase, 'Pending', `${id}: the operator reports its pod starting (no node runs it here)`)
      const pod = kubectlJson(['-n', NS, 'get', 'pod', s.status!.podName!])
      t.same(pod.metadata.ownerReferences.map((o: Obj) => [o.apiVersion, o.kind, o.uid]), [[API_VERSION, 'BrowserSession', s.metadata.uid]], `${id}: its pod is owned through nightjar.dev/v1`)
    }
    const net = await waitFor(async () => {
      const got = await old.networks.get(oldNetwork)
      return got?.status?.conditions?.length ? got : undefined
    }, { what: 'the network reconciled', timeoutMs: 60_000, intervalMs: 250 })
    t.equal(net.status?.daemonCount, 0, 'the Network written as v1alpha1 has its status, read back as v1alpha1')
    // the previous api-server (still running during a rollout) ends a session through v1alpha1
    const podName = (await now.sessions.get(oldSession))!.status!.podName!
    await old.sessions.patch(oldSession, { spec: { desiredState: 'Ended' } })
    const ended = await waitFor(async () => {
      const got = await old.sessions.get(oldSession)
      return got?.status?.phase === 'Ended' ? got : undefined
    }, { what: 'the session ended', timeoutMs: 60_000, intervalMs: 250 })
    t.ok(ended.status?.endedAt, 'ended, as read through v1alpha1')
    await waitFor(() => !kubectl(['-n', NS, 'get', 'pods', '-o', 'name']).stdout.includes(`pod/${podName}\n`), { what: 'its pod deleted', timeoutMs: 60_000, intervalMs: 250 })
    t.equal((await now.sessions.get(newSessionId))?.status?.phase, 'Pending', 'the other session is left alone')
  })
})
