// npm run bench -- node: the browser pod on the real node (`npm run cluster -- up`), each
// figure beside its baseline from the same run: created → Ready (beside the same program as a
// host process), memory and idle CPU per live session from the pod's cgroup, and how many idle
// sessions stay live at once with the chart's old and today's requests.
// The three measures in detail: bench/README.md#how-each-bench-measures; whole sessions
// through the installed chart, beside embedded: bench/node-sessions.ts.
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { browserPodManifest, tokenSecretManifest, type BrowserPodOptions } from '../operator/kube/pod-spec.ts'
import { clusterUp, kubectlOn, NODE_NAME, ROOT } from '../test/node/real-cluster.ts'
import { waitFor } from '../test/helpers/wait.ts'
import { PodUsers } from '../operator/embedded/pod-users.ts'

const podUsers = new PodUsers()
import { percentile, progress } from './harness.ts'
import { PRODUCT_VERSION } from '../contracts/version.ts'

const IMAGE = `localhost/nightjar-browser-pod:${PRODUCT_VERSION}`
const ROUNDS = 10
const OLD_REQUESTS = { cpu: '500m', memory: '1Gi' }
const NEW_REQUESTS = { cpu: '100m', memory: '384Mi' }

type Row = Record<string, string | number>

export async function benchNode(): Promise<{ start: Row[]; memory: Row[]; capacity: Row[] }> {
  const cluster = clusterUp()
  const kubectl = kubectlOn(cluster.kubeconfig)
  api = kubeGet(cluster.kubeconfig)
  const ns = `bench-node-${randomBytes(3).toString('hex')}`
  kubectl(['create', 'namespace', ns])
  const web = await serveHeavyPage(cluster.bridge)
  try {
    const start = await startTimes(kubectl, ns)
    const memory = await memoryPerSession(kubectl, ns, web.url)
    const capacity = await idleCapacity(kubectl, ns)
    return { start, memory, capacity }
  } finally {
    web.close()
    kubectl(['delete', 'namespace', ns, '--wait=false'])
  }
}

/** one browser pod with its token Secret, as the operator makes a warm-pool pod; `onCreated` runs once the API holds the Pod */
function createBrowserPod(kubectl: ReturnType<typeof kubectlOn>, ns: string, name: string, requests = NEW_REQUESTS, onCreated?: () => void): string {
  const token = randomBytes(24).toString('base64url')
  const opts: BrowserPodOptions = { image: IMAGE, imagePullPolicy: 'Never', resources: { requests, limits: { memory: '2Gi' } } }
  kubectl(['apply', '-f', '-'], JSON.stringify(tokenSecretManifest({ name: `${name}-token`, namespace: ns, podName: name, token })))
  kubectl(['apply', '-f', '-'], JSON.stringify(browserPodManifest({ name, namespace: ns, browserKind: 'chromium', tokenSecretName: `${name}-token`, pool: true }, opts)))
  onCreated?.()
  return token
}

/**
 * GET on the cluster's kube-apiserver with the kubeconfig's token. Polling a pod this way
 * costs next to nothing; a kubectl process per poll (as this bench first did) costs a few
 * hundred ms of CPU on a 2-core machine, taken from the very pod start it measures.
 */
