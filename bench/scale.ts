// npm run bench -- scale: sessions live at once on a simulated fleet of hollow browser pods
// (devcluster/fleet/), started over REST through the chart (two api-server replicas, an
// operator leader and follower) on the real kube-apiserver, etcd and Postgres, climbing the
// steps of NIGHTJAR_SCALE_STEPS while an agent drives a sample; per step, same run: time to
// all live, start latency, requests per session, Postgres transactions, each component's CPU
// and memory, etcd's size, driving latency, sessions lost; then the faults: a simulated node
// stopped, the operator's leader killed, an api-server replica killed.
// What each figure is and how it is attributed: docs/scale.md
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { HOLLOW_TITLE } from '../devcluster/fleet/hollow-pod.ts'
import { apiMetrics, auditedRequests, installOnFleet, type FleetInstall } from '../test/node/fleet.ts'
import { clusterCommand, clusterUp } from '../test/node/real-cluster.ts'
import { status as clusterStatus } from '../devcluster/lifecycle.ts'
import { percentile, progress } from './harness.ts'
import { podProcesses } from '../test/helpers/sandbox-probe.ts'

const SIMULATED = Number(process.env.NIGHTJAR_SCALE_NODES ?? 100)
const STEPS = (process.env.NIGHTJAR_SCALE_STEPS ?? '100,1000,10000').split(',').map(Number)
/** starts in flight at once */
const AGENTS = 32
/** sessions an agent drives throughout (navigate + perceive each, every DRIVE_EVERY_MS) */
const DRIVEN = 20
const DRIVE_EVERY_MS = 3000
/** a step that takes longer than this to be all live stops the climb */
const STEP_BUDGET_MS = 45 * 60_000
const TICK = 100
/** the most live sessions the bench runs with the chart's operator memory limit (512Mi) */
const OPERATOR_DEFAULT_LIMIT_MAX_LIVE = 5000
/** the limit it sets past that */
const OPERATOR_LARGE_LIMIT = '2Gi'

type Row = Record<string, string | number>

/** the machine's processes of each component, found by their command lines */
function components(): Record<string, number[]> {
  const found: Record<string, number[]> = { operator: [], 'api-server': [], 'kube-apiserver': [], etcd: [], postgres: [], 'fleet (supervisor)': [] }
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    let cmd: string
    try { cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ') } catch { continue }
    const pid = Number(d)
    if (cmd.startsWith('node bin/nightjar.mjs operator')) found.operator.push(pid)
    else if (cmd.startsWith('node bin/nightjar.mjs start')) found['api-server'].push(pid)
    else if (/(^|\/)kube-apiserver /.test(cmd)) found['kube-apiserver'].push(pid)
    else if (/(^|\/)etcd /.test(cmd)) found.etcd.push(pid)
    else if (/(^|\/)postgres( |$)/.test(cmd) && cmd.includes('nightjar-cluster')) found.postgres.push(pid)
    else if (cmd.includes('scripts/cluster.ts serve')) found['fleet (supervisor)'].push(pid)
  }
  // Postgres's backends are children of its postmaster: all of them count
  const master = found.postgres[0]
  if (master) for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try { if (Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === master) found.postgres.push(Number(d)) } catch { /* gone */ }
  }
  return found
}

function cpuOf(pids: number[]): number {
  let s = 0
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
      s += (Number(f[11]) + Number(f[12])) / TICK
    } catch { /* gone */ }
  }
  return s
}

function rssOf(pids: number[]): number {
  let kb = 0
  for (const pid of pids) {
    try { kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) } catch { /* gone */ }
  }
  return kb / 1024
}

function memAvailableMiB(): number {
  return Number(/MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024
}

function etcdSizeMiB(kubeconfig: string): number {
  return Number(/^etcd_db_total_size_in_bytes\{[^}]*\} (\S+)/m.exec(apiMetrics(kubeconfig))?.[1] ?? 0) / 2 ** 20
}

