// containerd 1.6 + runc (Debian's) for the kubelet, with Pods on the cluster bridge through
// the CNI bridge, host-local and portmap plugins (Debian's containernetworking-plugins), and,
// when its shim was built, gVisor as the `runsc` runtime handler for
// browserPods.runtimeClassName. Its image store (CONTAINERD_ROOT) outlives the cluster.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ClusterNetwork, podCidr } from './network.ts'
import { stopProcess, type Supervision, waitFor } from './processes.ts'
import { CONTAINERD_ROOT, PAUSE_REF } from './state.ts'

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
}

/** returns containerd's socket once it answers */
export async function startContainerd(sv: Supervision, opts: ContainerdOptions): Promise<string> {
  const { dir: cd, network, gvisorShim } = opts
  mkdirSync(join(cd, 'cni'), { recursive: true })
  mkdirSync(CONTAINERD_ROOT, { recursive: true })
  const socket = join(cd, 'containerd.sock')
  writeFileSync(join(cd, 'cni', '10-nightjar.conflist'), JSON.stringify({
    cniVersion: '0.4.0',
    name: 'nightjar',
    plugins: [
      {
        type: 'bridge', bridge: network.bridge, isGateway: true, ipMasq: false, hairpinMode: true,
        ipam: { type: 'host-local', dataDir: join(cd, 'ipam'), ranges: [[{ subnet: podCidr(network), rangeStart: network.hostIp.replace(/\.1$/, '.10'), gateway: network.hostIp }]], routes: [{ dst: '0.0.0.0/0' }] },
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
    `root = "${CONTAINERD_ROOT}"`,
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
  const containerd = sv.launch('containerd', ['--config', join(cd, 'config.toml')], 'containerd', { PATH: `${shimDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` })
  sv.onStop(() => stopProcess(containerd, 10_000))
  await waitFor('containerd', 30_000, async () => existsSync(socket) && spawnSync('ctr', ['--address', socket, 'version'], { stdio: 'ignore' }).status === 0)
  sv.log('containerd up')
  return socket
}
