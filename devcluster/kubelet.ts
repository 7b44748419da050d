// The kubelet 1.20.2 (scripts/fetch-kube.mjs --node) on containerd: registers a node,
// runs its Pods, and serves exec, logs and port-forward to the API server only (a client CA
// of its own, whose one certificate the API server holds). Also what undoes its marks on
// the machine: the kernel tunables it sets as it starts, and every Pod's sandbox (drained
// through it, so CNI releases each Pod's network).
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ClusterNetwork } from './network.ts'
import { freePort, type Supervision, waitFor } from './processes.ts'
import { KUBECTL, PAUSE_REF, RUN_DIR, SECCOMP_ROOT } from './state.ts'

/** what the kubelet changes on start (pkg/kubelet/cm setupKernelTunables) */
const KUBELET_SYSCTLS = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes']
const SYSCTLS_FILE = join(RUN_DIR, 'sysctls.json')

/** puts back the machine's values of the tunables the kubelet set; a no-op when none were saved */
export function restoreSysctls(): void {
  if (!existsSync(SYSCTLS_FILE)) return
  for (const [k, v] of Object.entries(JSON.parse(readFileSync(SYSCTLS_FILE, 'utf8')) as Record<string, string>)) {
    try { writeFileSync(`/proc/sys/${k}`, v) } catch { /* not writable here: nothing was changed */ }
  }
  rmSync(SYSCTLS_FILE, { force: true })
}

/**
 * The kubelet accepts only clients whose certificate a CA of its own signed: the API server
 * (for exec, logs, port-forward) holds one; Pods on the bridge hold none. Returns the CA file
 * and the API server's flags that present that certificate.
 */
export function makeKubeletClientPki(pki: string): { caFile: string; apiArgs: string[] } {
  mkdirSync(pki, { recursive: true })
  const ossl = (...a: string[]) => execFileSync('openssl', a, { cwd: pki, stdio: 'ignore' })
  ossl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'kubelet-ca.key')
  ossl('req', '-x509', '-new', '-key', 'kubelet-ca.key', '-subj', '/CN=nightjar-kubelet-client-ca', '-days', '30', '-out', 'kubelet-ca.crt')
  ossl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'apiserver-kubelet-client.key')
  ossl('req', '-new', '-key', 'apiserver-kubelet-client.key', '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client', '-out', 'apiserver-kubelet-client.csr')
  writeFileSync(join(pki, 'client.ext'), 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n')
  ossl('x509', '-req', '-in', 'apiserver-kubelet-client.csr', '-CA', 'kubelet-ca.crt', '-CAkey', 'kubelet-ca.key', '-CAcreateserial', '-days', '30', '-extfile', 'client.ext', '-out', 'apiserver-kubelet-client.crt')
  return {
    caFile: join(pki, 'kubelet-ca.crt'),
    apiArgs: [
      `--kubelet-client-certificate=${join(pki, 'apiserver-kubelet-client.crt')}`,
      `--kubelet-client-key=${join(pki, 'apiserver-kubelet-client.key')}`,
      '--kubelet-preferred-address-types=InternalIP',
    ],
  }
}

export interface KubeletOptions {
  binDir: string
  kubeconfig: string
  network: ClusterNetwork
  /** containerd's socket */
  socket: string
  /** the client CA of makeKubeletClientPki */
  clientCaFile: string
  /** the Node's name, its address (the kubelet listens there), its root directory and config file */
  name: string
  ip: string
  rootDir: string
  configFile: string
  /** --cgroup-root: '/' for the first node, a cgroup of its own for each further one */
  cgroupRoot: string
}