export async function benchScale(): Promise<{ steps: Row[]; components: Row[]; requests: Row[]; faults: Row[]; stopped: string }> {
  progress(`scale: up --nodes 1 --simulated-nodes ${SIMULATED}`)
  // a cluster left up keeps its history: etcd's size (it is not defragmented) and the
  // kube-apiserver's memory start where the last run left them, which the step-100 row shows
  if (clusterStatus()) progress('scale: reusing a running cluster: its etcd size and memory carry the last run\'s history (for a clean table: npm run cluster -- down, then the bench)')
  const cluster = clusterUp(1, SIMULATED)
  const teardowns: (() => unknown)[] = []
  const t = { teardown: (fn: () => unknown) => teardowns.push(fn) }
  try {
    // sessions not driven must outlive the climb (10,000 takes longer than the default 15 min idle timeout)
    // Node sizes its heap at about half the container's memory limit: the chart's 512Mi gives the
    // operator leader ~259 MB, and 1Gi's ~512 MB ran out at 10,000 (docs/scale.md); past
    // OPERATOR_DEFAULT_LIMIT_MAX_LIVE the bench installs what the capacity model says to set,
    // and prints it
    const operatorMemoryLimit = STEPS.at(-1)! > OPERATOR_DEFAULT_LIMIT_MAX_LIVE ? OPERATOR_LARGE_LIMIT : undefined
    if (operatorMemoryLimit) progress(`scale: the operator's memory limit set to ${operatorMemoryLimit} (over ${OPERATOR_DEFAULT_LIMIT_MAX_LIVE} live, docs/scale.md)`)
    const api = await installOnFleet(t, cluster, { warmPoolSize: 50, maxLive: STEPS.at(-1)! + 500, apiServerReplicas: 2, operatorReplicas: 2, idleTimeoutSeconds: 4 * 3600, operatorMemoryLimit })
    const db = new pg.Client({ connectionString: cluster.databaseUrl })
    await db.connect()
    teardowns.push(() => db.end())
    const xacts = async () => Number((await db.query('SELECT sum(xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database')).rows[0].n)

    const live: string[] = []
    const steps: Row[] = []
    const comps: Row[] = []
    const requestRows: Row[] = []
    let stopped = ''
    for (const target of STEPS) {
      const add = target - live.length
      progress(`scale: step ${target}: starting ${add} sessions (${AGENTS} at once)`)
      const pids = components()
      // what the driving sample costs alone, per call, same step: taken out of the step's
      // figures, which are per session started (driving goes on for as long as the step takes,
      // so left in, it would make a longer step look dearer per start). Per call, not per
      // second: a busy step drives fewer calls a second than the sample did alone, and a
      // per-second price took more out of a 24-minute step than its driving cost (a negative
      // Postgres figure at 10,000)
      const alone = await drivingAlone(api, live.slice(0, DRIVEN), pids, xacts)
      const cpu0 = cpuByComponent(pids)
      const peak: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, rssOf(pids[k])]))
      const sampler = setInterval(() => { for (const k of Object.keys(pids)) peak[k] = Math.max(peak[k], rssOf(pids[k])) }, 2000)
      const audit0 = auditedRequests(Number.MAX_SAFE_INTEGER).end
      const x0 = await xacts()
      const drive = driveSample(api, live.slice(0, DRIVEN))
      const latencies: number[] = []
      const refused: string[] = []
      let retried = 0
      let asked = 0
      const started = Date.now()
      let lastSaid = started
      await Promise.all(Array.from({ length: AGENTS }, async () => {
        while (asked < add && Date.now() - started < STEP_BUDGET_MS && refused.length < 50) {
          asked++
          const t0 = performance.now()
          type Answer = Awaited<ReturnType<FleetInstall['rest']>>
          const start = (): Promise<Answer> => api.rest('POST', '/v1/sessions', {}).catch((e) => ({ status: 0, body: { error: { message: String(e) } } }))
          let r = await start()
          // a busy service answers 429 with Retry-After: a client waits and asks again
          while (r.status === 429 && Date.now() - started < STEP_BUDGET_MS) {
            retried++
            await new Promise((res) => setTimeout(res, 1000 * (r.retryAfter ?? 1)))
            r = await start()
          }
          // a start slower than the synchronous wait answers 202 pending: a client follows it
          for (let i = 0; r.status === 202 && r.body?.status === 'pending' && r.body?.id && i < 10; i++) {
            const view = await api.rest('GET', `/v1/sessions/${r.body.id}?waitSeconds=30`).catch(() => undefined)
            if (view?.status === 200) r = { ...r, body: view.body }
          }
          if ((r.status === 201 || r.status === 202) && r.body?.status === 'live') {
            live.push(r.body.id)
            latencies.push(performance.now() - t0)
          } else refused.push(`${r.status} ${r.body?.error?.message ?? r.body?.status ?? ''}`)
          if (Date.now() - lastSaid > 15_000) {
            lastSaid = Date.now()
            progress(`scale: step ${target}: ${live.length} live, ${retried} retried after 429, ${refused.length} refused, MemAvailable ${memAvailableMiB().toFixed(0)} MiB`)
          }
        }
      }))
      const seconds = (Date.now() - started) / 1000
      const { latencies: driven, calls } = await drive.stop()
      clearInterval(sampler)
      const { byComponent } = auditedRequests(audit0)
      const n = Math.max(1, latencies.length)
      const sum = (m?: Map<string, number>) => [...(m ?? new Map<string, number>()).values()].reduce((a, b) => a + b, 0)
      const x1 = await xacts()
      const lost = await lostSessions(api, live)
      steps.push({
        'live at once': live.length, 'added': latencies.length, 'all live after': `${seconds.toFixed(1)} s`,
        'start p50': `${percentile(latencies, 50).toFixed(0)} ms`, 'start p99': `${percentile(latencies, 99).toFixed(0)} ms`,
        'kube req/session: operator': (sum(byComponent.get('operator')) / n).toFixed(1), 'api-server': (sum(byComponent.get('api-server')) / n).toFixed(1),
        'Postgres xacts/start': ((x1 - x0 - alone.xactsPerCall * calls) / n).toFixed(1),
        'etcd size': `${etcdSizeMiB(cluster.kubeconfig).toFixed(0)} MiB`,
        'driving p50': driven.length ? `${percentile(driven, 50).toFixed(0)} ms` : '—', 'driving p99': driven.length ? `${percentile(driven, 99).toFixed(0)} ms` : '—',
        'retried (429)': retried, 'refused': refused.length, 'lost': lost.length,
      })
      const after = components()
      for (const k of Object.keys(pids)) {
        const cpu = cpuOf(pids[k]) - cpu0[k] - (alone.cpuPerCall[k] ?? 0) * calls
        // a process that exited in the step took its CPU time with it: say so rather than print a wrong figure
        const gone = pids[k].filter((pid) => !after[k].includes(pid)).length
        comps.push({
          'live at once': live.length, component: `${k} (${pids[k].length})`,
          'CPU s per 1,000 started': gone ? `${gone} process(es) restarted: not measured` : (cpu / Math.max(1, latencies.length) * 1000).toFixed(1),
          'driving alone, CPU s per minute': ((alone.cpuPerCall[k] ?? 0) * alone.callsPerSecond * 60).toFixed(1),
          'peak RSS': `${peak[k].toFixed(0)} MiB`,
        })
      }
      for (const [component, kinds] of byComponent) {
        for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 8)) requestRows.push({ 'live at once': live.length, component, request: kind, 'per session': (count / n).toFixed(2) })
      }
      // each step's figures as they are known: a failure later in the run does not lose them
      progress(`scale: step ${target}: ${JSON.stringify(steps.at(-1))} ${JSON.stringify(comps.slice(-Object.keys(pids).length))}`)
      if (live.length < target) {
        stopped = `step ${target} not reached: ${live.length} live after ${seconds.toFixed(0)} s; ${retried} retried after 429, ${refused.length} refused (first: ${refused[0] ?? 'none'}); MemAvailable ${memAvailableMiB().toFixed(0)} MiB; peaks ${Object.entries(peak).map(([k, v]) => `${k} ${v.toFixed(0)} MiB`).join(', ')}`
        progress(`scale: ${stopped}`)
        break
      }
    }

    // a simulated node lost at the largest step: its sessions fail with NodeLost, no other
    const faults: Row[] = []
    const nodeOf = await sessionNodes(api)
    const byNode = new Map<string, string[]>()
    for (const id of live) byNode.set(nodeOf.get(id) ?? '?', [...(byNode.get(nodeOf.get(id) ?? '?') ?? []), id])
    const [victim, its] = [...byNode].filter(([n]) => n.startsWith('nightjar-sim-')).sort((a, b) => b[1].length - a[1].length)[0] ?? []
    if (victim) {
      progress(`scale: node-stop ${victim} (${its.length} sessions)`)
      const drive = driveSample(api, live.filter((id) => !its.includes(id)).slice(0, DRIVEN))
      await clusterCommand('node-stop', victim)
      const t0 = Date.now()
      let failedAfter = NaN
      while (Date.now() - t0 < 120_000) {
        const states = await Promise.all(its.map(async (id) => (await api.rest('GET', `/v1/sessions/${id}`)).body))
        if (states.every((s) => s?.status === 'failed' && s.failureReason === 'NodeLost')) { failedAfter = (Date.now() - t0) / 1000; break }
        await new Promise((r) => setTimeout(r, 1000))
      }
      const { latencies: driven } = await drive.stop()
      const others = live.filter((id) => !its.includes(id))
      const lost = await lostSessions(api, others)
      faults.push({ fault: `node-stop ${victim}`, sessions: its.length, 'all NodeLost after': Number.isNaN(failedAfter) ? 'not within 120 s' : `${failedAfter.toFixed(1)} s`, 'others live': `${others.length - lost.length}/${others.length}`, 'driving p99 meanwhile': driven.length ? `${percentile(driven, 99).toFixed(0)} ms` : '—' })
      await clusterCommand('node-start', victim)
      for (const id of its) live.splice(live.indexOf(id), 1)
    }
    faults.push(await killOperatorLeader(api, live))
    faults.push(await killApiServerReplica(api, live))
    await keepLogs(api)
    return { steps, components: comps, requests: requestRows, faults, stopped: stopped || `every step reached (${STEPS.join(', ')})` }
  } finally {
    for (const fn of teardowns.reverse()) await fn()
    clusterUp(1, 0)
  }
}

