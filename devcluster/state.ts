// Where the development cluster lives on this machine, and what a running one wrote down
// for `up`, `status` and the node tests (state.json, once it is ready).
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url))
export const KUBECTL = join(REPO_ROOT, '.tools', 'kubectl')
/** one cluster per machine; under /run, so a reboot forgets it as it forgets the processes */
export const RUN_DIR = process.env.NIGHTJAR_CLUSTER_DIR || '/run/nightjar-cluster'
/** containerd's image store: kept across `down`/`up`, so `up` need not import again */
export const CONTAINERD_ROOT = join(process.env.NIGHTJAR_IMAGES_CACHE || join(homedir(), '.cache', 'nightjar', 'images'), 'containerd')
export const STATE_FILE = join(RUN_DIR, 'state.json')
/** the supervisor's pid, written as soon as it starts (state.json only once it is ready) */
export const SUPERVISOR_PID_FILE = join(RUN_DIR, 'supervisor.pid')
/** every program the supervisor started, for the sweep after a supervisor that died */
export const PIDS_FILE = join(RUN_DIR, 'pids')
export const NODE_NAME = 'nightjar-node'
/** `up --nodes N` runs nodes 1..N on this machine: nightjar-node, nightjar-node-2, … */
export const MAX_NODES = 8
export const nodeName = (index: number) => (index === 1 ? NODE_NAME : `${NODE_NAME}-${index}`)
/** where the control socket lies: `node-stop` and `node-start` ask the supervisor through it */
export const CONTROL_SOCKET = join(RUN_DIR, 'control.sock')
/** the sandbox image: the Kubernetes tree's build/pause, imported by images.ts */
export const PAUSE_REF = 'localhost/nightjar-pause:3.4'
/**
 * The kubelet's seccomp root is the one a packaged kubelet uses, whatever its --root-dir, so the
 * chart's profile installer (browserPods.seccompProfile.installer.hostPath) works with its
 * default; `down` removes what was written there.
 */
export const SECCOMP_ROOT = '/var/lib/kubelet/seccomp'

export interface State {
  supervisorPid: number
  kubeconfig: string
  databaseUrl: string
  apiUrl: string
  bridge: string
  hostIp: string
  podCidr: string
  serviceCidr: string
  /** the first node's (nodes[0].containerdSocket) */
  containerdSocket: string
  images: Record<string, string>
  /** every node, the first first (absent from a state.json written before there could be more: see nodesOf) */
  nodes?: NodeInfo[]
  /** the simulated fleet (fleet/fleet.ts): its nodes, none when not asked for */
  simulatedNodes?: SimulatedNodeInfo[]
  /** the addresses its hollow pods listen at */
  fleetCidr?: string
}

/** one simulated node as `status` sees it */
export interface SimulatedNodeInfo {
  name: string
  podCidr: string
  stopped: boolean
}

/** one node as `status` and the node tests see it */
export interface NodeInfo {
  name: string
  /** its own address on the bridge: its kubelet listens there, the Node's InternalIP */
  ip: string
  /** the pod addresses its CNI hands out, first-last */
  podRange: string
  containerdSocket: string
  /** containerd's image store, kept across `down`/`up` (one per node: a store has one owner) */
  containerdRoot: string
  /** the kubelet's cgroup root: its kubepods cgroup is below it */
  cgroupRoot: string
  /** where its containers' log files are, seen from the machine (its /var/log/pods) */
  podLogDir: string
  /** taken down by `node-stop` (until `node-start`) */
  stopped: boolean
}

export function readState(): State | undefined {
  try {
    return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as State
  } catch {
    return undefined
  }
}

/** the nodes of a running cluster */
export function nodesOf(s: State): NodeInfo[] {
  return s.nodes ?? [{ name: NODE_NAME, ip: s.hostIp, podRange: s.podCidr, containerdSocket: s.containerdSocket, containerdRoot: CONTAINERD_ROOT, cgroupRoot: '/', podLogDir: '/var/log/pods', stopped: false }]
}
