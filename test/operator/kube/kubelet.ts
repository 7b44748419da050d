// A stand-in for the kubelet and the browser pod's API in the Kubernetes tests (not a
// test file). Each "running" pod gets its own loopback address (127.S.0.N) and a small
// HTTP server on the pod API port the PodRuntime was configured with, so the runtime reaches
// it at http://<podIP>:<port> exactly as in a cluster. Like a kubelet, it resolves the
// container's NIGHTJAR_POD_TOKEN from the Secret named in env.valueFrom.secretKeyRef —
// so a passing configure proves the token travelled Secret → env → pod, never through
// the Pod object.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FakeKubeApi } from './fake-apiserver.ts'

type Obj = Record<string, any>

export class FakePod {
  configured?: Obj
  configureCalls = 0
  /** the W3C traceparent the last configure call carried (tracing tests) */
  configureTraceparent?: string
  /** GET /healthz answered (the operator's probes of a pod on a suspect node) */
  healthCalls = 0
  /** answer /v1/configure with this status instead (failure tests) */
  configureStatus?: number
  readonly ip: string
  readonly server: Server
  readonly token: string
  constructor(
    ip: string,
    server: Server,
    token: string,
  ) {
    this.ip = ip
    this.server = server
    this.token = token
  }
  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((r) => this.server.close(() => r()))
  }
}

export class FakeKubelet {
  readonly podApis = new Map<string, FakePod>()
  private nextIp = 2
  /** a range of loopback addresses of its own (127.<this>.x.y), so kubelets of test files running side by side do not meet on one address and port */
  private readonly subnet = 1 + Math.floor(Math.random() * 250)
  private autoRun = false
  /** the node a pod is bound to when it starts (spec.nodeName); none by default */
  nodeFor?: (podName: string) => string | undefined
  /** pod name → node it runs on */
  readonly placement = new Map<string, string>()
  private readonly onChange = (e: { type: string; plural: string; object: Obj }) => {
    if (this.autoRun && e.plural === 'pods' && e.type === 'ADDED' && e.object.metadata.namespace === this.namespace) {
      void this.run(e.object.metadata.name).catch(() => {})
    }
  }

  private readonly api: FakeKubeApi
  private readonly namespace: string
  readonly podApiPort: number
  private constructor(
    api: FakeKubeApi,
    namespace: string,
    podApiPort: number,
  ) {
    this.api = api
    this.namespace = namespace
    this.podApiPort = podApiPort
    api.on('change', this.onChange)
  }

  /** reserves a port that is free on the loopback addresses the pods will use */
  static async create(api: FakeKubeApi, namespace: string): Promise<FakeKubelet> {
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.2', () => r()))
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((r) => probe.close(() => r()))
    return new FakeKubelet(api, namespace, port)
  }

  /** start every pod as soon as it is created */
  auto(on = true): this {
    this.autoRun = on
    return this
  }

  /** "start the container": pod API up, pod Running with Ready=True and an IP */
  async run(podName: string, opts: { configureStatus?: number } = {}): Promise<FakePod> {
    const existing = this.podApis.get(podName)
    if (existing) return existing
    const pod = this.api.get('pods', this.namespace, podName)
    if (!pod) throw new Error(`pod ${podName} not found`)
    const token = this.resolveToken(pod)
    const ip = `127.${this.subnet}.${Math.floor(this.nextIp / 250)}.${(this.nextIp % 250) + 2}`
    this.nextIp++
    const fake = new FakePod(ip, createServer(), token)
    fake.configureStatus = opts.configureStatus
    const answer = async (req: IncomingMessage, res: ServerResponse) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      if (req.method === 'GET' && req.url === '/healthz') fake.healthCalls++
      if (req.method === 'GET' && req.url === '/healthz') return send(200, { ok: true, configured: !!fake.configured })
      if (req.headers.authorization !== `Bearer ${fake.token}`) return send(401, { error: { code: 'unauthorized', message: 'bad token' } })
      if (req.method === 'POST' && req.url === '/v1/configure') {
        fake.configureCalls++
        fake.configureTraceparent = typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined
        if (fake.configureStatus) return send(fake.configureStatus, { error: { code: 'bad_request', message: 'refused' } })
        if (fake.configured) return send(409, { error: { code: 'conflict', message: 'session already configured', reason: 'already_configured' } })
        fake.configured = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        return send(200, { ok: true, sessionId: fake.configured!.sessionId })
      }
      send(404, { error: { code: 'not_found', message: 'no route' } })
    }
    // a request answer cannot read is an unhandled rejection, which fails the test that sent it
    fake.server.on('request', (req, res) => { void answer(req, res) })
    await new Promise<void>((resolve, reject) => {
      fake.server.once('error', reject)
      fake.server.listen(this.podApiPort, ip, () => resolve())
    })
    this.podApis.set(podName, fake)
    const nodeName = this.nodeFor?.(podName)
    if (nodeName) this.placement.set(podName, nodeName)
    this.api.mutate('pods', this.namespace, podName, (p) => {
      if (nodeName) p.spec.nodeName = nodeName
      p.status = {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Initialized', status: 'True' },
          { type: 'ContainersReady', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
        containerStatuses: [{ name: 'browser', ready: true, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }],
      }
    })
    return fake
  }

  /** the container died: pod Failed, pod API gone */
  async fail(podName: string, reason = 'Error', exitCode = 1): Promise<void> {
    await this.podApis.get(podName)?.close()
    this.podApis.delete(podName)
    this.api.mutate('pods', this.namespace, podName, (p) => {
      p.status = {
        ...(p.status ?? {}),
        phase: 'Failed',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [{ name: 'browser', ready: false, restartCount: 0, state: { terminated: { exitCode, reason } } }],
      }
    })
  }

  /**
   * The node stops: its kubelet and container runtime die and its containers with them, so
   * none of its pods' APIs answers and nobody updates their status (still Running).
   * The API server from now on keeps a gracefully deleted pod of that node (deadNodes).
   */
  async stopNode(nodeName: string): Promise<void> {
    this.api.deadNodes.add(nodeName)
    for (const [pod, on] of this.placement) {
      if (on !== nodeName) continue
      await this.podApis.get(pod)?.close()
      this.podApis.delete(pod)
    }
  }

  async close(): Promise<void> {
    this.api.off('change', this.onChange)
    await Promise.all([...this.podApis.values()].map((n) => n.close()))
    this.podApis.clear()
  }

  private resolveToken(pod: Obj): string {
    const env: Obj[] = pod.spec.containers[0].env ?? []
    const ref = env.find((e) => e.name === 'NIGHTJAR_POD_TOKEN')?.valueFrom?.secretKeyRef
    if (!ref) throw new Error('pod has no NIGHTJAR_POD_TOKEN secretKeyRef')
    const secret = this.api.get('secrets', this.namespace, ref.name)
    const b64 = secret?.data?.[ref.key]
    if (!b64) throw new Error(`CreateContainerConfigError: secret ${ref.name} key ${ref.key} not found`)
    return Buffer.from(b64, 'base64').toString('utf8')
  }
}