/** the chart's pods' logs (and their restarted containers' previous ones), kept past the uninstall for reading after the run */
async function keepLogs(api: FleetInstall): Promise<void> {
  const dir = process.env.NIGHTJAR_SCALE_LOGS ?? join(tmpdir(), 'nightjar-scale-logs')
  mkdirSync(dir, { recursive: true })
  const pods = ((await api.kubectlJson(['get', 'pods', '-l', 'app.kubernetes.io/component in (operator,api-server)'])).items as any[])
  for (const { metadata: { name: pod, namespace } } of pods) {
    for (const previous of [false, true]) {
      const r = await api.sh(`kubectl -n ${namespace} logs ${pod}${previous ? ' --previous' : ''}`).catch(() => undefined)
      if (r?.status === 0 && r.stdout) writeFileSync(join(dir, `${pod}${previous ? '.previous' : ''}.log`), r.stdout)
    }
  }
  progress(`scale: the chart's logs are in ${dir}`)
}

/** SIGKILLs the one process of a chart pod (its container restarts, as after a crash) */
async function killPod(api: FleetInstall, podName: string): Promise<void> {
  const pod = await api.kubectlJson(['get', 'pod', podName])
  const pids = podProcesses(pod.metadata.uid).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('node\0bin/nightjar.mjs') } catch { return false }
  })
  if (!pids.length) throw new Error(`scale: no process of ${podName} found on this machine`)
  for (const pid of pids) process.kill(pid, 'SIGKILL')
}

