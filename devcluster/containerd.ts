// containerd 1.6 + runc (Debian's) for the kubelet, with Pods on the cluster bridge through
// the CNI bridge, host-local and portmap plugins (Debian's containernetworking-plugins), and,
// when its shim was built, gVisor as the `runsc` runtime handler for
// browserPods.runtimeClassName. Its image store (one per node) outlives the cluster.
import { spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ClusterNetwork, podCidr } from './network.ts'
import { exitNote, type Supervision, waitFor } from './processes.ts'
import { PAUSE_REF } from './state.ts'

/** the RuntimeClass handler name gVisor's Pods ask for */
export const RUNSC_HANDLER = 'runsc'

export interface ContainerdOptions {
  /** its config, CNI config, state and socket go here */
  dir: string
  network: ClusterNetwork
  /**
   * containerd-shim-runsc-v1 built by scripts/fetch-gvisor-shim.mjs, or '' for a node
   * without gVisor (runc's own shim with runsc as its binary never answers Start)
   */
  gvisorShim: string
  /** its image store (a store has one containerd) */
  root: string
  /** the pod addresses its CNI hands out (network.ts podRange) */
  podRange: { start: string; end?: string }
}

/** a configured containerd: launch() starts it (again after a node-stop) and resolves once it answers */
export interface Containerd {
  socket: string
  /** wrap: a command that runs containerd's command line (a mount namespace of its own) */
  launch(name: string, wrap?: string[]): Promise<ChildProcess>
}

/** writes containerd's config (and its CNI's) for one node */
export function configureContainerd(sv: Supervision, opts: ContainerdOptions): Containerd {
  const { dir: cd, network, gvisorShim } = opts
  mkdirSync(join(cd, 'cni'), { recursive: true })
  mkdirSync(opts.root, { recursive: true })
  const socket = join(cd, 'containerd.sock')
  writeFileSync(join(cd, 'cni', '10-nightjar.conflist'), JSON.stringify({
    cniVersion: '0.4.0',
    name: 'nightjar',
    plugins: [
      {
        type: 'bridge', bridge: network.bridge, isGateway: true, ipMasq: false, hairpinMode: true,
        ipam: { type: 'host-local', dataDir: join(cd, 'ipam'), ranges: [[{ subnet: podCidr(network), rangeStart: opts.podRange.start, ...(opts.podRange.end ? { rangeEnd: opts.podRange.end } : {}), gateway: network.hostIp }]], routes: [{ dst: '0.0.0.0/0' }] },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  }, null, 2))
  // the shim is found on containerd's PATH by its name; its options file says which runsc
  // runs and how: ptrace needs no KVM, and the host network stack is the pod's namespace
  const shimDir = join(cd, 'bin')
  mkdirSync(shimDir, { recursive: true })
  if (gvisorShim) {
    rmSync(join(shimDir, 'containerd-shim-runsc-v1'), { force: true })
    symlinkSync(gvisorShim, join(shimDir, 'containerd-shim-runsc-v1'))
    writeFileSync(join(cd, 'runsc.toml'), ['binary_name = "/usr/bin/runsc"', `log_path = "${join(sv.logs, 'runsc-shim-%ID%.log')}"`, '[runsc_config]', '  platform = "ptrace"', '  network = "host"', ''].join('\n'))
  }
  writeFileSync(join(cd, 'config.toml'), [
    'version = 2',
    `root = "${opts.root}"`,
    `state = "${join(cd, 'state')}"`,
    '[grpc]',
    `  address = "${socket}"`,
    '[ttrpc]',
    `  address = "${socket}.ttrpc"`,
    '[plugins."io.containerd.grpc.v1.cri"]',
    `  sandbox_image = "${PAUSE_REF}"`,
    // root here lacks CAP_SYS_RESOURCE: without this every sandbox fails to start
    '  restrict_oom_score_adj = true',
    '  [plugins."io.containerd.grpc.v1.cri".containerd]',
    '    snapshotter = "overlayfs"',
    '    default_runtime_name = "runc"',
    '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '      runtime_type = "io.containerd.runc.v2"',
    ...(gvisorShim ? [
      `    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${RUNSC_HANDLER}]`,
      '      runtime_type = "io.containerd.runsc.v1"',
      `    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${RUNSC_HANDLER}.options]`,
      '      TypeUrl = "io.containerd.runsc.v1.options"',
      `      ConfigPath = "${join(cd, 'runsc.toml')}"`,
    ] : []),
    '  [plugins."io.containerd.grpc.v1.cri".cni]',
    '    bin_dir = "/usr/lib/cni"',
    `    conf_dir = "${join(cd, 'cni')}"`,
    '',
  ].join('\n'))
  const env = { PATH: `${shimDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` }
  return {
    socket,
    async launch(name, wrap = []) {
      const argv = [...wrap, 'containerd', '--config', join(cd, 'config.toml')]
      rmSync(socket, { force: true }) // a killed containerd leaves it: wait for the new one's
      const containerd = sv.launch(argv[0], argv.slice(1), name, env)
      await waitFor(name, 30_000, async () => existsSync(socket) && spawnSync('ctr', ['--address', socket, 'version'], { stdio: 'ignore' }).status === 0, exitNote(containerd, name, join(sv.logs, `${name}.log`)))
      sv.log(`${name} up`)
      return containerd
    },
  }
}
