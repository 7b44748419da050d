// One Pod on the test node (not a test file): its sandbox (a network namespace on the
// cluster bridge), volumes, containers as process groups, probes, restarts, status and
// graceful deletion — the kubelet's pod worker, for processes. Each container gets its own
// mount namespace, so the host's mount table is untouched (missing mountPath directories
// are created on the host and left, empty). Details: docs/testing.md#the-cluster-tests-test-node
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'
import { constants } from 'node:os'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { ClusterNetwork } from '../../devcluster/network.ts'
import { containerArgv, ImageError, imageName, resolveImage, type ImageConfig } from './dockerfile.ts'
import { ApiError, type KubeClient, type Obj, type TaskQueue } from './kube-client.ts'
import { ConfigError, containerEnv, expand, ObjectReader } from './node-env.ts'
import type { FakeBrowsers } from './node-fake-browsers.ts'
import type { ServiceNetwork } from './node-services.ts'
import { MountError, PodVolumes } from './node-volumes.ts'

const run = promisify(execFile)

/**
 * Runs inside the container's fresh mount and UTS namespaces, as root, then execs the
 * container's argv. Arguments: hostname, readOnlyRoot(0|1), workdir, N, N × (source target
 * ro), P, P × setpriv argument, then argv. Every mount source is opened before the first
 * mount, and mounted through /proc/self/fd: a volume mounted on, say, /tmp must not hide the
 * sources of later mounts that live under /tmp on the host.
 */
const CONTAINER_INIT = String.raw`
set -e
# the container's PATH is for the container; this script uses the system's
cpath=$PATH
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
hn=$1 rofs=$2 wd=$3 n=$4; shift 4
fds=() dst=() ro=()
for ((i = 0; i < n; i++)); do
  exec {fd}<"$1"
  fds+=("$fd") dst+=("$2") ro+=("$3")
  shift 3
done
for ((i = 0; i < n; i++)); do
  src=/proc/self/fd/${'$'}{fds[i]} d=${'$'}{dst[i]}
  if [ -d "$src" ]; then mkdir -p "$d"; else mkdir -p "$(dirname "$d")"; [ -e "$d" ] || : >"$d"; fi
  mount --bind "$src" "$d"
  if [ "${'$'}{ro[i]}" = 1 ]; then mount -o remount,bind,ro "$d"; fi
done
for fd in "${'$'}{fds[@]}"; do exec {fd}<&-; done
if [ -n "$hn" ]; then hostname "$hn"; fi
if [ "$rofs" = 1 ]; then mount -o remount,bind,ro /; fi
cd "$wd"
np=$1; shift
priv=("${'$'}{@:1:np}"); shift "$np"
exec env -u SHLVL -u _ -u OLDPWD PATH="$cpath" "${'$'}{priv[@]}" "$@"
`

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** where an image's /app (this working tree) appears inside a container: under no volume a pod mounts */
const APP_DIR = '/run/nightjar-test-node/app'

/** the node's tools by absolute path: a container's PATH must not decide which `ip` runs */
const which = (name: string) => DEFAULT_PATH.split(':').map((d) => join(d, name)).find((p) => existsSync(p)) ?? name
const BIN = { ip: which('ip'), unshare: which('unshare'), nsenter: which('nsenter'), setpriv: which('setpriv'), bash: which('bash') }

/** what a pod worker needs from its node */
export interface NodeContext {
  client: KubeClient
  net: ClusterNetwork
  nodeName: string
  repoRoot: string
  logDir: string
  /** per-pod state (volumes) lives under <stateDir>/pods/<uid> */
  stateDir: string
  services: ServiceNetwork
  /** set in fakeBrowsers mode */
  fake?: FakeBrowsers
  statusQueue: TaskQueue
  backoff: { initialMs: number; maxMs: number }
  log: (m: string) => void
  allocateIp(): string
  releaseIp(ip: string): void
  sandboxNames(): { netns: string; veth: string }
  /** the set of running main pids changed (persisted for the next run's stale sweep) */
  pidsChanged(): void
  forget(worker: PodWorker): void
}

interface Exit { code: number; signal?: string }

/** everything a container start needs, worked out before anything is started */
interface Prepared {
  image: ImageConfig
  argv: string[]
  env: Record<string, string>
  /** setpriv and its arguments, ending in `--` */
  priv: string[]
  wd: string
  /** readOnlyRootFilesystem */
  ro: boolean
  mounts: { src: string; dst: string; ro: boolean }[]
}

