// A small kubelet for the cluster tests (not a test file): one Node that runs the Pods bound
// to it as local processes, each in a network namespace of its own, beside the real control
// plane of devcluster/control-plane.ts. It stands in for a scheduler, kube-proxy and DNS too;
// it has no images, cgroups, seccomp or NetworkPolicy (the node phase covers those). Runs as
// root. What it does and does not do: docs/testing.md#the-cluster-tests-test-node
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { alive } from '../helpers/process.ts'
import { RUNS_ROOT, sweepDeadRuns } from '../../devcluster/stale.ts'
import type { ClusterNetwork } from '../../devcluster/network.ts'
import { ApiError, Informer, KubeClient, TaskQueue, type ApiAccess, type Obj } from './kube-client.ts'
import { NODE_CAPACITY } from './node-env.ts'
import { FakeBrowsers, type FakeBrowser } from './node-fake-browsers.ts'
import { type NodeContext, type PodInfo, PodWorker } from './node-pods.ts'
import { ServiceNetwork } from './node-services.ts'

export interface TestNodeOptions {
  api: ApiAccess
  network: ClusterNetwork
  /** the repository: docker/*.Dockerfile are the images, and /app in them is this directory */
  repoRoot: string
  /** default test-node-<pid> */
  nodeName?: string
  /** labels besides kubernetes.io/hostname, os and arch (nodeSelector matches against them) */
  labels?: Record<string, string>
  /** browser-pod images get no process: an in-process stub answers their node API */
  fakeBrowsers?: boolean
  /** container logs: <logDir>/<namespace>_<pod>_<container>.log */
  logDir: string
  log?: (m: string) => void
  /** crash-loop back-off (default 1 s doubling to 30 s) */
  restartBackoff?: { initialMs: number; maxMs: number }
  /** concurrent status patches and bindings (default 16) */
  apiConcurrency?: number
}

export interface TestNode {
  nodeName: string
  /** http://127.0.0.1:<port>: GET /pods, POST /pods/<ns>/<name>/kill?container=&signal= */
  controlUrl: string
  /** the pods this node runs (or fakes) */
  pods(): PodInfo[]
  pod(namespace: string, name: string): PodInfo | undefined
  /** simulates a crash: a signal to one container's main process; its pid */
  killContainer(namespace: string, name: string, container: string, signal?: NodeJS.Signals): number
  /** fakeBrowsers: the stub behind a fake browser pod (configure calls, configured body) */
  fakeBrowser(namespace: string, name: string): FakeBrowser | undefined
  /** kills every pod's processes and removes what the node added to the machine; the API objects stay */
  stop(): Promise<void>
}

/** the state of nodes whose process died: their containers, /etc/netns entries, directories */
function sweepStale(): void {
  sweepDeadRuns(RUNS_ROOT, 'node', { groups: true })
  if (existsSync('/etc/netns')) {
    for (const d of readdirSync('/etc/netns')) {
      const m = /^njp-(\d+)-/.exec(d)
      if (m && !alive(Number(m[1]))) rmSync(join('/etc/netns', d), { recursive: true, force: true })
    }
  }
}

const ipToInt = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0)
const intToIp = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.')

/** pod addresses from the bridge's subnet: not the network, the host, nor broadcast; handed out round-robin */
class IpPool {
  private readonly used = new Set<number>()
  private readonly first: number
  private readonly last: number
  private next: number
  constructor(net: ClusterNetwork) {
    const size = 2 ** (32 - net.prefix)
    const base = (ipToInt(net.hostIp) & ~(size - 1)) >>> 0
    this.first = base + 1
    this.last = base + size - 2
    this.used.add(ipToInt(net.hostIp))
    this.next = this.first
  }
  allocate(): string {
    for (let i = 0; i <= this.last - this.first; i++) {
      const n = this.next
      this.next = n >= this.last ? this.first : n + 1
      if (!this.used.has(n)) { this.used.add(n); return intToIp(n) }
    }
    throw new Error('pod subnet exhausted')
  }
  release(ip: string): void { this.used.delete(ipToInt(ip)) }
}

