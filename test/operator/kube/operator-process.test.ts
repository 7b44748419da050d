// `nightjar operator`, the cluster operator process: probes and metrics on every replica,
// reconciling only on the leader, failover, refusing to campaign without CRDs, graceful
// SIGTERM — against the Kubernetes-API test server, as a real child process and in-process.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { runOperator, type OperatorProcess } from '../../../cli/operator.ts'
import { LABELS } from '../../../crds/types.ts'
import { silentLogger } from '../../../ports/ports.ts'
import { waitFor } from '../../helpers/wait.ts'
import { newSession } from '../helpers.ts'
import { kubeResources } from '../../../operator/kube/index.ts'
import { kubeConfig, NS, ROOT, startApi } from './helpers.ts'
import { FakeKubelet } from './kubelet.ts'

const LEASE_NS = 'nightjar-system'
const baseEnv = (extra: Record<string, string> = {}) => ({
  NIGHTJAR_BROWSER_IMAGE: 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0',
  NIGHTJAR_WATCH_NAMESPACE: NS,
  NIGHTJAR_POD_NAMESPACE: LEASE_NS,
  NIGHTJAR_OPERATOR_HOST: '127.0.0.1',
  NIGHTJAR_OPERATOR_PORT: '0',
  NIGHTJAR_WARM_POOL_SIZE: '0',
  NIGHTJAR_LEASE_DURATION_SECONDS: '3',
  NIGHTJAR_RENEW_DEADLINE_SECONDS: '2',
  NIGHTJAR_RETRY_PERIOD_SECONDS: '1',
  ...extra,
})

const get = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: res.status, text: await res.text() }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })

t.test('two replicas: both serve probes, only the leader reconciles; the follower takes over on release', async (t) => {
  const api = await startApi()
  const kubelet = await FakeKubelet.create(api, NS)
  const kc = kubeConfig(api)
  const procs: OperatorProcess[] = []
  t.teardown(async () => {
    for (const p of procs) await p.stop()
    await kubelet.close()
    await api.close()
  })
  const start = async (name: string) => {
    const p = await runOperator({ env: baseEnv({ NIGHTJAR_POD_NAME: name, NIGHTJAR_BROWSER_NODE_PORT: String(kubelet.podApiPort) }), kc, log: silentLogger })
    procs.push(p)
    return p
  }
  const a = await start('operator-a')
  await waitFor(() => a.elector.isLeader && a.running, { what: 'a leads' })
  const b = await start('operator-b')
  await waitFor(() => b.elector.leader === 'operator-a', { what: 'b sees a lead' })
  for (const p of [a, b]) {
    t.equal((await get(p.port, '/healthz')).status, 200)
    t.equal((await get(p.port, '/readyz')).status, 200, 'a follower is ready too (hot standby)')
  }
  t.equal(b.running, undefined, 'the follower runs no controllers')
  t.match((await get(b.port, '/metrics')).text, /leader_election_master_status\{name="nightjar-operator"\} 0/)
  t.match((await get(a.port, '/metrics')).text, /leader_election_master_status\{name="nightjar-operator"\} 1/)

  const { sessions } = kubeResources(kc, NS)
  await sessions.create(newSession('nsess_ProcA'))
  await waitFor(() => api.list('pods', NS).some((p) => p.metadata.labels?.[LABELS.session] === 'nsess_ProcA'), { what: 'leader made the pod' })
  await waitFor(async () => /controller_runtime_reconcile_total\{controller="browsersession",result="success"\} [1-9]/.test((await get(a.port, '/metrics')).text), { what: 'reconcile metric' })
  const metrics = (await get(a.port, '/metrics')).text
  for (const name of ['controller_runtime_reconcile_errors_total', 'controller_runtime_reconcile_time_seconds_bucket', 'workqueue_depth', 'workqueue_retries_total']) {
    t.match(metrics, new RegExp(`${name}\\{[^}]*(controller|name)="browsersession"`), name)
  }

  // a is shut down gracefully: it releases the lease and b takes over at once
  await a.stop()
  await waitFor(() => b.elector.isLeader && b.running, { what: 'b leads' })
  await sessions.create(newSession('nsess_ProcB'))
  await waitFor(() => api.list('pods', NS).some((p) => p.metadata.labels?.[LABELS.session] === 'nsess_ProcB'), { what: 'new leader reconciles' })
  t.equal(api.get('leases', LEASE_NS, 'nightjar-operator')?.spec.holderIdentity, 'operator-b')
})

