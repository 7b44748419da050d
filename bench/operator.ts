// The operator on a real control plane: N BrowserSessions created at once → time until every
// browser Pod exists and every session is Live, kube-apiserver requests per session, and the
// operator's peak memory; N = 100 (the baseline), then N = 1,000, in the same run. Browser
// pods are fake (the test node answers their pod API); the operator is the real one.
// How requests are attributed, and the environment it reads: bench/README.md#how-each-bench-measures
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, Watch, type V1CustomResourceDefinition } from '@kubernetes/client-node'
import { parse as parseYaml } from 'yaml'
import { BROWSER_SESSION, GROUP, LABELS, VERSION, type BrowserSession } from '../crds/types.ts'
import { kubeName, kubeResources } from '../operator/kube/index.ts'
import { newId } from '../contracts/ids.ts'
import { percentile, progress } from './harness.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const NAMESPACE = 'nj-bench'
const BROWSER_IMAGE = 'ghcr.io/nightjar-dev/nightjar-browser-pod:0.1.0'
const ROUND_TIMEOUT_MS = 180_000
const SETTLE_MS = 3000

type Row = Record<string, string | number>

interface ClusterInfo {
  etcdUrl?: string
  url: string
  caFile: string
  adminToken: string
  kubeconfig: string
}

export interface OperatorBenchResult {
  rows: Row[]
  /** CPU seconds per process from the first create until every session settled */
  cpu: Row[]
  requests: Row[]
  config: string
}