interface Ctr {
  spec: Obj
  init: boolean
  logFile: string
  state: Obj
  lastState: Obj
  restartCount: number
  ready: boolean
  started: boolean
  imageID?: string
  containerID?: string
  child?: ChildProcess
  pid?: number
  exited?: Promise<Exit>
  running: boolean
  /** has been started at least once */
  ran: boolean
  /** its environment, user and workdir: exec probes run with them */
  env?: Record<string, string>
  priv?: string[]
  wd?: string
  probes?: AbortController
  nextBackoffMs: number
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() { clearTimeout(t); signal?.removeEventListener('abort', done); resolve() }
    signal?.addEventListener('abort', done, { once: true })
  })

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

function waiting(reason: string, message?: string): Obj {
  return { waiting: { reason, ...(message ? { message } : {}) } }
}

export interface PodInfo {
  namespace: string
  name: string
  uid: string
  podIP?: string
  netns?: string
  phase: string
  fake: boolean
  containers: { name: string; init: boolean; pid?: number; restartCount: number; ready: boolean; logFile: string; state: Obj }[]
}

export class PodWorker {
  pod: Obj
  readonly uid: string
  ip?: string
  netns?: string
  private veth?: string
  private hostsFile?: string
  private readonly dir: string
  private readonly ctrs: Ctr[]
  private volumes: PodVolumes
  private initDone: boolean
  private finished = false
  private startTime?: string
  private readonly transitions = new Map<string, { status: string; at: string }>()
  /** aborted when the pod stops for good (deletion, vanished, node stopped, terminal) */
  private readonly stopCtl = new AbortController()
  private terminating = false
  /** the object is gone (or the node stopped): no more API calls for it */
  private gone = false
  private statusChain: Promise<void> = Promise.resolve()
  private statusPending = false
  private lastSent = ''
  private statusFailures = 0
  private statusRetry?: NodeJS.Timeout
  private fake = false
  private torndown = false
  /** the sandbox (or fake) being set up: teardown waits for it, so nothing is created after it */
  private setup: Promise<unknown> = Promise.resolve()

  private readonly ctx: NodeContext
  constructor(ctx: NodeContext, pod: Obj) {
    this.ctx = ctx
    this.pod = pod
    this.uid = pod.metadata.uid
    this.dir = join(ctx.stateDir, 'pods', this.uid)
    const { namespace, name } = pod.metadata
    const mk = (spec: Obj, init: boolean): Ctr => ({
      spec, init, logFile: join(ctx.logDir, `${namespace}_${name}_${spec.name}.log`),
      state: waiting(init ? 'PodInitializing' : 'ContainerCreating'), lastState: {}, restartCount: 0,
      ready: false, started: false, running: false, ran: false, nextBackoffMs: ctx.backoff.initialMs,
    })
    this.ctrs = [...(pod.spec.initContainers ?? []).map((c: Obj) => mk(c, true)), ...pod.spec.containers.map((c: Obj) => mk(c, false))]
    this.initDone = !(pod.spec.initContainers ?? []).length
    this.volumes = new PodVolumes(ctx.client, () => this.podView(), join(this.dir, 'volumes'), () => new ObjectReader(ctx.client, namespace), ctx.log)
  }

