// The simulated fleet (`npm run cluster -- up --simulated-nodes N`): nodes that exist only as
// Kubernetes objects beside the real ones, and the kubelet's part for the Pods bound to them,
// played by this one process: a tainted Node with its Lease renewed and a pod range of its
// own; each Pod taken through Pending, Running and Ready as a kubelet writes them and, for a
// browser pod, served by a hollow pod (hollow-pod.ts) at its address. node-stop stops the
// Lease and freezes the node's hollow pods; node-start brings both back. docs/scale.md
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { HollowServer } from './hollow-pod.ts'
import { KubeApi, MERGE_PATCH, type ApiAccess, type WatchEvent } from './kube-api.ts'

const run = promisify(execFile)

/** the taint every simulated node carries: a Pod that tolerates it may be simulated */
export const SIMULATED_TAINT = { key: 'nightjar.dev/simulated', value: 'true', effect: 'NoSchedule' } as const
export const SIMULATED_LABEL = 'nightjar.dev/simulated'
export const MAX_SIMULATED_NODES = 128
/** what each simulated node offers the scheduler: room for 110 pods (Kubernetes' default) at the browser pod's default requests */
export const SIMULATED_CAPACITY = { cpu: '32', memory: '128Gi', pods: '110', 'ephemeral-storage': '200Gi' }
const LEASE_SECONDS = 40
const RENEW_MS = 10_000
/** created → running, as a kubelet with the image present takes to start a container */
const CONTAINER_START_MS = 300

export const simulatedNodeName = (index: number) => `nightjar-sim-${index}`

/** cluster k's simulated pod addresses: 198.18.(64k).0/18, a /25 per node (125 pod addresses, more than its 110 pods) */
export function fleetCidr(hostIp: string): string {
  const k = Number(hostIp.split('.')[2]) / 32
  if (!Number.isInteger(k) || k > 3) throw new Error(`simulated nodes need cluster 0 to 3 (this one's host address is ${hostIp})`)
  return `198.18.${64 * k}.0/18`
}

/** node k's /25 of the fleet's range: its first address is the node's, the next 125 its pods' */
function nodeRange(cidr: string, index: number): { cidr: string; start: number } {
  const [a, b, c] = cidr.split('/')[0].split('.').map(Number)
  const start = (a * 256 ** 3 + b * 256 ** 2 + c * 256) + (index - 1) * 128
  return { cidr: `${dotted(start)}/25`, start }
}

const dotted = (n: number) => [3, 2, 1, 0].map((k) => Math.floor(n / 256 ** k) % 256).join('.')
const microTime = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
/** now, as the API's timestamps are written (whole seconds) */
const timestamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')

interface Pod {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string> }
  spec: { nodeName?: string; containers: { name: string; image: string; env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[]; readinessProbe?: { periodSeconds?: number; initialDelaySeconds?: number } }[] }
  status?: { phase?: string; podIP?: string }
}

interface SimulatedPod {
  pod: Pod
  node: SimNode
  ip?: string
  hollow?: HollowServer
  state: 'starting' | 'running' | 'ready' | 'gone'
}

