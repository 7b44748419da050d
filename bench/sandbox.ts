// npm run bench -- sandbox: what Chromium's sandbox and gVisor cost, side by side in one run,
// embedded (sandbox none and chromium, alternating: cold start → live, navigate + perceive,
// a live session's PSS) and on the real node (off, seccomp profile, gVisor: created → Ready,
// navigate + perceive, working set). Details: bench/README.md, "What Chromium's sandbox costs"
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { browserPodManifest, CHROMIUM_SECCOMP_PROFILE, tokenSecretManifest, type BrowserPodOptions } from '../operator/kube/pod-spec.ts'
import { clusterUp, kubectlOn, ROOT } from '../test/node/real-cluster.ts'
import { waitFor } from '../test/helpers/wait.ts'
import { descendants } from '../test/helpers/process.ts'
import { percentile, progress, startBench, type Bench } from './harness.ts'
import { PRODUCT_VERSION } from '../contracts/version.ts'

type Row = Record<string, string | number>
const EMBEDDED_ROUNDS = 8
const NODE_ROUNDS = 5
const DRIVES_PER_SESSION = 3
const IMAGE = `localhost/nightjar-browser-pod:${PRODUCT_VERSION}`
/** a page with some text, links and a form: what perceive reads */
const PAGE = 'data:text/html,' + encodeURIComponent(
  '<title>Sandbox bench</title><h1>Orders</h1><nav>' + Array.from({ length: 20 }, (_, i) => `<a href="#o${i}">Order ${i}</a>`).join(' ') +
  '</nav><form><label>Search <input name=q></label><button>Go</button></form><table>' +
  Array.from({ length: 50 }, (_, i) => `<tr><td>${i}</td><td>item ${i}</td><td><button>Open ${i}</button></td></tr>`).join('') + '</table>',
)

const p50 = (v: number[]) => percentile(v, 50)
const msText = (v: number) => `${v.toFixed(0)} ms`
const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`
const ratio = (v: number, base: number) => `${(v / base).toFixed(2)}x`

export async function benchSandbox(): Promise<{ embedded: Row[]; node: Row[] }> {
  const embedded = await benchEmbedded()
  const node = await benchNode()
  return { embedded, node }
}

interface Figures { start: number[]; drive: number[]; memory: number[]; ready?: number[] }
const empty = (): Figures => ({ start: [], drive: [], memory: [], ready: [] })

// --- embedded --------------------------------------------------------------------------

async function benchEmbedded(): Promise<Row[]> {
  const modes = ['none', 'chromium'] as const
  const benches: Record<string, Bench> = {}
  const figures: Record<string, Figures> = { none: empty(), chromium: empty() }
  try {
    // no pool at all (size and adaptive maximum 0): every start is a cold Chromium launch
    for (const m of modes) benches[m] = await startBench({ warmPool: 0, env: { NIGHTJAR_BROWSER_SANDBOX: m, NIGHTJAR_WARM_POOL_MAX: '0' } })
    for (let i = 0; i < EMBEDDED_ROUNDS; i++) {
      for (const m of i % 2 ? [...modes].reverse() : modes) {
        progress(`embedded ${m} ${i + 1}/${EMBEDDED_ROUNDS}`)
        await embeddedRound(benches[m], m, figures[m])
      }
    }
  } finally {
    for (const b of Object.values(benches)) await b.stop()
  }
  return rows(figures.none, figures.chromium, undefined, false)
}

async function embeddedRound(b: Bench, mode: string, f: Figures): Promise<void> {
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(b.url + path, { method, headers: { authorization: `Bearer ${b.apiKey}`, prefer: 'wait=60', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const json = (await r.json()) as any
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json).slice(0, 200)}`)
    return json
  }
  const t0 = performance.now()
  const s = await api('POST', '/v1/sessions', {})
  f.start.push(performance.now() - t0)
  if (s.sandbox !== mode) throw new Error(`the session runs in ${s.sandbox}, not ${mode}`)
  for (let d = 0; d < DRIVES_PER_SESSION; d++) {
    const t1 = performance.now()
    await api('POST', `/v1/sessions/${s.id}/navigate`, { url: PAGE, changes: false })
    await api('POST', `/v1/sessions/${s.id}/perceive`, {})
    f.drive.push(performance.now() - t1)
  }
  const pod = b.plane.pods.processes().find((p) => p.sessionId === s.id)
  if (pod?.pid) f.memory.push(descendants([pod.pid]).reduce((sum, pid) => sum + pss(pid), 0))
  await api('DELETE', `/v1/sessions/${s.id}`)
}

/** proportional set size: shared pages split between the processes sharing them */
function pss(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024
  } catch {
    return 0 // gone meanwhile
  }
}

// --- real node -------------------------------------------------------------------------

interface NodeMode { name: string; opts: Partial<BrowserPodOptions> }