  private get key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`
  }

  private get apiPath(): string {
    return `/api/v1/namespaces/${this.pod.metadata.namespace}/pods/${this.pod.metadata.name}`
  }

  private get stopping(): boolean {
    return this.stopCtl.signal.aborted
  }

  /** the pod as the downward API sees it: with the IPs this node gave it */
  private podView(): Obj {
    return { ...this.pod, status: { ...this.pod.status, hostIP: this.ctx.net.hostIp, podIP: this.ip, podIPs: this.ip ? [{ ip: this.ip }] : [] } }
  }

  private get hostname(): string {
    return (this.pod.spec.hostname ?? this.pod.metadata.name).slice(0, 63)
  }

  info(): PodInfo {
    return {
      namespace: this.pod.metadata.namespace, name: this.pod.metadata.name, uid: this.uid,
      podIP: this.ip, netns: this.netns, phase: this.phase(), fake: this.fake,
      containers: this.ctrs.map((c) => ({ name: c.spec.name, init: c.init, pid: c.running ? c.pid : undefined, restartCount: c.restartCount, ready: c.ready, logFile: c.logFile, state: c.state })),
    }
  }

  runningPids(): number[] {
    return this.ctrs.filter((c) => c.running && c.pid).map((c) => c.pid!)
  }

  /** a newer version of the object */
  update(pod: Obj): void {
    this.pod = pod
    if (pod.metadata.deletionTimestamp) void this.terminate()
    else if (pod.spec.readinessGates?.length) this.requestStatus()
  }

  // ---- lifecycle ----------------------------------------------------------------------

  async run(): Promise<void> {
    const phase = this.pod.status?.phase
    if (phase === 'Succeeded' || phase === 'Failed') {
      // finished before this node (re)started: nothing to run, only its deletion to honour
      this.finished = true
      this.stopCtl.abort()
      if (this.pod.metadata.deletionTimestamp) void this.terminate()
      return
    }
    if (this.pod.metadata.deletionTimestamp) return void this.terminate()
    this.startTime = this.pod.status?.startTime ?? now()
    this.requestStatus()
    try {
      const fakeImage = this.ctx.fake && ['browser-pod', 'browser-pod-cloak'].includes(imageName(this.pod.spec.containers[0]?.image ?? ''))
      if (fakeImage) return await this.runFake()
      await this.retry('sandbox', () => (this.setup = this.createSandbox()))
      await this.retry('volumes', () => this.volumes.prepare())
      for (const c of this.ctrs.filter((x) => x.init)) {
        const exit = await this.containerLoop(c)
        if (exit === undefined) return
        if (exit.code !== 0) return this.finish()
      }
      this.initDone = true
      for (const c of this.ctrs) if (!c.init && !c.ran) c.state = waiting('ContainerCreating')
      this.requestStatus()
      await Promise.all(this.ctrs.filter((x) => !x.init).map((c) => this.containerLoop(c)))
      if (!this.stopping) this.finish()
    } catch (e) {
      if (!this.stopping) this.ctx.log(`pod ${this.key}: ${(e as Error).stack}`)
    }
  }

  /** retries a setup step (sandbox, volumes) until it works or the pod goes away */
  private async retry(what: string, step: () => Promise<void>): Promise<void> {
    let delay = 500
    for (;;) {
      if (this.stopping) throw new Error('stopping')
      try {
        return await step()
      } catch (e) {
        const msg = (e as Error).message
        if (!(e instanceof MountError)) this.ctx.log(`pod ${this.key}: ${what}: ${msg}`)
        for (const c of this.ctrs) if (!c.ran) c.state = waiting('ContainerCreating', `${what}: ${msg}`)
        this.requestStatus()
        await sleep(delay, this.stopCtl.signal)
        delay = Math.min(delay * 2, 5000)
      }
    }
  }

  /** the pod reached Succeeded or Failed: nothing runs any more, the sandbox goes */
  private finish(): void {
    if (this.finished) return
    this.finished = true
    this.stopCtl.abort()
    this.requestStatus()
    void this.teardown(false)
  }

  /** deletionTimestamp set: graceful stop, then the final delete of the object */
  async terminate(): Promise<void> {
    if (this.terminating) return
    this.terminating = true
    this.stopCtl.abort()
    const meta = this.pod.metadata
    const grace = meta.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30
    await Promise.all(this.ctrs.map((c) => this.kill(c, grace)))
    if (!this.gone) {
      this.requestStatus()
      await this.statusChain
    }
    await this.teardown(true)
    if (!this.gone) {
      await this.ctx.client.delete(this.apiPath, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: this.uid } })
        .catch((e) => { if (!(e instanceof ApiError && (e.status === 404 || e.status === 409))) this.ctx.log(`pod ${this.key}: final delete: ${e.message}`) })
    }
    this.ctx.forget(this)
  }

  /** the object vanished (force delete) or the node stops: kill at once, clean up, no API calls */
  async vanish(): Promise<void> {
    this.gone = true
    clearTimeout(this.statusRetry)
    this.terminating = true
    this.stopCtl.abort()
    await Promise.all(this.ctrs.map((c) => this.kill(c, 0)))
    await this.teardown(true)
    this.ctx.forget(this)
  }

  private async teardown(all: boolean): Promise<void> {
    if (!this.torndown) {
      this.torndown = true
      await this.setup.catch(() => {})
      this.volumes.stop()
      if (this.fake && this.ip) await this.ctx.fake!.remove(this.ip)
      if (this.hostsFile) this.ctx.services.unregisterHosts(this.hostsFile)
      if (this.netns) {
        // processes that left their container's process group (setsid, daemonising helpers)
        // are still in the pod's network namespace: without cgroups, that is how to find them
        const left = await run(BIN.ip, ['netns', 'pids', this.netns]).then((r) => r.stdout.split('\n').filter(Boolean).map(Number)).catch(() => [] as number[])
        for (const pid of left) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
        await run('ip', ['netns', 'del', this.netns]).catch((e) => this.ctx.log(`netns ${this.netns}: ${e.message}`))
        rmSync(join('/etc/netns', this.netns), { recursive: true, force: true })
      }
      if (this.ip && !this.pod.spec.hostNetwork) this.ctx.releaseIp(this.ip)
    }
    if (all) rmSync(this.dir, { recursive: true, force: true })
  }

  // ---- sandbox ------------------------------------------------------------------------

  private async createSandbox(): Promise<void> {
    if (this.pod.spec.hostNetwork) {
      this.ip = this.ctx.net.hostIp
      return
    }
    const { netns, veth } = this.ctx.sandboxNames()
    const ip = this.ctx.allocateIp()
    const net = this.ctx.net
    try {
      await run('ip', ['netns', 'add', netns])
      this.netns = netns
      await run('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns])
      await run('ip', ['link', 'set', veth, 'master', net.bridge, 'up'])
      const inNs = (...a: string[]) => run('ip', ['-n', netns, ...a])
      await inNs('addr', 'add', `${ip}/${net.prefix}`, 'dev', 'eth0')
      await inNs('link', 'set', 'lo', 'up')
      await inNs('link', 'set', 'eth0', 'up')
      await inNs('route', 'add', 'default', 'via', net.hostIp)
    } catch (e) {
      if (this.netns) await run('ip', ['netns', 'del', netns]).catch(() => {})
      this.netns = undefined
      this.ctx.releaseIp(ip)
      throw e
    }
    this.ip = ip
    this.veth = veth
    // `ip netns exec` binds every file of /etc/netns/<netns>/ over its /etc namesake
    const etc = join('/etc/netns', netns)
    mkdirSync(etc, { recursive: true })
    this.hostsFile = join(etc, 'hosts')
    writeFileSync(this.hostsFile, '')
    // no nameserver reachable: lookups of unknown names fail at once instead of timing out
    writeFileSync(join(etc, 'resolv.conf'), 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n')
    const sub = this.pod.spec.subdomain
    const fqdn = sub ? `${this.hostname}.${sub}.${this.pod.metadata.namespace}.svc.cluster.local ` : ''
    const own = [`${ip}\t${fqdn}${this.hostname}`]
    for (const a of this.pod.spec.hostAliases ?? []) own.push(`${a.ip}\t${(a.hostnames ?? []).join(' ')}`)
    this.ctx.services.registerHosts({ namespace: this.pod.metadata.namespace, file: this.hostsFile, own })
    this.requestStatus()
  }

  // ---- containers ---------------------------------------------------------------------

  /** runs a container until it will not run again; its last exit, or undefined when stopped */
  private async containerLoop(c: Ctr): Promise<Exit | undefined> {
    let retryMs = 500
    const policy = this.pod.spec.restartPolicy ?? 'Always'
    for (;;) {
      if (this.stopping) return undefined
      let prepared: Prepared
      try {
        prepared = await this.prepare(c)
      } catch (e) {
        if (e instanceof ImageError) c.state = waiting(c.state.waiting?.reason === 'ErrImagePull' ? 'ImagePullBackOff' : 'ErrImagePull', e.message)
        else if (e instanceof ConfigError || e instanceof MountError) c.state = waiting('CreateContainerConfigError', e.message)
        else { c.state = waiting('CreateContainerError', (e as Error).message); this.ctx.log(`pod ${this.key} container ${c.spec.name}: ${(e as Error).stack}`) }
        this.requestStatus()
        await sleep(retryMs, this.stopCtl.signal)
        retryMs = Math.min(retryMs * 2, 4000)
        continue
      }
      retryMs = 500
      if (this.stopping) return undefined
      if (c.ran) c.restartCount++
      const startedAt = Date.now()
      this.start(c, prepared)
      const exit = await c.exited!
      const ranMs = Date.now() - startedAt
      if (this.stopping) return undefined
      const restart = c.init ? exit.code !== 0 && policy !== 'Never'
        : policy === 'Always' || (policy === 'OnFailure' && exit.code !== 0)
      if (!restart) return exit
      // the kubelet's crash-loop back-off, on a test-sized scale (see TestNodeOptions.restartBackoff)
      if (ranMs > 2 * this.ctx.backoff.maxMs) c.nextBackoffMs = this.ctx.backoff.initialMs
      const delay = c.nextBackoffMs
      c.nextBackoffMs = Math.min(delay * 2, this.ctx.backoff.maxMs)
      c.lastState = c.state
      c.state = waiting('CrashLoopBackOff', `back-off ${Math.round(delay / 1000)}s restarting failed container=${c.spec.name} pod=${this.pod.metadata.name}_${this.pod.metadata.namespace}(${this.uid})`)
      this.requestStatus()
      await sleep(delay, this.stopCtl.signal)
    }
  }

  /** image, environment, argv and user of a container start; throws the kubelet's waiting reasons */
  private async prepare(c: Ctr): Promise<Prepared> {
    const image = resolveImage(this.ctx.repoRoot, c.spec.image)
    c.imageID = `testnode://${image.dockerfile.slice(this.ctx.repoRoot.length).replace(/^\//, '')}@sha256:${image.digest}`
    const pod = this.podView()
    const env = await containerEnv({ pod, container: c.spec, reader: new ObjectReader(this.ctx.client, pod.metadata.namespace), services: this.ctx.services.allServices() })
    const lookup = (n: string) => env[n]
    const argv = containerArgv(image, c.spec.command?.map((s: string) => expand(s, lookup)), c.spec.args?.map((s: string) => expand(s, lookup)))
    if (!argv.length) throw new ConfigError('no command specified')
    if (argv[0] === 'node') argv[0] = process.execPath