const operatorLease = async (api: FleetInstall): Promise<{ holder: string; renewed: number }> => {
  const lease = ((await api.kubectlJson(['get', 'leases'])).items as any[]).find((l) => l.metadata.name.includes('operator'))
  return { holder: lease?.spec?.holderIdentity ?? '', renewed: Date.parse(lease?.spec?.renewTime ?? '') || 0 }
}

/**
 * The operator's leader killed with every session live: how long until a live process leads
 * again (its lease renewed after the kill: the follower, or the killed pod's restarted
 * container, which carries the same identity and may take its lease back first), the requests
 * the operators make from the kill until 30 s after the takeover (a re-list is a handful; a
 * request per session would be thousands), sessions lost, a start after it
 */
async function killOperatorLeader(api: FleetInstall, live: string[]): Promise<Row> {
  const victim = (await operatorLease(api)).holder
  progress(`scale: killing the operator leader ${victim} (${live.length} live)`)
  const drive = driveSample(api, live.slice(0, DRIVEN))
  const audit0 = auditedRequests(Number.MAX_SAFE_INTEGER).end
  await killPod(api, victim)
  const t0 = Date.now()
  // a renewal counts from a second after the kill: the last renewal before it may carry a time
  // just past t0 (the apiserver's clock and this process's are read at different moments)
  let lease = { holder: victim, renewed: 0 }
  while (lease.renewed <= t0 + 1000 && Date.now() - t0 < 120_000) {
    await new Promise((r) => setTimeout(r, 250))
    lease = await operatorLease(api).catch(() => lease)
  }
  const takeover = (Date.now() - t0) / 1000
  const holder = lease.renewed > t0 + 1000 ? lease.holder : ''
  await new Promise((r) => setTimeout(r, 30_000))
  const fresh = await api.rest('POST', '/v1/sessions', {})
  const startWorks = fresh.status === 201 && fresh.body?.status === 'live'
  if (fresh.body?.id) await api.rest('DELETE', `/v1/sessions/${fresh.body.id}`)
  const { latencies: driven } = await drive.stop()
  const kinds = auditedRequests(audit0).byComponent.get('operator') ?? new Map<string, number>()
  const total = [...kinds.values()].reduce((a, b) => a + b, 0)
  const lost = await lostSessions(api, live)
  return {
    fault: `operator leader ${victim} killed`, sessions: live.length,
    'all NodeLost after': '—', 'others live': `${live.length - lost.length}/${live.length}`,
    'driving p99 meanwhile': driven.length ? `${percentile(driven, 99).toFixed(0)} ms` : '—',
    'leading again after': !holder ? 'not within 120 s' : `${takeover.toFixed(1)} s (${holder === victim ? 'its restarted container' : `the follower ${holder}`})`,
    'operator requests, kill + 30 s': `${total} (${[...kinds].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => `${k} ${v}`).join(', ')})`,
    'a start after': startWorks ? 'live' : `${fresh.status}`,
  }
}