async function benchNode(): Promise<Row[]> {
  const cluster = clusterUp()
  const kubectl = kubectlOn(cluster.kubeconfig)
  // what the chart puts on nodes: the seccomp profile (its DaemonSet) and the RuntimeClass
  const profile = join('/var/lib/kubelet/seccomp', (CHROMIUM_SECCOMP_PROFILE as { localhostProfile: string }).localhostProfile)
  if (!existsSync(profile)) {
    mkdirSync(dirname(profile), { recursive: true })
    copyFileSync(join(ROOT, 'charts/nightjar/files/chromium-sandbox.json'), profile)
  }
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc' }))
  const ns = `bench-sandbox-${randomBytes(3).toString('hex')}`
  kubectl(['create', 'namespace', ns])
  const modes: NodeMode[] = [
    { name: 'none', opts: { sandbox: 'none' } },
    { name: 'chromium', opts: { sandbox: 'chromium' } },
    { name: 'chromium+gvisor', opts: { sandbox: 'chromium', runtimeClassName: 'gvisor' } },
  ]
  const figures: Record<string, Figures> = Object.fromEntries(modes.map((m) => [m.name, empty()]))
  const failures: Record<string, string> = {}
  try {
    for (let i = 0; i < NODE_ROUNDS; i++) {
      for (const m of i % 2 ? [...modes].reverse() : modes) {
        if (failures[m.name]) continue
        progress(`real node ${m.name} ${i + 1}/${NODE_ROUNDS}`)
        try {
          await nodeRound(kubectl, ns, `${m.name.replace('+', '-')}-${i}`, m, figures[m.name])
        } catch (err) {
          failures[m.name] = (err as Error).message.split('\n')[0].slice(0, 200)
          progress(`${m.name} failed: ${failures[m.name]}`)
        }
      }
    }
  } finally {
    kubectl(['delete', 'namespace', ns, '--wait=false'])
  }
  const out = rows(figures.none, figures.chromium, figures['chromium+gvisor'], true)
  for (const [mode, why] of Object.entries(failures)) out.push({ figure: `${mode}: did not run`, none: '', chromium: why, 'chromium+gvisor': '', 'sandbox cost': '', 'gvisor vs runc': '' })
  return out
}

async function nodeRound(kubectl: ReturnType<typeof kubectlOn>, ns: string, name: string, mode: NodeMode, f: Figures): Promise<void> {
  const token = randomBytes(24).toString('base64url')
  const opts: BrowserPodOptions = { image: IMAGE, imagePullPolicy: 'Never', resources: { requests: { cpu: '100m', memory: '384Mi' }, limits: { memory: '2Gi' } }, ...mode.opts }
  kubectl(['apply', '-f', '-'], JSON.stringify(tokenSecretManifest({ name: `${name}-token`, namespace: ns, podName: name, token })))
  const t0 = performance.now()
  kubectl(['apply', '-f', '-'], JSON.stringify(browserPodManifest({ name, namespace: ns, browserKind: 'chromium', tokenSecretName: `${name}-token`, pool: true }, opts)))
  try {
    const pod = await waitFor(() => {
      const p = JSON.parse(kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json']))
      const term = p.status?.containerStatuses?.[0]?.state?.terminated
      if (term) throw new Error(`the pod ended: ${term.reason} ${term.message ?? ''}`)
      return p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ? p : undefined
    }, { timeoutMs: 180_000, intervalMs: 100, what: `${name} Ready` })
    f.ready!.push(performance.now() - t0)
    const podApi = async (path: string, body: unknown) => {
      const r = await fetch(`http://${pod.status.podIP}:8090${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const json = (await r.json()) as any
      if (!r.ok) throw new Error(`${path}: ${r.status} ${JSON.stringify(json).slice(0, 200)}`)
      return json
    }
    const configured = await podApi('/v1/configure', { sessionId: `nsess_bench${name}`, egress: { mode: 'platform', declaredHosts: [] } })
    f.start.push(performance.now() - t0)
    const want = mode.opts.runtimeClassName ? 'chromium+gvisor' : mode.opts.sandbox
    if (configured.sandbox !== want) throw new Error(`the pod reports ${configured.sandbox}, not ${want}`)
    for (let d = 0; d < DRIVES_PER_SESSION; d++) {
      const t1 = performance.now()
      await podApi('/v1/navigate', { url: PAGE })
      await podApi('/v1/perceive', {})
      f.drive.push(performance.now() - t1)
    }
    f.memory.push(podWorkingSet(pod.metadata.uid))
  } finally {
    kubectl(['-n', ns, 'delete', 'pod', name, '--wait=false'])
  }
}

/** the pod cgroup's working set as the kubelet counts it (usage minus inactive file), read on this host */
function podWorkingSet(uid: string): number {
  for (const qos of ['burstable', 'besteffort', '']) {
    const dir = join('/sys/fs/cgroup/memory/kubepods', qos, `pod${uid}`)
    if (!existsSync(dir)) continue
    const usage = Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8'))
    const inactive = Number(/^total_inactive_file (\d+)$/m.exec(readFileSync(join(dir, 'memory.stat'), 'utf8'))?.[1] ?? 0)
    return usage - inactive
  }
  return Number.NaN
}

// --- the table -------------------------------------------------------------------------

function rows(none: Figures, sandboxed: Figures, gvisor: Figures | undefined, node: boolean): Row[] {
  const cell = (v: number[], fmt: (x: number) => string) => (v.length ? `${fmt(p50(v))} (n=${v.length})` : '—')
  const line = (figure: string, pick: (f: Figures) => number[], fmt: (x: number) => string): Row => {
    const base = p50(pick(none))
    const r: Row = { figure, none: cell(pick(none), fmt), chromium: cell(pick(sandboxed), fmt) }
    if (gvisor) r['chromium+gvisor'] = cell(pick(gvisor), fmt)
    r['sandbox cost'] = pick(sandboxed).length && pick(none).length ? ratio(p50(pick(sandboxed)), base) : '—'
    if (gvisor) r['gvisor vs runc'] = pick(gvisor).length && pick(sandboxed).length ? ratio(p50(pick(gvisor)), p50(pick(sandboxed))) : '—'
    return r
  }
  const out: Row[] = []
  if (node) out.push(line('Pod created → Ready, p50', (f) => f.ready ?? [], msText))
  out.push(line(node ? 'created → configured (live), p50' : 'session start → live, no warm pool, p50', (f) => f.start, msText))
  out.push(line('navigate + perceive, p50', (f) => f.drive, msText))
  out.push(line(node ? 'memory: pod working set, live page' : 'memory: PSS of the session\'s processes, live page', (f) => f.memory, mib))
  return out
}