    const psc = pod.spec.securityContext ?? {}
    const sc = c.spec.securityContext ?? {}
    const uid: number = sc.runAsUser ?? psc.runAsUser ?? image.user?.uid ?? 0
    const gid: number = sc.runAsGroup ?? psc.runAsGroup ?? image.user?.gid ?? 0
    if ((sc.runAsNonRoot ?? psc.runAsNonRoot) && uid === 0) {
      throw new ConfigError(`container has runAsNonRoot and image will run as root (pod: "${pod.metadata.name}_${pod.metadata.namespace}(${this.uid})", container: ${c.spec.name})`)
    }
    const groups = [...new Set<number>([...(psc.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc.supplementalGroups ?? [])])]
    const priv = [`--reuid=${uid}`, `--regid=${gid}`, groups.length ? `--groups=${groups.join(',')}` : '--clear-groups']
    if (sc.allowPrivilegeEscalation === false) priv.push('--no-new-privs')
    if ((sc.capabilities?.drop ?? []).some((d: string) => d.toUpperCase() === 'ALL')) priv.push('--inh-caps=-all', '--bounding-set=-all')
    priv.unshift(BIN.setpriv)
    priv.push('--')

    const imageEnv = Object.fromEntries(image.env)
    const full: Record<string, string> = {
      PATH: DEFAULT_PATH,
      ...imageEnv,
      HOSTNAME: this.hostname,
      HOME: imageEnv.HOME ?? (uid === 0 ? '/root' : '/'),
      ...env,
    }
    const wdRaw: string = c.spec.workingDir || image.workdir
    const inApp = wdRaw === '/app' || wdRaw.startsWith('/app/')
    const wd = inApp ? join(APP_DIR, wdRaw.slice(4)) : wdRaw
    if (!existsSync(wd)) mkdirSync(wd, { recursive: true })
    // The working tree is every image's /app. It is bound at APP_DIR inside the container,
    // not used where it lies: a clone under /tmp would vanish beneath a /tmp emptyDir. It
    // is mounted last, so no volume can hide it.
    const app = inApp ? [{ src: this.ctx.repoRoot, dst: APP_DIR, ro: true }] : []
    return { image, argv, env: full, priv, wd, ro: sc.readOnlyRootFilesystem === true, mounts: [...this.mounts(c, env), ...app] }
  }

  private mounts(c: Ctr, env: Record<string, string>): { src: string; dst: string; ro: boolean }[] {
    const out: { src: string; dst: string; ro: boolean }[] = []
    for (const m of c.spec.volumeMounts ?? []) {
      const base = this.volumes.paths.get(m.name)
      if (!base) throw new MountError(`volumeMount ${m.name}: no such volume`)
      const sub: string = m.subPath ?? (m.subPathExpr ? expand(m.subPathExpr, (n) => env[n]) : '')
      if (sub.split('/').includes('..') || sub.startsWith('/')) throw new MountError(`subPath ${sub} escapes the volume`)
      const src = sub ? join(base, sub) : base
      if (sub && !existsSync(src)) mkdirSync(src, { recursive: true, mode: 0o777 })
      // like the kubelet, Secret, ConfigMap, downward-API and projected volumes are always read-only
      const v = (this.pod.spec.volumes ?? []).find((x: Obj) => x.name === m.name) ?? {}
      out.push({ src, dst: m.mountPath, ro: m.readOnly === true || !!(v.secret || v.configMap || v.downwardAPI || v.projected) })
    }
    // parents before children, as container runtimes mount them
    return out.sort((a, b) => a.dst.split('/').length - b.dst.split('/').length)
  }

  private start(c: Ctr, p: Prepared): void {
    const mounts = p.mounts
    const init = [
      this.netns ? this.hostname : '', p.ro ? '1' : '0', p.wd, String(mounts.length),
      ...mounts.flatMap((m) => [m.src, m.dst, m.ro ? '1' : '0']),
      String(p.priv.length), ...p.priv, ...p.argv,
    ]
    const cmd = this.netns
      ? [BIN.ip, 'netns', 'exec', this.netns, BIN.unshare, '--uts', '--', BIN.bash, '-c', CONTAINER_INIT, 'container-init', ...init]
      : [BIN.unshare, '--mount', '--propagation', 'slave', '--', BIN.bash, '-c', CONTAINER_INIT, 'container-init', ...init]
    mkdirSync(this.ctx.logDir, { recursive: true })
    const fd = openSync(c.logFile, 'a')
    let child: ChildProcess
    try {
      // detached: the container is a process group of its own, signalled as a whole
      child = spawn(cmd[0], cmd.slice(1), { cwd: p.wd, env: p.env, stdio: ['ignore', fd, fd], detached: true })
    } finally {
      closeSync(fd)
    }
    c.child = child
    c.pid = child.pid
    c.env = p.env
    c.priv = p.priv
    c.wd = p.wd
    c.running = true
    c.ran = true
    c.containerID = `testnode://${child.pid}`
    const startedAt = now()
    c.state = { running: { startedAt } }
    c.ready = false
    c.started = !c.spec.startupProbe
    c.exited = new Promise<Exit>((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!c.running || c.child !== child) return
        c.running = false
        c.probes?.abort()
        // PID 1 gone takes the whole container with it
        if (child.pid) try { process.kill(-child.pid, 'SIGKILL') } catch { /* group already empty */ }
        const exitCode = code ?? 128 + (signal ? constants.signals[signal] ?? 0 : 0)
        c.ready = false
        c.state = {
          terminated: {
            exitCode, ...(signal ? { signal: constants.signals[signal] } : {}),
            reason: exitCode === 0 ? 'Completed' : 'Error',
            startedAt, finishedAt: now(), containerID: c.containerID,
          },
        }
        if (c.init && exitCode === 0) c.ready = true
        this.ctx.pidsChanged()
        this.requestStatus()
        resolve({ code: exitCode, signal: signal ?? undefined })
      }
      child.once('exit', done)
      child.once('error', (e) => { this.ctx.log(`pod ${this.key} container ${c.spec.name}: ${e.message}`); done(128, null) })
    })
    this.ctx.pidsChanged()
    if (!c.init) this.startProbes(c)
    this.requestStatus()
  }

  /** SIGTERM to the container's process group, SIGKILL after the grace period */
  private async kill(c: Ctr, graceSeconds: number): Promise<void> {
    if (!c.running || !c.pid) return
    const pid = c.pid
    try { process.kill(-pid, graceSeconds > 0 ? 'SIGTERM' : 'SIGKILL') } catch { /* exited meanwhile */ }
    if (graceSeconds > 0) {
      const timedOut = await Promise.race([c.exited!.then(() => false), sleep(graceSeconds * 1000).then(() => true)])
      if (timedOut) try { process.kill(-pid, 'SIGKILL') } catch { /* exited meanwhile */ }
    }
    await c.exited
  }

  /** the control API's crash: a signal to the container's main process only */
  signal(container: string, sig: NodeJS.Signals): number | undefined {
    const c = this.ctrs.find((x) => x.spec.name === container && x.running)
    if (!c?.pid) return undefined
    process.kill(c.pid, sig)
    return c.pid
  }

  // ---- probes -------------------------------------------------------------------------

  private startProbes(c: Ctr): void {
    const ctl = new AbortController()
    c.probes = ctl
    const s = c.spec
    const afterStart = () => {
      if (s.livenessProbe) void this.probeLoop(c, 'Liveness', s.livenessProbe, ctl.signal)
      if (s.readinessProbe) void this.probeLoop(c, 'Readiness', s.readinessProbe, ctl.signal)
      else { c.ready = true; this.requestStatus() }
    }
    if (s.startupProbe) void this.probeLoop(c, 'Startup', s.startupProbe, ctl.signal, afterStart)
    else afterStart()
  }

  private async probeLoop(c: Ctr, kind: 'Startup' | 'Liveness' | 'Readiness', p: Obj, signal: AbortSignal, onStarted?: () => void): Promise<void> {
    const period = (p.periodSeconds ?? 10) * 1000
    const successThreshold = kind === 'Readiness' ? p.successThreshold ?? 1 : 1
    const failureThreshold = p.failureThreshold ?? 3
    await sleep((p.initialDelaySeconds ?? 0) * 1000, signal)
    let ok = 0
    let bad = 0
    while (!signal.aborted) {
      const t0 = Date.now()
      const result = await this.probe(c, p).catch(() => false)
      if (signal.aborted) return
      if (result) { ok++; bad = 0 } else { bad++; ok = 0 }
      if (kind === 'Startup') {
        if (ok >= 1) { c.started = true; this.requestStatus(); onStarted?.(); return }
        if (bad >= failureThreshold) return void this.probeKill(c, 'Startup')
      } else if (kind === 'Liveness') {
        if (bad >= failureThreshold) return void this.probeKill(c, 'Liveness')
      } else {
        const ready = ok >= successThreshold ? true : bad >= failureThreshold ? false : c.ready
        if (ready !== c.ready) { c.ready = ready; this.requestStatus() }
      }
      await sleep(Math.max(0, period - (Date.now() - t0)), signal)
    }
  }

  /** a failed liveness or startup probe: the kubelet kills the container; restartPolicy decides the rest */
  private async probeKill(c: Ctr, kind: string): Promise<void> {
    this.ctx.log(`pod ${this.key} container ${c.spec.name}: ${kind} probe failed, killing`)
    c.probes?.abort()
    await this.kill(c, this.pod.spec.terminationGracePeriodSeconds ?? 30)
  }

  private probe(c: Ctr, p: Obj): Promise<boolean> {
    const timeoutMs = (p.timeoutSeconds ?? 1) * 1000
    const port = (v: number | string): number => {
      if (typeof v === 'number') return v
      if (/^\d+$/.test(v)) return Number(v)
      const found = (c.spec.ports ?? []).find((x: Obj) => x.name === v)
      if (!found) throw new Error(`no port named ${v}`)
      return found.containerPort
    }
    if (p.httpGet) {
      const g = p.httpGet
      const https = String(g.scheme ?? 'HTTP').toUpperCase() === 'HTTPS'
      const headers: Record<string, string> = { 'user-agent': 'kube-probe/1.20', accept: '*/*' }
      for (const h of g.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value
      return new Promise((resolve) => {
        const req = (https ? httpsRequest : httpRequest)({
          host: g.host || this.ip, port: port(g.port), path: g.path ?? '/', method: 'GET', headers,
          timeout: timeoutMs, agent: false, ...(https ? { rejectUnauthorized: false } : {}),
        }, (res) => {
          res.resume()
          const s = res.statusCode ?? 0
          resolve(s >= 200 && s < 400)
        })
        req.on('timeout', () => req.destroy())
        req.on('error', () => resolve(false))
        req.end()
      })
    }
    if (p.tcpSocket) {
      return new Promise((resolve) => {
        const s = connect({ host: p.tcpSocket.host || this.ip, port: port(p.tcpSocket.port), timeout: timeoutMs })
        s.once('connect', () => { s.destroy(); resolve(true) })
        s.once('timeout', () => { s.destroy(); resolve(false) })
        s.once('error', () => resolve(false))
      })
    }
    if (p.exec) {
      // in the container's namespaces, as its user, with its environment
      if (!c.pid) return Promise.resolve(false)
      const ns = this.netns ? ['-n', '-u'] : []
      const args = ['-t', String(c.pid), '-m', ...ns, `--wdns=${c.wd}`, '--', ...c.priv!, ...p.exec.command]
      return new Promise((resolve) => {
        const child = spawn(BIN.nsenter, args, { env: c.env, stdio: 'ignore' })
        const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
        child.once('exit', (code) => { clearTimeout(t); resolve(code === 0) })
        child.once('error', () => { clearTimeout(t); resolve(false) })
      })
    }
    return Promise.resolve(true) // grpc probes are 1.23+; nothing else to run
  }

  // ---- fakeBrowsers -------------------------------------------------------------------

  /** a browser pod with no process: the node's own HTTP server answers on its IP */
  private async runFake(): Promise<void> {
    this.fake = true
    const c = this.ctrs.find((x) => !x.init)!
    let delay = 500
    for (;;) {
      if (this.stopping) return
      try {
        const env = await containerEnv({ pod: this.podView(), container: c.spec, reader: new ObjectReader(this.ctx.client, this.pod.metadata.namespace), services: [] })
        const token = env.NIGHTJAR_POD_TOKEN
        if (!token) throw new ConfigError('NIGHTJAR_POD_TOKEN is not set')
        const named = (c.spec.ports ?? []).find((p: Obj) => p.name === 'node-api') ?? c.spec.ports?.[0]
        const port = Number(env.NIGHTJAR_POD_PORT ?? named?.containerPort ?? 8090)
        this.setup = (async () => {
          const ip = this.ctx.allocateIp()
          try {
            await this.ctx.fake!.add(ip, port, token)
          } catch (e) {
            this.ctx.releaseIp(ip)
            throw e
          }
          this.ip = ip
        })()
        await this.setup
        break
      } catch (e) {
        c.state = waiting(e instanceof ConfigError ? 'CreateContainerConfigError' : 'CreateContainerError', (e as Error).message)
        this.requestStatus()
        await sleep(delay, this.stopCtl.signal)
        delay = Math.min(delay * 2, 4000)
      }
    }
    if (this.stopping) {
      await this.teardown(false)
      return
    }
    for (const x of this.ctrs) {
      x.running = false
      x.ran = true
      x.started = true
      x.ready = true
      x.containerID = `testnode://fake-${this.ip}`
      x.imageID = 'testnode://fake-browser-pod'
      x.state = x.init ? { terminated: { exitCode: 0, reason: 'Completed', startedAt: now(), finishedAt: now() } } : { running: { startedAt: now() } }
    }
    this.initDone = true
    this.requestStatus()
  }

  // ---- status -------------------------------------------------------------------------

  private phase(): string {
    const policy = this.pod.spec.restartPolicy ?? 'Always'
    const inits = this.ctrs.filter((c) => c.init)
    const apps = this.ctrs.filter((c) => !c.init)
    if (this.fake) return this.ip ? 'Running' : 'Pending'
    if (!this.initDone) {
      const failed = inits.some((c) => (c.state.terminated?.exitCode ?? 0) !== 0)
      return failed && policy === 'Never' ? 'Failed' : 'Pending'
    }
    if (apps.some((c) => !c.ran)) return 'Pending'
    if (apps.some((c) => c.running)) return 'Running'
    // every container has exited; are any of them coming back?
    const codes = apps.map((c) => c.state.terminated?.exitCode ?? c.lastState.terminated?.exitCode ?? 0)
    if (policy === 'Always' && !this.finished) return 'Running'
    if (policy === 'OnFailure' && codes.some((x) => x !== 0) && !this.finished) return 'Running'
    if (!this.finished && apps.some((c) => c.state.waiting)) return 'Running'
    return codes.every((x) => x === 0) ? 'Succeeded' : 'Failed'
  }

  private condition(type: string, ok: boolean, reason?: string, message?: string): Obj {
    const status = ok ? 'True' : 'False'
    let t = this.transitions.get(type)
    if (!t || t.status !== status) {
      t = { status, at: now() }
      this.transitions.set(type, t)
    }
    // null, not absent: a strategic merge patch keeps fields it is not told to delete
    return { type, status, lastProbeTime: null, lastTransitionTime: t.at, reason: (!ok && reason) || null, message: (!ok && message) || null }
  }

  private buildStatus(): Obj {
    const phase = this.phase()
    const terminal = phase === 'Succeeded' || phase === 'Failed'
    const inits = this.ctrs.filter((c) => c.init)
    const apps = this.ctrs.filter((c) => !c.init)
    const status = (c: Ctr): Obj => ({
      name: c.spec.name, image: c.spec.image, imageID: c.imageID ?? '',
      ...(c.containerID ? { containerID: c.containerID } : {}),
      ready: c.ready, restartCount: c.restartCount,
      ...(c.init ? {} : { started: c.started && c.running }),
      state: c.state, lastState: c.lastState,
    })
    const unInit = inits.filter((c) => !(c.state.terminated?.exitCode === 0)).map((c) => c.spec.name)
    const unready = apps.filter((c) => !c.ready).map((c) => c.spec.name)
    const containersReady = !unready.length && !terminal
    const gates: string[] = (this.pod.spec.readinessGates ?? []).map((g: Obj) => g.conditionType)
    const current: Obj[] = this.pod.status?.conditions ?? []
    const gatesOk = gates.every((g) => current.find((x) => x.type === g)?.status === 'True')
    const initialized = this.initDone || !inits.length
    return {
      phase,
      hostIP: this.ctx.net.hostIp,
      ...(this.ip ? { podIP: this.ip, podIPs: [{ ip: this.ip }] } : {}),
      ...(this.startTime ? { startTime: this.startTime } : {}),
      conditions: [
        this.condition('Initialized', initialized, 'ContainersNotInitialized', `containers with incomplete status: [${unInit.join(' ')}]`),
        this.condition('Ready', containersReady && gatesOk, terminal ? 'PodCompleted' : containersReady ? 'ReadinessGatesNotReady' : 'ContainersNotReady',
          containersReady ? `corresponding condition of pod readiness gate not ready` : `containers with unready status: [${unready.join(' ')}]`),
        this.condition('ContainersReady', containersReady, terminal ? 'PodCompleted' : 'ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`),
        this.condition('PodScheduled', true),
      ],
      ...(inits.length ? { initContainerStatuses: inits.map(status) } : {}),
      containerStatuses: apps.map(status),
    }
  }

  /** sends the pod's current status soon; one patch in flight per pod, the newest state wins */
  requestStatus(): void {
    if (this.statusPending || this.gone) return
    this.statusPending = true
    this.statusChain = this.statusChain.then(() => this.ctx.statusQueue.run(async () => {
      this.statusPending = false
      if (this.gone) return
      const status = this.buildStatus()
      const text = JSON.stringify(status)
      if (text === this.lastSent) return
      try {
        await this.ctx.client.request('PATCH', `${this.apiPath}/status`, { status }, 'application/strategic-merge-patch+json')
        this.lastSent = text
        this.statusFailures = 0
      } catch (e) {
        if (this.gone || (e instanceof ApiError && e.status === 404)) return
        // one line per outage, and one retry timer however many changes queue up behind it
        if (this.statusFailures++ === 0) this.ctx.log(`pod ${this.key}: status: ${(e as Error).message} (retrying)`)
        if (!this.statusRetry) {
          this.statusRetry = setTimeout(() => { this.statusRetry = undefined; this.requestStatus() }, Math.min(500 * 2 ** this.statusFailures, 8000))
          this.statusRetry.unref()
        }
      }
    }))
  }
}