/**
 * One api-server replica killed while an agent drives and starts sessions through the Service:
 * a call refused or cut is retried (up to 5 times, 200 ms apart) as a client does; what
 * still fails after that, and sessions lost, must be 0
 */
async function killApiServerReplica(api: FleetInstall, live: string[]): Promise<Row> {
  const pods = ((await api.kubectlJson(['get', 'pods', '-l', 'app.kubernetes.io/component=api-server'])).items as any[]).map((p) => p.metadata.name as string)
  const victim = pods[0]
  progress(`scale: killing api-server replica ${victim} (${pods.length} replicas, ${live.length} live)`)
  let calls = 0
  let retried = 0
  const failed: string[] = []
  const latencies: number[] = []
  const retrying = async (method: string, path: string, body?: unknown, ok = (r: { status: number; body: any }) => r.status < 500) => {
    calls++
    const t0 = performance.now()
    for (let attempt = 0; ; attempt++) {
      const r = await api.rest(method, path, body).catch((e: Error) => ({ status: 0, body: { error: { message: e.message } } }))
      if (ok(r)) { latencies.push(performance.now() - t0); return r }
      if (attempt === 5) { failed.push(`${method} ${path}: ${r.status} ${r.body?.error?.message ?? ''}`); return r }
      retried++
      await new Promise((res) => setTimeout(res, 200))
    }
  }
  let running = true
  const sample = live.slice(0, DRIVEN)
  const driver = (async () => {
    while (running) {
      for (const id of sample) {
        await retrying('POST', `/v1/sessions/${id}/navigate`, { url: 'https://example.com/' }, (r) => r.body?.title === HOLLOW_TITLE)
        await retrying('POST', `/v1/sessions/${id}/perceive`, {}, (r) => r.status === 200)
      }
    }
  })()
  const starter = (async () => {
    while (running) {
      const r = await retrying('POST', '/v1/sessions', {}, (x) => x.status === 201 && x.body?.status === 'live')
      if (r.body?.id) await retrying('DELETE', `/v1/sessions/${r.body.id}`, undefined, (x) => x.status === 200 || x.status === 204)
    }
  })()
  await new Promise((r) => setTimeout(r, 5000))
  await killPod(api, victim)
  await new Promise((r) => setTimeout(r, 30_000))
  running = false
  await Promise.all([driver, starter])
  const lost = await lostSessions(api, live)
  return {
    fault: `api-server replica ${victim} killed`, sessions: live.length,
    'all NodeLost after': '—', 'others live': `${live.length - lost.length}/${live.length}`,
    'driving p99 meanwhile': latencies.length ? `${percentile(latencies, 99).toFixed(0)} ms` : '—',
    'calls failed after retries': `${failed.length} of ${calls} (${retried} retries)${failed.length ? `: ${failed.slice(0, 3).join('; ')}` : ''}`,
  }
}

