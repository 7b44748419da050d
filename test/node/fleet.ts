// The chart on the simulated fleet, for its test and the scale bench (not a test file): the
// README's install with browser pods sent to the simulated nodes (the api-server and the
// operator stay on the first real node, as on a cluster with a system node pool), the
// session caps raised to the fleet's size, an organisation bootstrapped; and what the
// kube-apiserver served, by verb and resource, from its own /metrics.
import { spawnSync } from 'node:child_process'
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SIMULATED_LABEL, SIMULATED_TAINT } from '../../devcluster/fleet/fleet.ts'
import { clusterShell, deleteNamespace, freshDatabase, readmeInstall, restWithKey, runReadmeInstall } from './install.ts'
import { KUBECTL, ROOT, type RealCluster } from './real-cluster.ts'

export const RELEASE = 'nightjar'
export const CHART_NS = 'nightjar'

export interface FleetInstall {
  apiUrl: string
  apiKey: string
  /** one REST call with the org's key; a start waits until live (Prefer: wait=90) */
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; retryAfter?: number }>
  kubectlJson(args: string[]): Promise<any>
  sh(cmd: string): Promise<{ status: number; stdout: string; stderr: string }>
}

interface Teardown { teardown(fn: () => unknown): void }

/** installs the chart as the README says, browser pods on the simulated nodes; removed at teardown */
export async function installOnFleet(t: Teardown, cluster: RealCluster, opts: { warmPoolSize: number; maxLive: number; apiServerReplicas?: number; operatorReplicas?: number; idleTimeoutSeconds?: number; operatorMemoryLimit?: string }): Promise<FleetInstall> {
  const { sh, kubectlJson } = clusterShell(cluster.kubeconfig, CHART_NS)
  deleteNamespace(cluster.kubeconfig, CHART_NS)
  const dbUrl = await freshDatabase(cluster.databaseUrl, t)
  const dir = mkdtempSync(join(tmpdir(), 'nightjar-fleet-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const valuesFile = join(dir, 'values.json')
  const onFirstNode = { nodeSelector: { 'kubernetes.io/hostname': cluster.nodes[0] } }
  const caps = [{ name: 'NIGHTJAR_MAX_LIVE_SESSIONS', value: String(opts.maxLive) }, { name: 'NIGHTJAR_ORG_MAX_LIVE_SESSIONS', value: String(opts.maxLive) }]
  if (opts.idleTimeoutSeconds) caps.push({ name: 'NIGHTJAR_SESSION_IDLE_TIMEOUT_SECONDS', value: String(opts.idleTimeoutSeconds) })
  writeFileSync(valuesFile, JSON.stringify({
    apiServer: { ...onFirstNode, replicas: opts.apiServerReplicas ?? 1, extraEnv: caps },
    operator: { ...onFirstNode, replicas: opts.operatorReplicas ?? 1, ...(opts.operatorMemoryLimit ? { resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { memory: opts.operatorMemoryLimit } } } : {}) },
    browserPods: {
      warmPoolSize: opts.warmPoolSize,
      nodeSelector: { [SIMULATED_LABEL]: 'true' },
      tolerations: [{ key: SIMULATED_TAINT.key, operator: 'Exists', effect: SIMULATED_TAINT.effect }],
    },
  }))
  t.teardown(async () => {
    await sh(`helm uninstall ${RELEASE} -n ${CHART_NS} --wait=false`)
    deleteNamespace(cluster.kubeconfig, CHART_NS)
  })
  const bootstrapOut = await runReadmeInstall(readmeInstall(`${ROOT}README.md`, dbUrl, valuesFile), {
    sh, kubeconfig: cluster.kubeconfig, namespace: CHART_NS, release: RELEASE,
    check: (cmd, r) => { if (r.status !== 0) throw new Error(`README: ${cmd.split(' ').slice(0, 4).join(' ')} … failed: ${r.stderr.replaceAll(dbUrl, '<DATABASE_URL>').slice(0, 500)}`) },
  })
  const { apiKey } = JSON.parse(bootstrapOut) as { apiKey: string }
  const svc = await kubectlJson(['get', 'service', `${RELEASE}-api-server`])
  const apiUrl = `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`
  const rest = restWithKey(apiUrl, apiKey)
  return { apiUrl, apiKey, rest, kubectlJson, sh }
}

/** the kube-apiserver's /metrics, as text */
export function apiMetrics(kubeconfig: string): string {
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'get', '--raw', '/metrics'], { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 60_000 })
  if (r.status !== 0) throw new Error(`kube-apiserver /metrics: ${r.stderr.trim()}`)
  return r.stdout
}