class SimNode {
  readonly pods = new Map<string, SimulatedPod>()
  /** the node's own address (its "kubelet"'s, where nothing listens): the first of its range */
  readonly ip: string
  readonly #free: string[] = []
  stopped = false
  readonly name: string
  readonly index: number
  readonly podCidr: string
  constructor(name: string, index: number, podCidr: string, start: number) {
    this.name = name
    this.index = index
    this.podCidr = podCidr
    this.ip = dotted(start + 1)
    for (let i = 2; i <= 126; i++) this.#free.push(dotted(start + i))
  }
  takeIp(): string | undefined { return this.#free.shift() }
  giveIp(ip: string) { this.#free.push(ip) }
}

export interface FleetOptions {
  api: ApiAccess
  /** the cluster's host address on the bridge (its k picks the fleet's range) */
  hostIp: string
  log(msg: string): void
}

export class Fleet {
  readonly cidr: string
  readonly #api: KubeApi
  readonly #log: (m: string) => void
  readonly #nodes = new Map<string, SimNode>()
  readonly #pods = new Map<string, SimulatedPod>()
  #stopInformer?: () => void
  #renew?: NodeJS.Timeout
  #routed = false

  constructor(opts: FleetOptions) {
    this.cidr = fleetCidr(opts.hostIp)
    this.#api = new KubeApi(opts.api)
    this.#log = opts.log
  }

  /** the simulated nodes, by name */
  get nodes(): { name: string; podCidr: string; stopped: boolean; pods: number }[] {
    return [...this.#nodes.values()].map((n) => ({ name: n.name, podCidr: n.podCidr, stopped: n.stopped, pods: n.pods.size }))
  }

  has(name: string): boolean {
    return this.#nodes.has(name)
  }

  /** makes the fleet `count` nodes (adding or removing the last ones), routes its addresses here, and plays their kubelets */
  async resize(count: number): Promise<void> {
    if (!(Number.isInteger(count) && count >= 0 && count <= MAX_SIMULATED_NODES)) throw new Error(`--simulated-nodes takes 0 to ${MAX_SIMULATED_NODES}`)
    if (count && !this.#routed) {
      // every address of the range is this machine's: a hollow pod binds its own, and Pods on
      // the bridge reach it through their gateway (the host), as they reach another node's Pod
      await run('ip', ['route', 'replace', 'local', this.cidr, 'dev', 'lo'])
      this.#routed = true
    }
    for (let i = 1; i <= count; i++) if (!this.#nodes.has(simulatedNodeName(i))) await this.#addNode(i)
    for (const n of [...this.#nodes.values()].filter((n) => n.index > count)) await this.#removeNode(n)
    if (count && !this.#stopInformer) this.#watchPods()
    if (count && !this.#renew) this.#renew = setInterval(() => void this.#renewLeases(), RENEW_MS)
    this.#log(`fleet: ${count} simulated node${count === 1 ? '' : 's'} (pods ${this.cidr})`)
  }

  /** node-stop: its Lease is no longer renewed and its hollow pods answer nothing (the requests wait) */
  async stopNode(name: string): Promise<void> {
    const n = this.#nodes.get(name)
    if (!n || n.stopped) return
    n.stopped = true
    for (const p of n.pods.values()) p.hollow?.freeze(true)
    this.#log(`node-stop ${name}: its Lease stops, its ${n.pods.size} hollow pods answer nothing`)
  }

  /** node-start: Ready again (as a kubelet reports after a restart), its pods reconciled and answering */
  async startNode(name: string): Promise<void> {
    const n = this.#nodes.get(name)
    if (!n || !n.stopped) return
    n.stopped = false
    await this.#renewLease(n)
    await this.#writeNodeStatus(n)
    for (const p of [...n.pods.values()]) {
      p.hollow?.freeze(false)
      await this.#reconcile(p.pod)
      if (p.state === 'ready') await this.#patchStatus(p, this.#status(p, 'ready')).catch(() => undefined)
    }
    this.#log(`node-start ${name}: Ready again`)
  }

  /** every node and pod of the fleet removed; the route too */
  async stop(): Promise<void> {
    this.#stopInformer?.()
    clearInterval(this.#renew)
    for (const n of [...this.#nodes.values()]) await this.#removeNode(n).catch((err) => this.#log(`fleet: ${String(err)}`))
    if (this.#routed) await run('ip', ['route', 'del', 'local', this.cidr, 'dev', 'lo']).catch(() => undefined)
    this.#api.close()
  }

  async #addNode(index: number): Promise<void> {
    const name = simulatedNodeName(index)
    const range = nodeRange(this.cidr, index)
    const node = new SimNode(name, index, range.cidr, range.start)
    this.#nodes.set(name, node)
    const r = await this.#api.call('POST', '/api/v1/nodes', {
      apiVersion: 'v1', kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', [SIMULATED_LABEL]: 'true' } },
      spec: { podCIDR: range.cidr, podCIDRs: [range.cidr], taints: [{ ...SIMULATED_TAINT }] },
    })
    if (r.status !== 201 && r.status !== 409) throw new Error(`create node ${name}: ${r.status} ${r.body?.message ?? ''}`)
    await this.#writeNodeStatus(node)
    await this.#renewLease(node)
  }

  async #removeNode(n: SimNode): Promise<void> {
    for (const p of [...n.pods.values()]) await this.#release(p)
    this.#nodes.delete(n.name)
    await this.#api.call('DELETE', `/api/v1/nodes/${n.name}`)
    await this.#api.call('DELETE', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${n.name}`)
  }

  async #writeNodeStatus(n: SimNode): Promise<void> {
    const now = timestamp()
    const cond = (type: string, status: string, reason: string) => ({ type, status, reason, message: reason, lastHeartbeatTime: now, lastTransitionTime: now })
    await this.#api.must('PATCH', `/api/v1/nodes/${n.name}/status`, {
      status: {
        capacity: SIMULATED_CAPACITY, allocatable: SIMULATED_CAPACITY,
        conditions: [
          cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'), cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
          cond('PIDPressure', 'False', 'KubeletHasSufficientPID'), cond('Ready', 'True', 'KubeletReady'),
        ],
        addresses: [{ type: 'InternalIP', address: n.ip }, { type: 'Hostname', address: n.name }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: { kubeletVersion: 'v1.20.2', kubeProxyVersion: 'v1.20.2', containerRuntimeVersion: 'hollow://nightjar-fleet', operatingSystem: 'linux', architecture: 'amd64', osImage: 'simulated', kernelVersion: '', machineID: '', systemUUID: '', bootID: '' },
      },
    }, MERGE_PATCH)
  }

  async #renewLeases(): Promise<void> {
    for (const n of this.#nodes.values()) if (!n.stopped) await this.#renewLease(n).catch((err) => this.#log(`fleet: lease ${n.name}: ${String(err)}`))
  }

  async #renewLease(n: SimNode): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${n.name}`
    const spec = { holderIdentity: n.name, leaseDurationSeconds: LEASE_SECONDS, renewTime: microTime() }
    const r = await this.#api.call('PATCH', path, { spec }, MERGE_PATCH)
    if (r.status === 404) await this.#api.must('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: n.name, namespace: 'kube-node-lease' }, spec })
    else if (r.status !== 200) throw new Error(`${r.status} ${r.body?.message ?? ''}`)
  }

  #watchPods(): void {
    this.#stopInformer = this.#api.informer<Pod>('/api/v1/pods', {
      onList: (items) => {
        const seen = new Set(items.map((p) => p.metadata.uid))
        for (const p of [...this.#pods.values()]) if (!seen.has(p.pod.metadata.uid)) void this.#release(p)
        for (const p of items) void this.#reconcile(p)
      },
      onEvent: (e: WatchEvent<Pod>) => {
        if (e.type === 'DELETED') {
          const p = this.#pods.get(e.object.metadata.uid)
          if (p) void this.#release(p)
        } else void this.#reconcile(e.object)
      },
      onError: (err) => this.#log(`fleet: pod watch: ${err.message}`),
    })
  }

  /** a kubelet's part for one Pod: start it once bound here, run it to Ready, end it when deleted */
  async #reconcile(pod: Pod): Promise<void> {
    const node = pod.spec.nodeName ? this.#nodes.get(pod.spec.nodeName) : undefined
    if (!node) return
    let p = this.#pods.get(pod.metadata.uid)
    if (p) p.pod = pod
    if (node.stopped) return // a lost node's kubelet writes nothing
    try {
      if (pod.metadata.deletionTimestamp) {
        if (p?.state === 'gone') return
        if (p) await this.#release(p)
        // the containers are gone at once: the kubelet's final delete, for this Pod only
        const r = await this.#api.call('DELETE', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } })
        if (r.status !== 200 && r.status !== 404 && r.status !== 409) throw new Error(`delete: ${r.status} ${r.body?.message ?? ''}`)
        return
      }
      if (p) return
      p = { pod, node, state: 'starting' }
      this.#pods.set(pod.metadata.uid, p)
      node.pods.set(pod.metadata.uid, p)
      p.ip = node.takeIp()
      if (!p.ip) {
        await this.#patchStatus(p, { phase: 'Failed', reason: 'OutOfAddresses', message: `no address left in ${node.podCidr}` })
        return
      }
      await this.#patchStatus(p, this.#status(p, 'starting'))
      await new Promise((r) => setTimeout(r, CONTAINER_START_MS))
      const token = await this.#podToken(pod)
      if (token !== undefined) {
        const hollow = new HollowServer(token)
        await hollow.listen(p.ip, podPort(pod))
        if (p.state === 'gone') return void (await hollow.close())
        p.hollow = hollow
        if (node.stopped) hollow.freeze(true)
      }
      if (p.state === 'gone') return
      p.state = 'running'
      await this.#patchStatus(p, this.#status(p, 'running'))
      // Ready on the readiness probe's first success: one period after the container started
      const probe = pod.spec.containers[0]?.readinessProbe
      await new Promise((r) => setTimeout(r, ((probe?.initialDelaySeconds ?? 0) + (probe ? probe.periodSeconds ?? 10 : 0)) * 1000))
      if (p.state !== 'running' || node.stopped) return
      p.state = 'ready'
      await this.#patchStatus(p, this.#status(p, 'ready'))
    } catch (err) {
      this.#log(`fleet: pod ${pod.metadata.namespace}/${pod.metadata.name}: ${String((err as Error).message ?? err)}`)
    }
  }

  /** a browser pod's token, from the Secret its environment names (undefined: not a browser pod) */
  async #podToken(pod: Pod): Promise<string | undefined> {
    const ref = pod.spec.containers[0]?.env?.find((e) => e.name === 'NIGHTJAR_POD_TOKEN')?.valueFrom?.secretKeyRef
    if (!ref) return undefined
    const secret = await this.#api.must('GET', `/api/v1/namespaces/${pod.metadata.namespace}/secrets/${ref.name}`)
    const b64 = secret.data?.[ref.key] as string | undefined
    if (!b64) throw new Error(`secret ${ref.name} has no ${ref.key}`)
    return Buffer.from(b64, 'base64').toString('utf8')
  }

  async #release(p: SimulatedPod): Promise<void> {
    if (p.state === 'gone') return
    p.state = 'gone'
    this.#pods.delete(p.pod.metadata.uid)
    p.node.pods.delete(p.pod.metadata.uid)
    // the listener closes at once (its address is free again); its connections are dropped
    void p.hollow?.close()
    if (p.ip) p.node.giveIp(p.ip)
  }

  #status(p: SimulatedPod, state: 'starting' | 'running' | 'ready'): Record<string, unknown> {
    const now = timestamp()
    const ready = state === 'ready' ? 'True' : 'False'
    return {
      phase: state === 'starting' ? 'Pending' : 'Running',
      hostIP: p.node.ip, podIP: p.ip, podIPs: [{ ip: p.ip }], startTime: now, qosClass: 'Burstable',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        { type: 'Ready', status: ready, lastTransitionTime: now },
        { type: 'ContainersReady', status: ready, lastTransitionTime: now },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: p.pod.spec.containers.map((c) => ({
        name: c.name, image: c.image, imageID: `hollow://${c.image}`, restartCount: 0,
        ready: state === 'ready', started: state !== 'starting',
        ...(state === 'starting'
          ? { state: { waiting: { reason: 'ContainerCreating' } } }
          : { containerID: `hollow://${p.pod.metadata.uid}`, state: { running: { startedAt: now } } }),
      })),
    }
  }

  async #patchStatus(p: SimulatedPod, status: Record<string, unknown>): Promise<void> {
    const { namespace, name, uid } = p.pod.metadata
    const r = await this.#api.call('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, { metadata: { uid }, status }, MERGE_PATCH)
    if (r.status === 404 || r.status === 409) return // deleted meanwhile: the watch says so
    if (r.status !== 200) throw new Error(`status: ${r.status} ${r.body?.message ?? ''}`)
  }
}

function podPort(pod: Pod): number {
  const v = pod.spec.containers[0]?.env?.find((e) => e.name === 'NIGHTJAR_POD_PORT')?.value
  return v ? Number(v) : 8090
}