export async function benchOperator(): Promise<OperatorBenchResult> {
  const sizes = (process.env.NIGHTJAR_BENCH_SESSIONS ?? '100,1000').split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0)
  const createConcurrency = Number(process.env.NIGHTJAR_BENCH_CREATE_CONCURRENCY ?? 32)
  progress('starting the control plane (etcd, kube-apiserver, controller-manager, test node with fake browsers)…')
  // a plain .mjs without types: imported by a computed specifier, typed here
  const clusterModule = new URL('../scripts/cluster-process.mjs', import.meta.url).href
  const { startClusterProcess } = (await import(clusterModule)) as {
    startClusterProcess(opts: { fakeBrowsers?: boolean; log?: (m: string) => void }): Promise<{ info: unknown; infoFile: string; stop(): Promise<void> }>
  }
  const cluster = await startClusterProcess({ fakeBrowsers: true })
  const info = cluster.info as ClusterInfo
  const work = mkdtempSync(join(tmpdir(), 'nightjar-bench-operator-'))
  let operator: OperatorChild | undefined
  try {
    const kc = new KubeConfig()
    kc.loadFromFile(info.kubeconfig)
    await applyCrds(kc)
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } })
    operator = await startOperator(info, work)
    progress(`operator running (pid ${operator.pid}, concurrency ${operator.concurrency}, warm pool ${operator.pool}); log ${operator.logFile}`)

    const rows: Row[] = []
    const cpu: Row[] = []
    let requests: Row[] = []
    const pids = clusterPids(info, cluster.infoFile, operator.pid)
    progress(`processes: ${JSON.stringify(pids)}`)
    for (const [i, n] of sizes.entries()) {
      const r = await round(kc, info, pids, operator, n, createConcurrency)
      rows.push(r.row)
      cpu.push(r.cpu)
      progress(`${n} sessions: ${JSON.stringify(r.row)}`)
      requests = r.requests // the breakdown of the largest (last) round
      // the last round's sessions go with the cluster
      if (i < sizes.length - 1) await cleanUp(kc, n)
    }
    return { rows, requests, cpu, config: `operator concurrency ${operator.concurrency}, warm pool ${operator.pool}, bench create concurrency ${createConcurrency}` }
  } finally {
    await operator?.stop()
    progress('stopping the control plane…')
    await cluster.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

// --- set-up ----------------------------------------------------------------------------------

async function applyCrds(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api)
  const dir = join(ROOT, 'crds')
  const names: string[] = []
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    const crd = parseYaml(readFileSync(join(dir, f), 'utf8')) as V1CustomResourceDefinition
    await api.createCustomResourceDefinition({ body: crd })
    names.push(crd.metadata!.name!)
  }
  const deadline = Date.now() + 60_000
  for (const name of names) {
    for (;;) {
      const crd = await api.readCustomResourceDefinition({ name })
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break
      if (Date.now() > deadline) throw new Error(`CRD ${name} not established`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

interface OperatorChild {
  pid: number
  concurrency: string
  pool: string
  logFile: string
  /** VmHWM (peak RSS) since the last resetPeak(), in bytes */
  peakRss(): number
  resetPeak(): void
  stop(): Promise<void>
}

async function startOperator(info: ClusterInfo, work: string): Promise<OperatorChild> {
  const concurrency = process.env.NIGHTJAR_OPERATOR_CONCURRENCY ?? '16' // the chart's default
  const pool = process.env.NIGHTJAR_WARM_POOL_SIZE ?? '0'
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: info.kubeconfig,
    NIGHTJAR_WATCH_NAMESPACE: NAMESPACE,
    NIGHTJAR_POD_NAMESPACE: NAMESPACE,
    NIGHTJAR_LEASE_NAMESPACE: NAMESPACE,
    NIGHTJAR_BROWSER_IMAGE: BROWSER_IMAGE,
    NIGHTJAR_WARM_POOL_SIZE: pool,
    NIGHTJAR_OPERATOR_CONCURRENCY: concurrency,
    NIGHTJAR_OPERATOR_HOST: '127.0.0.1',
    NIGHTJAR_OPERATOR_PORT: '0',
    NIGHTJAR_LOG_LEVEL: 'info',
    // a V8 CPU profile of the operator per run, for finding what grows with the session count
    ...(process.env.NIGHTJAR_BENCH_OPERATOR_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.NIGHTJAR_BENCH_OPERATOR_PROFILE}` } : {}),
  }
  const logFile = join(work, 'operator.log')
  const out = createWriteStream(logFile)
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'bin/nightjar.mjs'), 'operator'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let seen = ''
  const started = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out.write(d)
      if (seen.length < 1 << 20) seen += d
      if (seen.includes('"msg":"operator started"')) {
        child.stdout!.off('data', onData)
        child.stdout!.on('data', (x: Buffer) => out.write(x))
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (d: Buffer) => out.write(d))
    child.once('exit', (code) => reject(new Error(`the operator exited (${code}) before it started:\n${seen.slice(-2000)}`)))
    setTimeout(() => reject(new Error(`the operator did not start within 60 s:\n${seen.slice(-2000)}`)), 60_000).unref()
  })
  await started
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const pid = child.pid!
  const status = () => readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status())?.[1] ?? 0) * 1024
  return {
    pid,
    concurrency,
    pool,
    logFile,
    peakRss: () => kb('VmHWM'),
    // "5" resets the peak RSS to the current RSS (Linux 4.0+)
    resetPeak: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const t = setTimeout(() => child.kill('SIGKILL'), 30_000)
        await exited
        clearTimeout(t)
      }
      out.end()
    },
  }
}

// --- one round ---------------------------------------------------------------------------------

function sessionSpec(orgId: string, agentId: string): BrowserSession['spec'] {
  return {
    orgId,
    agentId,
    openedBy: { principalId: agentId, credentialId: 'nkey_bench', name: 'bench key' },
    browserKind: 'chromium',
    egress: 'platform',
    declaredHosts: [],
    desiredState: 'Live',
  } as BrowserSession['spec']
}

/** a watch that re-watches from its last version when the server ends it */
function watchAll(kc: KubeConfig, path: string, fromRv: string, onEvent: (type: string, obj: any) => void): { stop(): void; watches: () => number } {
  let rv = fromRv
  let stopped = false
  let abort: AbortController | undefined
  let watches = 0
  const start = () => {
    if (stopped) return
    watches++
    void new Watch(kc)
      .watch(
        path,
        { resourceVersion: rv, timeoutSeconds: 900, allowWatchBookmarks: true },
        (type, obj: any) => {
          if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion
          if (type !== 'BOOKMARK' && type !== 'ERROR') onEvent(type, obj)
        },
        () => setTimeout(start, 50),
      )
      .then((c) => {
        abort = c
        if (stopped) c.abort()
      }, () => setTimeout(start, 200))
  }
  start()
  return {
    stop: () => {
      stopped = true
      abort?.abort()
    },
    watches: () => watches,
  }
}

async function round(kc: KubeConfig, info: ClusterInfo, pids: Record<string, number>, op: OperatorChild, n: number, createConcurrency: number): Promise<{ row: Row; requests: Row[]; cpu: Row }> {
  const custom = kc.makeApiClient(CustomObjectsApi)
  const core = kc.makeApiClient(CoreV1Api)
  const { sessions } = kubeResources(kc, NAMESPACE)
  const orgId = newId('norg_')
  const agentId = newId('nagt_')
  const ids = Array.from({ length: n }, () => newId('nsess_'))
  const byObjectName = new Map(ids.map((id) => [kubeName(id), id]))

  const createdAt = new Map<string, number>()
  const liveAt = new Map<string, number>()
  const podAt = new Map<string, number>()
  const failed = new Set<string>()
  let allPods: () => void = () => {}
  let allLive: () => void = () => {}
  const podsDone = new Promise<void>((r) => (allPods = r))
  const liveDone = new Promise<void>((r) => (allLive = r))
  const settled = () => liveAt.size + failed.size >= n

  // the watches start before the first create (from the current versions)
  const bsList = await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: BROWSER_SESSION.plural, limit: 1 })
  const podList = await core.listNamespacedPod({ namespace: NAMESPACE, limit: 1 })
  const bsWatch = watchAll(kc, `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/${BROWSER_SESSION.plural}`, (bsList as any).metadata.resourceVersion, (type, obj) => {
    const id = byObjectName.get(obj.metadata.name)
    if (!id) return
    const phase = obj.status?.phase
    if (phase === 'Live' && !liveAt.has(id)) liveAt.set(id, performance.now())
    else if ((phase === 'Failed' || phase === 'Ended' || type === 'DELETED') && !liveAt.has(id)) failed.add(id)
    if (settled()) allLive()
  })
  const podWatch = watchAll(kc, `/api/v1/namespaces/${NAMESPACE}/pods`, podList.metadata!.resourceVersion!, (type, obj) => {
    const id = obj.metadata.labels?.[LABELS.session]
    if (type === 'DELETED' || !id || !byObjectName.has(kubeName(id)) || podAt.has(id)) return
    podAt.set(id, performance.now())
    if (podAt.size >= n) allPods()
  })
  // give both watches a moment to be established before the burst
  await new Promise((r) => setTimeout(r, 500))

  const before = await scrapeRequests(info)
  const cpuBefore = cpuSnapshot(pids)
  op.resetPeak()
  let peak = op.peakRss()
  const sampler = setInterval(() => (peak = Math.max(peak, op.peakRss())), 250)

  progress(`${n} sessions: creating (${createConcurrency} at a time)…`)
  const t0 = performance.now()
  let next = 0
  let createErrors = 0
  await Promise.all(
    Array.from({ length: Math.min(createConcurrency, n) }, async () => {
      while (next < ids.length) {
        const id = ids[next++]
        try {
          await sessions.create({ metadata: { name: id, labels: { [LABELS.org]: orgId, [LABELS.agent]: agentId } }, spec: sessionSpec(orgId, agentId) })
          createdAt.set(id, performance.now())
        } catch (err) {
          createErrors++
          failed.add(id)
          progress(`create ${id} failed: ${(err as Error).message}`)
        }
      }
    }),
  )
  const createdS = (performance.now() - t0) / 1000
  progress(`${n} sessions: all created after ${createdS.toFixed(1)} s; waiting for pods and Live…`)
  if (settled()) allLive()
  const report = setInterval(() => progress(`${n} sessions: +${((performance.now() - t0) / 1000).toFixed(0)} s: ${podAt.size} pods, ${liveAt.size} live, ${failed.size} failed`), 5000)
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ROUND_TIMEOUT_MS).unref())
  const podsResult = await Promise.race([podsDone.then(() => 'ok' as const), timeout])
  const podsS = podsResult === 'ok' ? (Math.max(...podAt.values()) - t0) / 1000 : NaN
  const liveResult = await Promise.race([liveDone.then(() => 'ok' as const), timeout])
  clearInterval(report)
  const cpuAfter = cpuSnapshot(pids)
  const liveTimes = [...liveAt.values()]
  const allLiveS = liveAt.size === n ? (Math.max(...liveTimes) - t0) / 1000 : NaN
  progress(`${n} sessions: ${liveResult === 'ok' ? 'settled' : 'TIMED OUT'}: ${podAt.size} pods, ${liveAt.size} live, ${failed.size} failed`)

  // trailing writes of the round (events, a last status) land within the settle time
  await new Promise((r) => setTimeout(r, SETTLE_MS))
  clearInterval(sampler)
  peak = Math.max(peak, op.peakRss())
  const after = await scrapeRequests(info)
  bsWatch.stop()
  podWatch.stop()

  const perSession = [...liveAt].map(([id, t]) => t - (createdAt.get(id) ?? t0))
  const delta = diffRequests(before, after)
  const { operator, node, bench, rows } = attribute(delta, n)
  const lost = n - liveAt.size
  const sec = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : `> ${ROUND_TIMEOUT_MS / 1000}`)
  return {
    row: {
      sessions: n,
      'created (s)': createdS.toFixed(1),
      'pods exist (s)': sec(podsS),
      'all live (s)': sec(allLiveS),
      'p50 create→live (ms)': perSession.length ? percentile(perSession, 50).toFixed(0) : '-',
      'p95 create→live (ms)': perSession.length ? percentile(perSession, 95).toFixed(0) : '-',
      lost: `${lost}${createErrors ? ` (${createErrors} create errors)` : ''}`,
      'API req/session operator': (operator / n).toFixed(1),
      'node': (node / n).toFixed(1),
      'bench': (bench / n).toFixed(1),
      'operator peak RSS (MiB)': (peak / 2 ** 20).toFixed(0),
    },
    requests: rows,
    cpu: {
      sessions: n,
      'wall (s)': ((cpuAfter.machine.total - cpuBefore.machine.total) / cores()).toFixed(1),
      ...Object.fromEntries(Object.keys(pids).map((k) => [`${k} (s)`, (cpuAfter.procs[k] - cpuBefore.procs[k]).toFixed(1)])),
      'bench (s)': (cpuAfter.self - cpuBefore.self).toFixed(1),
      'machine busy (s)': (cpuAfter.machine.busy - cpuBefore.machine.busy).toFixed(1),
      'machine capacity (s)': (cpuAfter.machine.total - cpuBefore.machine.total).toFixed(1),
    },
  }
}

function cores(): number {
  return readFileSync('/proc/stat', 'utf8').split('\n').filter((l) => /^cpu\d+ /.test(l)).length || 1
}

/** delete the round's sessions (one collection delete) and wait until no session, pod or token Secret is left */
async function cleanUp(kc: KubeConfig, n: number): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi)
  const core = kc.makeApiClient(CoreV1Api)
  progress(`${n} sessions: deleting them…`)
  const t0 = performance.now()
  // a big collection may outlast the request's own timeout (504); the deletion goes on regardless
  await custom
    .deleteCollectionNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: BROWSER_SESSION.plural, propagationPolicy: 'Background' })
    .catch((err) => progress(`delete collection: ${(err as { code?: number }).code ?? String(err)}; waiting for the deletion anyway`))
  const deadline = Date.now() + 300_000
  for (;;) {
    const [bs, pods, secrets] = await Promise.all([
      custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: BROWSER_SESSION.plural, limit: 1 }),
      core.listNamespacedPod({ namespace: NAMESPACE, limit: 1 }),
      core.listNamespacedSecret({ namespace: NAMESPACE, labelSelector: LABELS.session, limit: 1 }),
    ])
    if (!(bs as any).items.length && !pods.items.length && !secrets.items.length) break
    if (Date.now() > deadline) throw new Error('the sessions of the round were not cleaned up within 5 min')
    await new Promise((r) => setTimeout(r, 1000))
  }
  progress(`${n} sessions: cleaned up in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

// --- CPU time per component ----------------------------------------------------------------------

const TICK = 100 // USER_HZ on Linux

/** the cluster's processes, found by what their command lines carry (scripts/cluster-process.mjs does not say their pids) */
function clusterPids(info: ClusterInfo & { etcdUrl?: string }, infoFile: string, operatorPid: number): Record<string, number> {
  const found: Record<string, number> = { operator: operatorPid }
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    let cmd = ''
    try {
      cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ')
    } catch {
      continue
    }
    if (info.etcdUrl && cmd.includes('kube-apiserver') && cmd.includes(`--etcd-servers=${info.etcdUrl}`)) found['kube-apiserver'] = Number(d)
    else if (info.etcdUrl && /(^|\/)etcd /.test(cmd) && cmd.includes(info.etcdUrl)) found.etcd = Number(d)
    else if (cmd.includes('kube-controller-manager') && cmd.includes(`--kubeconfig=${info.kubeconfig}`)) found['controller-manager'] = Number(d)
    else if (cmd.includes('test/cluster/main.ts') && cmd.includes(infoFile)) found['test node'] = Number(d)
  }
  return found
}

function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) / TICK // utime + stime (fields 14, 15)
  } catch {
    return 0
  }
}