/** requests the kube-apiserver has served since it started, by "VERB resource[/subresource]" */
export function apiRequests(kubeconfig: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const line of apiMetrics(kubeconfig).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)))
  }
  return counts
}

/**
 * What the fleet (as the kubelets it plays), the scheduler, the node lifecycle and disruption
 * controllers ask of the API server for each pod and node: a real cluster's kubelets and scheduler make
 * the same, so they are not Nightjar's. Everything else in a window where only Nightjar
 * works is the operator's or the api-server's — with one of the kubelet's kept in: its final
 * DELETE of each ended pod (the same verb and resource as the operator's delete).
 */
export const CLUSTER_KINDS = new Set(['PATCH pods/status', 'GET secrets', 'POST pods/binding', 'PATCH nodes/status', 'PATCH leases', 'GET leases', 'PUT leases', 'GET nodes', 'LIST nodes', 'PATCH nodes', 'PUT nodes/status', 'PUT pods/status', 'WATCH nodes', 'LIST leases', 'PUT poddisruptionbudgets/status'])

/** the difference of two apiRequests readings, Nightjar's kinds only */
export function nightjarRequests(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>()
  for (const [k, v] of after) {
    const x = v - (before.get(k) ?? 0)
    if (x > 0 && !CLUSTER_KINDS.has(k)) d.set(k, x)
  }
  return d
}

/** where the development cluster's kube-apiserver writes its audit log (devcluster/supervisor.ts) */
export const AUDIT_LOG = '/run/nightjar-cluster/audit/audit.log'

/**
 * Requests in the audit log after byte `from`, by who made them ("operator", "api-server" for
 * the chart's service accounts) and "verb resource[/subresource]" (the audit's verb: a get is a
 * get, where apiserver_request_total 1.20 counts a custom resource's get as a LIST). Answers
 * the counts and where the log ended (a rotated log restarts from 0).
 */
export function auditedRequests(from: number): { byComponent: Map<string, Map<string, number>>; end: number } {
  const byComponent = new Map<string, Map<string, number>>()
  let fd: number
  try { fd = openSync(AUDIT_LOG, 'r') } catch { return { byComponent, end: 0 } }
  try {
    const bytes = fstatSync(fd).size
    // read in chunks from the offset (a scale run's log outgrows what one string may hold);
    // a file shorter than the offset was rotated: then from its start
    let pos = from <= bytes ? from : 0
    let rest = ''
    const chunk = Buffer.alloc(16 << 20)
    while (pos < bytes) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, bytes - pos), pos)
      if (n <= 0) break
      pos += n
      const lines = (rest + chunk.subarray(0, n).toString('utf8')).split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) countAudited(line, byComponent)
    }
    countAudited(rest, byComponent)
    return { byComponent, end: bytes }
  } finally {
    closeSync(fd)
  }
}

/** one audit line: Nightjar's request, counted by component and kind */
function countAudited(line: string, byComponent: Map<string, Map<string, number>>): void {
  if (!line.trim()) return
  let e: { verb: string; user?: { username?: string }; objectRef?: { resource?: string; subresource?: string } }
  try { e = JSON.parse(line) } catch { return }
  const m = /^system:serviceaccount:[^:]+:[^:]*?(operator|api-server)$/.exec(e.user?.username ?? '')
  if (!m || !e.objectRef?.resource) return
  const kinds = byComponent.get(m[1]) ?? new Map<string, number>()
  const kind = `${e.verb} ${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}`
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  byComponent.set(m[1], kinds)
}
