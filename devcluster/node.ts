// One node of the development cluster: its containerd and kubelet, and what `node-stop` and
// `node-start` do to it. The first node is the single-node cluster's, as it always was; each
// further one has its own containerd (root, state, socket), kubelet root, address, pod range
// and cgroup root, and runs in a mount namespace of its own where /var/log/pods,
// /var/log/containers and the device-plugin directory are its own: a kubelet deletes every
// pod log directory of a Pod it does not run. Why, and what node-stop does: docs/cluster.md
import { type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { configureContainerd } from './containerd.ts'
import { configureKubelet, drainPods, nodeReady, restoreSysctls } from './kubelet.ts'
import { addBridgeAddress, type ClusterNetwork, lastAddress, nodeIp, podRange } from './network.ts'
import { exitNote, stopProcess, type Supervision, waitFor } from './processes.ts'
import { CONTAINERD_ROOT, type NodeInfo, nodeName, RUN_DIR } from './state.ts'

const CGROUP_FS = '/sys/fs/cgroup'
const cgroupV2 = () => existsSync(join(CGROUP_FS, 'cgroup.controllers'))
/** the host paths a further node's kubelet and containerd see as their own */
const NODE_PRIVATE_PATHS = ['/var/log/pods', '/var/log/containers', '/var/lib/kubelet/device-plugins']

export interface NodeOptions {
  binDir: string
  kubeconfig: string
  network: ClusterNetwork & { bridge: string }
  gvisorShim: string
  clientCaFile: string
  /** 1..count */
  index: number
  count: number
}

export interface DevNode {
  info: NodeInfo
  /** the kubelet (containerd is up once startNode resolves) */
  startKubelet(): Promise<void>
  /** resolves once the Node is Ready and schedulable */
  ready(): Promise<void>
  /** node-stop: as a machine that failed (kubelet and containerd killed, containers frozen) */
  stop(): Promise<void>
  /** node-start: containers thawed, containerd and kubelet started again; resolves once Ready */
  start(): Promise<void>
  /** every Pod on it deleted through its kubelet (a stopped node has none to go through) */
  drain(): Promise<void>
}

/** starts the node's containerd; registers its teardown (kubelet, then containerd) */
export async function startNode(sv: Supervision, opts: NodeOptions): Promise<DevNode> {
  const { index, network } = opts
  const name = nodeName(index)
  const first = index === 1
  const base = first ? RUN_DIR : join(RUN_DIR, 'nodes', name)
  const range = podRange(network, index, opts.count)
  const info: NodeInfo = {
    name,
    ip: nodeIp(network, index),
    podRange: `${range.start}-${range.end ?? lastAddress(network)}`,
    containerdSocket: '',
    containerdRoot: first ? CONTAINERD_ROOT : `${CONTAINERD_ROOT}-${index}`,
    cgroupRoot: first ? '/' : `/${name}`,
    podLogDir: first ? '/var/log/pods' : ownPath(join(base, 'host'), '/var/log/pods'),
    stopped: false,
  }
  const logName = (program: string) => (first ? program : `${program}-${index}`)
  if (!first) {
    await addBridgeAddress(network, info.ip)
    makeCgroupRoot(info.cgroupRoot)
  }
  const containerd = configureContainerd(sv, { dir: join(base, 'containerd'), network, gvisorShim: opts.gvisorShim, root: info.containerdRoot, podRange: range })
  info.containerdSocket = containerd.socket
  // a further node's programs share a mount namespace, held by a process of its own that
  // node-stop leaves alone: a restarted containerd finds its Pods' network namespaces (bind
  // mounts there) again, so they keep their addresses, as on a machine that hung and came back
  const mounts = first ? undefined : await holdMountNamespace(sv, join(base, 'host'), `mounts-${index}`)
  const wrap = mounts ? ['nsenter', `--target=${mounts.pid}`, '--mount', '--'] : []
  let containerdProc: ChildProcess = await containerd.launch(logName('containerd'), wrap)
  let kubeletProc: ChildProcess | undefined
  const kubelet = await configureKubelet(sv, {
    binDir: opts.binDir, kubeconfig: opts.kubeconfig, network, socket: containerd.socket, clientCaFile: opts.clientCaFile,
    name, ip: info.ip, rootDir: join(base, 'kubelet'), configFile: join(base, 'kubelet.yaml'), cgroupRoot: info.cgroupRoot,
  })
  const launchKubelet = () => {
    launchedAt = Date.now()
    kubeletProc = kubelet.launch(logName('kubelet'), wrap)
  }
  let launchedAt = 0
  const ready = () => nodeReady(opts.kubeconfig, name, kubeletProc!, join(sv.logs, `${logName('kubelet')}.log`), launchedAt)

  sv.onStop(async () => {
    // a stopped node's containers go with `down`'s sweep; thawed, so a kill reaches them
    if (info.stopped) pause(info, false)
    await stopProcess(kubeletProc, 20_000)
    if (first) restoreSysctls() // the first node's teardown runs after every other's
    await stopProcess(containerdProc, 10_000)
    await stopProcess(mounts, 2000)
  })

  return {
    info,
    async startKubelet() { launchKubelet() },
    ready,
    async stop() {
      if (info.stopped) return
      info.stopped = true
      await kill(kubeletProc)
      await kill(containerdProc)
      pause(info, true)
      sv.log(`node-stop ${name}: kubelet and containerd killed, its containers and shims frozen`)
    },
    async start() {
      if (!info.stopped) return
      pause(info, false)
      containerdProc = await containerd.launch(logName('containerd'), wrap)
      launchKubelet()
      info.stopped = false
      await ready()
      sv.log(`node-start ${name}: Ready again`)
    },
    async drain() {
      if (!info.stopped) await drainPods(opts.kubeconfig, name, containerd.socket, sv.log)
    },
  }
}

/** the directory under dir a further node sees at path */
const ownPath = (dir: string, path: string) => join(dir, path.replace(/^\//, '').replaceAll('/', '-'))

/**
 * A process in a new mount namespace (slave to the machine's: its mounts reach in, none go
 * out) where NODE_PRIVATE_PATHS are bind mounts of directories under dir; resolves once they are
 */
async function holdMountNamespace(sv: Supervision, dir: string, name: string): Promise<ChildProcess> {
  const own = NODE_PRIVATE_PATHS.map((p) => ownPath(dir, p))
  for (const d of [...NODE_PRIVATE_PATHS, ...own]) mkdirSync(d, { recursive: true })
  const binds = NODE_PRIVATE_PATHS.map((p, i) => `mount --bind "$${i + 1}" ${p}`).join(' && ')
  const holder = sv.launch('unshare', ['--mount', '--propagation', 'slave', '--', 'sh', '-c', `${binds} && exec sleep infinity`, 'sh', ...own], name)
  await waitFor(`${name}: the mount namespace`, 10_000, async () => readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8').startsWith('sleep'), exitNote(holder, name, join(sv.logs, `${name}.log`)))
  return holder
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  child.kill('SIGKILL')
  await exited
}

/**
 * Freezes (or thaws) the node's containers through the freezer of its kubepods cgroup, and
 * stops (or continues) its containerd shims, which live outside that cgroup: a frozen node
 * answers nothing, yet every process is there to go on where it was.
 */
function pause(info: NodeInfo, frozen: boolean): void {
  const kubepods = join(info.cgroupRoot, 'kubepods')
  if (cgroupV2()) writeIfThere(join(CGROUP_FS, kubepods, 'cgroup.freeze'), frozen ? '1' : '0')
  else writeIfThere(join(CGROUP_FS, 'freezer', kubepods, 'freezer.state'), frozen ? 'FROZEN' : 'THAWED')
  for (const pid of shimsOf(info.containerdSocket)) {
    try { process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT') } catch { /* gone */ }
  }
}

function writeIfThere(file: string, value: string) {
  if (existsSync(file)) writeFileSync(file, value)
}

/** the shims containerd started for this socket (`-address <socket>` on their command line) */
function shimsOf(socket: string): number[] {
  const pids: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const args = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')
      const at = args.indexOf('-address')
      if (/containerd-shim/.test(args[0]) && at > 0 && args[at + 1] === socket) pids.push(Number(d))
    } catch { /* gone */ }
  }
  return pids
}

/** the kubelet's --cgroup-root must exist: in every v1 hierarchy (cpuset's seeded from the root's), or once in v2 */
function makeCgroupRoot(root: string) {
  if (cgroupV2()) {
    mkdirSync(join(CGROUP_FS, root), { recursive: true })
    const controllers = readFileSync(join(CGROUP_FS, 'cgroup.subtree_control'), 'utf8').trim().split(/\s+/).filter(Boolean)
    writeFileSync(join(CGROUP_FS, root, 'cgroup.subtree_control'), controllers.map((c) => `+${c}`).join(' '))
    return
  }
  for (const ctl of readdirSync(CGROUP_FS)) {
    const hierarchy = join(CGROUP_FS, ctl)
    if (!existsSync(join(hierarchy, 'cgroup.procs'))) continue
    mkdirSync(join(hierarchy, root), { recursive: true })
    for (const f of ['cpuset.cpus', 'cpuset.mems']) {
      if (existsSync(join(hierarchy, f))) writeFileSync(join(hierarchy, root, f), readFileSync(join(hierarchy, f), 'utf8').trim())
    }
  }
}