/** busy and total CPU seconds of the whole machine (all users: other work on it shows here) */
function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const total = f.reduce((a, b) => a + b, 0) / TICK
  const idle = (f[3] + (f[4] ?? 0)) / TICK
  return { busy: total - idle, total }
}

function cpuSnapshot(pids: Record<string, number>): { procs: Record<string, number>; machine: { busy: number; total: number }; self: number } {
  return { procs: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])), machine: machineCpu(), self: cpuSeconds(process.pid) }
}

// --- api-server request counts -------------------------------------------------------------------

type Counts = Map<string, number>

function scrapeRequests(info: ClusterInfo): Promise<Counts> {
  const ca = readFileSync(info.caFile)
  return new Promise((resolve, reject) => {
    const req = request(`${info.url}/metrics`, { ca, headers: { authorization: `Bearer ${info.adminToken}` }, timeout: 30_000 }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (text += c))
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET /metrics: ${res.statusCode}`))
        const counts: Counts = new Map()
        for (const line of text.split('\n')) {
          if (!line.startsWith('apiserver_request_total{')) continue
          const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
          const value = Number(line.slice(line.lastIndexOf(' ') + 1))
          const key = `${labels.verb} ${labels.resource}${labels.subresource ? '/' + labels.subresource : ''}`
          counts.set(key, (counts.get(key) ?? 0) + value)
        }
        resolve(counts)
      })
    })
    req.on('timeout', () => req.destroy(new Error('GET /metrics timed out')))
    req.on('error', reject)
    req.end()
  })
}

function diffRequests(before: Counts, after: Counts): Counts {
  const d: Counts = new Map()
  for (const [k, v] of after) {
    const x = v - (before.get(k) ?? 0)
    if (x > 0) d.set(k, x)
  }
  return d
}

/** who makes each kind of request (see the header); the bench's own are known exactly */
const NODE_KINDS = new Set(['POST pods/binding', 'PATCH pods/status', 'GET secrets', 'PATCH nodes/status', 'GET nodes'])
const BENCH_KINDS = new Set(['POST browsersessions', 'WATCH browsersessions', 'WATCH pods'])

function attribute(delta: Counts, n: number): { operator: number; node: number; bench: number; rows: Row[] } {
  let operator = 0
  let node = 0
  let bench = 0
  const rows: Row[] = []
  // the bench's lists (2 at the start) are LIST browsersessions / LIST pods: take them off those
  let benchLists = 2
  for (const [k, v] of [...delta].sort((a, b) => b[1] - a[1])) {
    let who = 'operator'
    let count = v
    if (NODE_KINDS.has(k)) {
      who = 'test node'
      node += v
    } else if (BENCH_KINDS.has(k)) {
      who = 'bench'
      bench += v
    } else if ((k === 'LIST browsersessions' || k === 'LIST pods') && benchLists > 0) {
      const mine = Math.min(1, v)
      benchLists -= mine
      bench += mine
      count = v - mine
      operator += count
      who = count ? 'operator (+1 bench)' : 'bench'
    } else operator += v
    rows.push({ request: k, by: who, total: v, 'per session': (v / n).toFixed(2) })
  }
  return { operator, node, bench, rows }
}