function kubeGet(kubeconfig: string): (path: string) => Promise<any> {
  const text = readFileSync(kubeconfig, 'utf8')
  const field = (name: string) => {
    const v = new RegExp(`^\\s*${name}: (\\S+)$`, 'm').exec(text)?.[1]
    if (!v) throw new Error(`${kubeconfig}: no ${name}`)
    return v
  }
  const server = field('server')
  const ca = readFileSync(field('certificate-authority'))
  const token = field('token')
  return (path) => new Promise((resolve, reject) => {
    const req = httpsRequest(server + path, { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (body += d))
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`))))
    })
    req.on('error', reject)
    req.end()
  })
}

interface PodView { ready: boolean; running: boolean; unschedulable: boolean; ip?: string }
let api: ((path: string) => Promise<any>) | undefined
async function podView(ns: string, name: string): Promise<PodView> {
  const p = await api!(`/api/v1/namespaces/${ns}/pods/${name}`)
  const conds = (p.status?.conditions ?? []) as { type: string; status: string; reason?: string }[]
  return {
    ready: conds.some((c) => c.type === 'Ready' && c.status === 'True'),
    running: Boolean(p.status?.containerStatuses?.[0]?.state?.running),
    unschedulable: conds.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable'),
    ip: p.status?.podIP,
  }
}

async function startTimes(kubectl: ReturnType<typeof kubectlOn>, ns: string): Promise<Row[]> {
  const pod: number[] = []
  const toRunning: number[] = []
  const host: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    progress(`start ${i + 1}/${ROUNDS}`)
    // alternate, so a drift of the machine's load falls on both sides alike
    host.push(await hostProcessStart())
    const name = `start-${i}`
    // the clock starts when the API holds the Pod, as it does for the operator's own create
    // (an in-process client), not when a kubectl process starts
    let t0 = 0
    createBrowserPod(kubectl, ns, name, NEW_REQUESTS, () => (t0 = performance.now()))
    let running: number | undefined
    await waitFor(async () => {
      const v = await podView(ns, name)
      if (v.running) running ??= performance.now() - t0
      return v.ready
    }, { timeoutMs: 180_000, intervalMs: 25, what: `${name} Ready` })
    pod.push(performance.now() - t0)
    toRunning.push(running ?? Number.NaN)
    kubectl(['-n', ns, 'delete', 'pod', name, '--wait=false'])
  }
  const row = (what: string, v: number[]) => ({ what, n: v.length, p50: `${(percentile(v, 50) / 1000).toFixed(2)} s`, p95: `${(percentile(v, 95) / 1000).toFixed(2)} s` })
  const ratio = percentile(pod, 50) / percentile(host, 50)
  return [
    row(`real node: Pod created → Ready (kubelet, containerd, runc; probes) — ${ratio.toFixed(2)}× the host process (target ≤ 1.5×)`, pod),
    row('  of which created → container running (schedule, sandbox, network, container)', toRunning),
    row(`baseline: the same program as a host process, spawn → ready (what the test node runs; ${hostBrowser() === HEADLESS_SHELL ? 'chromium-headless-shell, as the image' : 'full Chromium: apt-get install chromium-headless-shell for the image\'s browser'})`, host),
  ]
}

/** the browser the image runs for headless sessions (Debian's chromium-headless-shell), when this machine has it */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell'
const hostBrowser = () => (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium')

/** `node browser-pod/main.ts` on this machine, spawn → its ready line */
async function hostProcessStart(): Promise<number> {
  const t0 = performance.now()
  // as root, as the embedded runtime runs it: a uid of its own (Chromium's sandbox refuses root)
  const user = podUsers.acquire(`bench-pod-${process.pid}-${randomBytes(4).toString('hex')}`)
  const child = spawn(process.execPath, [join(ROOT, 'browser-pod/main.ts')], {
    env: { ...process.env, ...(user ? { HOME: user.home, TMPDIR: user.home } : {}), NIGHTJAR_POD_TOKEN: randomBytes(24).toString('base64url'), NIGHTJAR_POD_PORT: '0', NIGHTJAR_POD_HOST: '127.0.0.1', NIGHTJAR_CHROMIUM_PATH: hostBrowser() },
    stdio: ['pipe', 'pipe', 'ignore'],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  })
  child.once('exit', () => user?.release())
  let out = ''
  child.stdout!.on('data', (c) => (out += c))
  await waitFor(() => out.includes('"ready"') || child.exitCode !== null, { timeoutMs: 120_000, intervalMs: 100, what: 'host browser pod ready' })
  const ms = performance.now() - t0
  if (!out.includes('"ready"')) throw new Error(`the host browser pod exited (${child.exitCode})`)
  child.stdin!.end() // its stdin closing stops it
  await once(child, 'exit')
  return ms
}

/** the container's working set and CPU time, read inside it */
function cgroupOf(kubectl: ReturnType<typeof kubectlOn>, ns: string, pod: string): { workingSet: number; cpuNs: number } {
  const out = kubectl(['-n', ns, 'exec', pod, '-c', 'browser', '--', 'cat', '/sys/fs/cgroup/memory/memory.usage_in_bytes', '/sys/fs/cgroup/memory/memory.stat', '/sys/fs/cgroup/cpuacct/cpuacct.usage'])
  const lines = out.trim().split('\n')
  const usage = Number(lines[0])
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(out)?.[1] ?? 0)
  return { workingSet: usage - inactive, cpuNs: Number(lines.at(-1)) }
}

async function memoryPerSession(kubectl: ReturnType<typeof kubectlOn>, ns: string, heavyUrl: string): Promise<Row[]> {
  progress('memory per session')
  const name = 'memory'
  const token = createBrowserPod(kubectl, ns, name)
  const { ip } = await waitFor(async () => { const v = await podView(ns, name); return v.ready ? v : undefined }, { timeoutMs: 180_000, intervalMs: 100, what: 'memory pod Ready' })
  const podApi = async (path: string, body: unknown) => {
    const r = await fetch(`http://${ip}:8090${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`)
    return r.json()
  }
  await podApi('/v1/configure', { sessionId: 'bench-memory', egress: { mode: 'platform', declaredHosts: [] } })
  await podApi('/v1/navigate', { url: 'about:blank' })
  const settle = () => new Promise((r) => setTimeout(r, 3000)) // a measurement window, not synchronisation
  await settle()
  const blank = cgroupOf(kubectl, ns, name)
  await new Promise((r) => setTimeout(r, 10_000))
  const idleCpu = (cgroupOf(kubectl, ns, name).cpuNs - blank.cpuNs) / 10e9 // cores over the 10 s
  await podApi('/v1/navigate', { url: heavyUrl })
  await settle()
  const heavy = cgroupOf(kubectl, ns, name)
  kubectl(['-n', ns, 'delete', 'pod', name, '--wait=false'])
  const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`
  return [
    { what: 'live session, blank page: working set', value: mib(blank.workingSet) },
    { what: 'live session, heavy page (8,000-row table, 2400×2400 canvas): working set', value: mib(heavy.workingSet) },
    { what: 'live session, blank page: CPU over 10 s idle', value: `${(idleCpu * 1000).toFixed(1)} millicores` },
    { what: 'request per browser pod, before → now', value: `${OLD_REQUESTS.cpu}/${OLD_REQUESTS.memory} → ${NEW_REQUESTS.cpu}/${NEW_REQUESTS.memory}` },
  ]
}

async function idleCapacity(kubectl: ReturnType<typeof kubectlOn>, ns: string): Promise<Row[]> {
  const node = JSON.parse(kubectl(['get', 'node', NODE_NAME, '-o', 'json']))
  const rows: Row[] = []
  for (const [label, requests] of [['old chart default', OLD_REQUESTS], ['chart default now', NEW_REQUESTS]] as const) {
    progress(`idle capacity: ${label}`)
    const names: string[] = []
    // create until the scheduler refuses one; 40 is a bound no 2-core node reaches here
    for (let i = 0; i < 40; i++) {
      const name = `idle-${requests.cpu}-${i}`
      createBrowserPod(kubectl, ns, name, requests)
      const v = await waitFor(async () => { const p = await podView(ns, name); return p.ready || p.unschedulable ? p : undefined }, { timeoutMs: 240_000, intervalMs: 100, what: `${name} Ready or refused` })
      if (v.unschedulable) break
      names.push(name)
    }
    // "stay live": every one still Ready after half a minute side by side
    await new Promise((r) => setTimeout(r, 30_000))
    const live = (await Promise.all(names.map((n) => podView(ns, n)))).filter((v) => v.ready).length
    rows.push({ requests: `${label}: ${requests.cpu} CPU, ${requests.memory}`, 'idle sessions live at once': live, 'node allocatable': `${node.status.allocatable.cpu} CPU, ${Math.round(Number(String(node.status.allocatable.memory).replace('Ki', '')) / 1048576)} GiB` })
    kubectl(['-n', ns, 'delete', 'pods', '--all', '--wait=true', '--timeout=180s'])
  }
  return rows
}

/** the heavy page on an address of the cluster's bridge the Pods reach (198.18.255.0/24, "public") */
async function serveHeavyPage(bridge: string): Promise<{ url: string; close(): void }> {
  const ip = `198.18.255.${200 + (randomBytes(1)[0]! % 50)}`
  execFileSync('ip', ['addr', 'add', `${ip}/32`, 'dev', bridge])
  const page = readFileSync(join(ROOT, 'test/fixtures/pages/heavy.html'))
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(page)
  })
  server.listen(80, ip)
  await once(server, 'listening')
  return {
    url: `http://${ip}/heavy.html`,
    close() {
      server.closeAllConnections()
      server.close()
      execFileSync('ip', ['addr', 'del', `${ip}/32`, 'dev', bridge])
    },
  }
}