/** each component's CPU seconds so far */
const cpuByComponent = (pids: Record<string, number[]>): Record<string, number> =>
  Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpuOf(p)]))

/** how long the driving sample runs alone before a step's starts, to price it */
const DRIVING_ALONE_MS = 20_000

/** the driving sample's cost alone, per call: each component's CPU and Postgres's transactions (zero with nothing to drive) */
async function drivingAlone(api: FleetInstall, ids: string[], pids: Record<string, number[]>, xacts: () => Promise<number>): Promise<{ cpuPerCall: Record<string, number>; xactsPerCall: number; callsPerSecond: number }> {
  if (!ids.length) return { cpuPerCall: {}, xactsPerCall: 0, callsPerSecond: 0 }
  progress(`scale: the driving sample alone for ${DRIVING_ALONE_MS / 1000} s (its cost is taken out of the step's per-start figures)`)
  const cpu0 = cpuByComponent(pids)
  const x0 = await xacts()
  const t0 = performance.now()
  const drive = driveSample(api, ids)
  await new Promise((r) => setTimeout(r, DRIVING_ALONE_MS))
  const { calls } = await drive.stop()
  const seconds = (performance.now() - t0) / 1000
  const x1 = await xacts()
  const per = Math.max(1, calls)
  return {
    cpuPerCall: Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, Math.max(0, cpuOf(p) - cpu0[k]) / per])),
    xactsPerCall: Math.max(0, x1 - x0) / per,
    callsPerSecond: calls / seconds,
  }
}

/** an agent driving sessions round after round (navigate + perceive each) until stopped: the latencies of its calls that succeeded, and how many it made */
function driveSample(api: FleetInstall, ids: string[]): { stop(): Promise<{ latencies: number[]; calls: number }> } {
  const latencies: number[] = []
  let calls = 0
  let running = true
  const loop = (async () => {
    while (running && ids.length) {
      for (const id of ids) {
        const t0 = performance.now()
        calls += 2
        const nav = await api.rest('POST', `/v1/sessions/${id}/navigate`, { url: 'https://example.com/' }).catch(() => undefined)
        if (nav?.body?.title === HOLLOW_TITLE) latencies.push(performance.now() - t0)
        const t1 = performance.now()
        const seen = await api.rest('POST', `/v1/sessions/${id}/perceive`, {}).catch(() => undefined)
        if (seen?.status === 200) latencies.push(performance.now() - t1)
      }
      await new Promise((r) => setTimeout(r, DRIVE_EVERY_MS))
    }
  })()
  return { async stop() { running = false; await loop; return { latencies, calls } } }
}

/** the sessions of `ids` that are not live */
async function lostSessions(api: FleetInstall, ids: string[]): Promise<string[]> {
  const lost: string[] = []
  for (let i = 0; i < ids.length; i += 50) {
    const states = await Promise.all(ids.slice(i, i + 50).map(async (id) => ({ id, s: (await api.rest('GET', `/v1/sessions/${id}`)).body })))
    for (const { id, s } of states) if (s?.status !== 'live') lost.push(id)
  }
  return lost
}

/** session id → the node its pod runs on */
async function sessionNodes(api: FleetInstall): Promise<Map<string, string>> {
  const podNodes = new Map(((await api.kubectlJson(['get', 'pods', '-l', 'app.kubernetes.io/component=browser-pod'])).items as any[]).map((p) => [p.metadata.name as string, p.spec.nodeName as string]))
  return new Map(((await api.kubectlJson(['get', 'browsersessions'])).items as any[]).map((b) => [b.metadata.annotations?.['nightjar.dev/id'] as string, podNodes.get(b.status?.podName) ?? '?']))
}