t.test('without the CRDs a replica is not ready and does not campaign', async (t) => {
  const api = await startApi({ crds: false })
  let proc: OperatorProcess | undefined
  t.teardown(async () => {
    await proc?.stop()
    await api.close()
  })
  proc = await runOperator({ env: baseEnv({ NIGHTJAR_POD_NAME: 'op-x' }), kc: kubeConfig(api), log: silentLogger, crdRetryMs: 50 })
  const n = api.requests.length
  await waitFor(() => api.requests.filter((r) => r.path === '/apis').length >= 2 && api.requests.length > n, { what: 'discovery retried' })
  const ready = await get(proc.port, '/readyz')
  t.equal(ready.status, 503)
  t.match(ready.text, /install the CRDs/)
  t.equal((await get(proc.port, '/healthz')).status, 200, 'alive all the same')
  t.notOk(api.requests.some((r) => r.path.includes('/leases')), 'never touched the lease')
})

t.test('`nightjar operator` as a process: reconciles, never logs the token, stops on SIGTERM and releases the lease', async (t) => {
  const api = await startApi()
  const kubelet = await FakeKubelet.create(api, NS)
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-kube-'))
  t.teardown(async () => {
    await kubelet.close()
    await api.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const kubeconfig = join(dir, 'config')
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: test, cluster: {server: "${api.url}", insecure-skip-tls-verify: true}}]`,
      'users: [{name: test, user: {token: test-sa-token}}]',
      'contexts: [{name: test, context: {cluster: test, user: test}}]',
      'current-context: test',
    ].join('\n'),
  )
  const port = await freePort()
  const child = spawn(process.execPath, [`${ROOT}bin/nightjar.mjs`, 'operator'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, ...baseEnv({ NIGHTJAR_POD_NAME: 'operator-proc', NIGHTJAR_OPERATOR_PORT: String(port), NIGHTJAR_BROWSER_NODE_PORT: String(kubelet.podApiPort), NIGHTJAR_LOG_LEVEL: 'debug' }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })

  await waitFor(async () => (await get(port, '/readyz').catch(() => ({ status: 0 }))).status === 200, { what: 'operator ready', timeoutMs: 30_000 })
  await waitFor(() => api.get('leases', LEASE_NS, 'nightjar-operator')?.spec.holderIdentity === 'operator-proc', { what: 'leader' })
  const { sessions } = kubeResources(kubeConfig(api), NS)
  await sessions.create(newSession('nsess_Proc1'))
  const pod = await waitFor(() => api.list('pods', NS).find((p) => p.metadata.labels?.[LABELS.session] === 'nsess_Proc1'), { what: 'pod' })
  const fake = await kubelet.run(pod.metadata.name)
  await waitFor(async () => (await sessions.get('nsess_Proc1'))?.status?.phase === 'Live', { what: 'Live' })
  t.ok(fake.configured, 'the process configured the pod')
  t.ok(output.length > 0, 'it logged')
  t.notOk(output.includes(fake.token), 'the pod token never appears in its output')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits 0 on SIGTERM')
  t.equal(api.get('leases', LEASE_NS, 'nightjar-operator')?.spec.holderIdentity, '', 'the lease was released')
})

t.test('`nightjar operator` with a bad setting stops with one line naming the variable', async (t) => {
  const child = spawn(process.execPath, [`${ROOT}bin/nightjar.mjs`, 'operator'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NIGHTJAR_BROWSER_IMAGE: 'img:1', NIGHTJAR_WARM_POOL_SIZE: 'many' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)))
  t.equal(code, 1)
  t.match(err.trim(), /^nightjar: invalid configuration: NIGHTJAR_WARM_POOL_SIZE: /)
  t.equal(err.trim().split('\n').length, 1)
})