function selectorMatches(pod: Obj, labels: Record<string, string>): boolean {
  return Object.entries<string>(pod.spec.nodeSelector ?? {}).every(([k, v]) => labels[k] === v)
}

export async function startTestNode(opts: TestNodeOptions): Promise<TestNode> {
  const log = opts.log ?? (() => {})
  const nodeName = opts.nodeName ?? `test-node-${process.pid}`
  const net = opts.network
  sweepStale()
  const stateDir = join(RUNS_ROOT, `node-${process.pid}-${randomBytes(3).toString('hex')}`)
  mkdirSync(stateDir, { recursive: true })
  mkdirSync(opts.logDir, { recursive: true })

  const client = new KubeClient(opts.api, { maxSockets: 32 })
  const queue = new TaskQueue(opts.apiConcurrency ?? 16)
  const labels = {
    ...opts.labels,
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
  }

  // ---- the Node object ------------------------------------------------------------------
  await client.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels }, spec: {} })
    .catch((e) => { if (!(e instanceof ApiError && e.status === 409)) throw e })
  const nodeStatus = () => {
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
    const cond = (type: string, status: string, reason: string) => ({ type, status, reason, message: reason, lastHeartbeatTime: at, lastTransitionTime: at })
    return {
      status: {
        capacity: NODE_CAPACITY,
        allocatable: NODE_CAPACITY,
        conditions: [
          cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
          cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
          cond('PIDPressure', 'False', 'KubeletHasSufficientPID'),
          cond('Ready', 'True', 'KubeletReady'),
        ],
        addresses: [{ type: 'InternalIP', address: net.hostIp }, { type: 'Hostname', address: nodeName }],
        daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
        nodeInfo: {
          machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: 'nightjar test node',
          containerRuntimeVersion: 'testnode://1', kubeletVersion: 'v1.20.2', kubeProxyVersion: 'v1.20.2',
          operatingSystem: 'linux', architecture: 'amd64',
        },
      },
    }
  }
  await client.request('PATCH', `/api/v1/nodes/${nodeName}/status`, nodeStatus(), 'application/strategic-merge-patch+json')

  // ---- Services, fakes, pods --------------------------------------------------------------
  const services = new ServiceNetwork(client, net, log)
  await services.start()
  // every pod that talks to Kubernetes goes through the `kubernetes` Service: a node that
  // cannot serve it fails here, saying why, not as pods crash-looping minutes later
  await services.whenServing('default', 'kubernetes', 60_000)
  const fake = opts.fakeBrowsers ? new FakeBrowsers(net) : undefined
  const ips = new IpPool(net)
  const workers = new Map<string, PodWorker>()
  const byName = new Map<string, PodWorker>()
  let sandboxes = 0
  let stopped = false

  const writePids = () => {
    const pids = [...workers.values()].flatMap((w) => w.runningPids())
    try { writeFileSync(join(stateDir, 'pids'), pids.join('\n') + '\n') } catch { /* stopping */ }
  }
  let pidsTimer: NodeJS.Timeout | undefined
  const ctx: NodeContext = {
    client, net, nodeName, repoRoot: opts.repoRoot, logDir: opts.logDir, stateDir, services, fake,
    statusQueue: queue,
    backoff: opts.restartBackoff ?? { initialMs: 1000, maxMs: 30_000 },
    log,
    allocateIp: () => ips.allocate(),
    releaseIp: (ip) => ips.release(ip),
    sandboxNames: () => {
      const n = (sandboxes++).toString(36)
      // interface names have 15 characters at most: nv + pid in base 36 (≤ 5) + x + n
      return { netns: `njp-${process.pid}-${n}`, veth: `nv${process.pid.toString(36)}x${n}` }
    },
    pidsChanged: () => {
      if (pidsTimer) return
      pidsTimer = setTimeout(() => { pidsTimer = undefined; writePids() }, 50)
    },
    forget: (w) => {
      if (workers.get(w.uid) === w) workers.delete(w.uid)
      const k = `${w.pod.metadata.namespace}/${w.pod.metadata.name}`
      if (byName.get(k) === w) byName.delete(k)
    },
  }

  const binding = new Set<string>()
  const bind = (pod: Obj) => {
    const uid = pod.metadata.uid
    if (binding.has(uid)) return
    binding.add(uid)
    const { namespace, name } = pod.metadata
    void queue.run(() => client.post(`/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
      apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace, uid }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    })).catch((e) => {
      // 409: bound meanwhile; 404: deleted meanwhile; anything else is retried by the next event or re-list
      if (!(e instanceof ApiError && (e.status === 409 || e.status === 404))) log(`binding ${namespace}/${name}: ${e.message}`)
    }).finally(() => binding.delete(uid))
  }

  const pods = new Informer(client, '/api/v1/pods', (type, pod) => {
    if (stopped) return
    const uid = pod.metadata.uid
    if (type === 'DELETED') {
      void workers.get(uid)?.vanish()
      return
    }
    const spec = pod.spec
    if (!spec.nodeName) {
      const scheduler = spec.schedulerName ?? 'default-scheduler'
      if (scheduler === 'default-scheduler' && !pod.metadata.deletionTimestamp && selectorMatches(pod, labels)) bind(pod)
      return
    }
    if (spec.nodeName !== nodeName) return
    const w = workers.get(uid)
    if (w) return w.update(pod)
    const worker = new PodWorker(ctx, pod)
    workers.set(uid, worker)
    byName.set(`${pod.metadata.namespace}/${pod.metadata.name}`, worker)
    void worker.run()
  }, log)
  pods.start()
  await pods.ready

  const heartbeat = setInterval(() => {
    void client.request('PATCH', `/api/v1/nodes/${nodeName}/status`, nodeStatus(), 'application/strategic-merge-patch+json').catch((e) => log(`node status: ${e.message}`))
  }, 30_000)
  heartbeat.unref()

  // ---- test hooks ---------------------------------------------------------------------------
  const find = (namespace: string, name: string) => byName.get(`${namespace}/${name}`)
  const killContainer = (namespace: string, name: string, container: string, signal: NodeJS.Signals = 'SIGKILL') => {
    const w = find(namespace, name)
    if (!w) throw new Error(`pod ${namespace}/${name} is not on ${nodeName}`)
    const pid = w.signal(container, signal)
    if (pid === undefined) throw new Error(`container ${container} of ${namespace}/${name} is not running`)
    return pid
  }
  const control: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    const url = new URL(req.url ?? '/', 'http://x')
    const kill = /^\/pods\/([^/]+)\/([^/]+)\/kill$/.exec(url.pathname)
    try {
      if (req.method === 'GET' && url.pathname === '/pods') return send(200, [...workers.values()].map((w) => w.info()))
      if (req.method === 'POST' && kill) {
        const pid = killContainer(decodeURIComponent(kill[1]), decodeURIComponent(kill[2]), url.searchParams.get('container') ?? '', (url.searchParams.get('signal') ?? 'SIGKILL') as NodeJS.Signals)
        return send(200, { ok: true, pid })
      }
      send(404, { error: { code: 'not_found', message: 'GET /pods or POST /pods/<ns>/<name>/kill?container=&signal=' } })
    } catch (e) {
      send(409, { error: { code: 'conflict', message: (e as Error).message } })
    }
  })
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()))
  const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`
  log(`test node ${nodeName} up (control API ${controlUrl})`)

  return {
    nodeName,
    controlUrl,
    pods: () => [...workers.values()].map((w) => w.info()),
    pod: (namespace, name) => find(namespace, name)?.info(),
    killContainer,
    fakeBrowser: (namespace, name) => {
      const ip = find(namespace, name)?.ip
      return ip ? fake?.get(ip) : undefined
    },
    async stop() {
      if (stopped) return
      stopped = true
      clearInterval(heartbeat)
      clearTimeout(pidsTimer)
      pods.stop()
      await Promise.all([...workers.values()].map((w) => w.vanish()))
      await services.stop()
      await fake?.stop()
      control.closeAllConnections()
      await new Promise<void>((r) => control.close(() => r()))
      client.close()
      rmSync(stateDir, { recursive: true, force: true })
    },
  }
}