/** writes the kubelet's config; launch() starts it (again after a node-stop) */
export async function configureKubelet(sv: Supervision, opts: KubeletOptions): Promise<{ launch(logName: string, wrap?: string[]): ChildProcess }> {
  const { network } = opts
  mkdirSync(opts.rootDir, { recursive: true })
  const kubeletPort = await freePort(opts.ip)
  const healthzPort = await freePort()
  writeFileSync(opts.configFile, [
    'apiVersion: kubelet.config.k8s.io/v1beta1',
    'kind: KubeletConfiguration',
    `address: ${opts.ip}`,
    `port: ${kubeletPort}`,
    'readOnlyPort: 0',
    'healthzBindAddress: 127.0.0.1',
    `healthzPort: ${healthzPort}`,
    'cgroupDriver: cgroupfs',
    `cgroupRoot: ${opts.cgroupRoot}`,
    `clusterDNS: [${network.hostIp}]`,
    'clusterDomain: cluster.local',
    'resolvConf: ""',
    'authentication:',
    '  anonymous: {enabled: false}',
    '  webhook: {enabled: false}',
    `  x509: {clientCAFile: ${opts.clientCaFile}}`,
    'authorization: {mode: AlwaysAllow}',
    'failSwapOn: false',
    // this machine's disk is shared: evict on real shortage only
    'evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%}',
    'imageGCHighThresholdPercent: 99',
    'imageGCLowThresholdPercent: 98',
    'serializeImagePulls: false',
    'maxPods: 110',
    '',
  ].join('\n'))
  // the kubelet sets these kernel tunables as it starts (vm.overcommit_memory=1,
  // kernel.panic_on_oops=1, …): keep the machine's values (before the first kubelet), put back when the last stops
  if (!existsSync(SYSCTLS_FILE)) {
    const tunables = Object.fromEntries(KUBELET_SYSCTLS.map((k) => [k, readFileSync(`/proc/sys/${k}`, 'utf8').trim()]))
    writeFileSync(SYSCTLS_FILE, JSON.stringify(tunables))
  }
  const argv = [
    join(opts.binDir, 'kubelet'),
    `--config=${opts.configFile}`, `--kubeconfig=${opts.kubeconfig}`, `--root-dir=${opts.rootDir}`, `--cert-dir=${join(opts.rootDir, 'pki')}`,
    '--container-runtime=remote', `--container-runtime-endpoint=unix://${opts.socket}`, `--pod-infra-container-image=${PAUSE_REF}`,
    `--node-ip=${opts.ip}`, `--hostname-override=${opts.name}`, `--seccomp-profile-root=${SECCOMP_ROOT}`, '--logtostderr=true', '--v=1',
  ]
  return {
    launch(logName, wrap = []) {
      const all = [...wrap, ...argv]
      return sv.launch(all[0], all.slice(1), logName)
    },
  }
}

/**
 * The node Ready, and the not-ready taint the kubelet registers with (or the unreachable one
 * a node-stop earned) lifted by nodelifecycle: until then nothing schedules there.
 */
export async function nodeReady(kubeconfig: string, name: string, kubelet: ChildProcess, logFile: string, since = 0): Promise<void> {
  await waitFor(`node ${name} Ready`, 180_000, async () => {
    const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'get', 'node', name, '-o', 'json'], { encoding: 'utf8' })
    const node = JSON.parse(r.stdout || '{}')
    // since: said by this kubelet, not left from before it (the API's times have whole seconds)
    const ready = node.status?.conditions?.some((c: { type: string; status: string; lastHeartbeatTime: string }) =>
      c.type === 'Ready' && c.status === 'True' && Date.parse(c.lastHeartbeatTime) >= Math.floor(since / 1000) * 1000)
    return ready && !(node.spec?.taints ?? []).some((t: { key: string }) => /^node\.kubernetes\.io\/(not-ready|unreachable)$/.test(t.key))
  }, () => (kubelet.exitCode !== null || kubelet.signalCode !== null ? `the kubelet exited (${kubelet.exitCode ?? kubelet.signalCode}); see ${logFile}` : undefined))
}

/**
 * Deletes every Pod on the node and waits for the kubelet to stop their sandboxes (CNI DEL
 * runs then). Stop the scheduler first, so Pods a ReplicaSet makes anew stay unbound.
 */
export async function drainPods(kubeconfig: string, name: string, socket: string, log: (m: string) => void): Promise<void> {
  const onNode = ['--all-namespaces', '--field-selector', `spec.nodeName=${name}`]
  spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'delete', 'pods', ...onNode, '--grace-period=5', '--wait=false'], { stdio: 'ignore' })
  await waitFor('every Pod gone', 90_000, async () => {
    const pods = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'get', 'pods', ...onNode, '-o', 'name'], { encoding: 'utf8' }).stdout.trim()
    const tasks = spawnSync('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'ls', '-q'], { encoding: 'utf8' }).stdout.trim()
    return pods === '' && tasks === ''
  }).catch((err) => log(String(err)))
}
