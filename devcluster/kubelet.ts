// The kubelet 1.20.2 (scripts/fetch-kube.mjs --node) on containerd: registers the one node,
// runs its Pods, and serves exec, logs and port-forward to the API server only (a client CA
// of its own, whose one certificate the API server holds). Also what undoes its marks on
// the machine: the kernel tunables it sets as it starts, and every Pod's sandbox (drained
// through it, so CNI releases each Pod's network).
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ClusterNetwork } from './network.ts'
import { freePort, stopProcess, type Supervision, waitFor } from './processes.ts'
import { KUBECTL, NODE_NAME, PAUSE_REF, RUN_DIR, SECCOMP_ROOT } from './state.ts'

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
}

export async function startKubelet(sv: Supervision, opts: KubeletOptions): Promise<ChildProcess> {
  const { network } = opts
  const kubeletDir = join(RUN_DIR, 'kubelet')
  mkdirSync(kubeletDir, { recursive: true })
  const kubeletPort = await freePort(network.hostIp)
  const healthzPort = await freePort()
  const config = join(RUN_DIR, 'kubelet.yaml')
  writeFileSync(config, [
    'apiVersion: kubelet.config.k8s.io/v1beta1',
    'kind: KubeletConfiguration',
    `address: ${network.hostIp}`,
    `port: ${kubeletPort}`,
    'readOnlyPort: 0',
    'healthzBindAddress: 127.0.0.1',
    `healthzPort: ${healthzPort}`,
    'cgroupDriver: cgroupfs',
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
  // kernel.panic_on_oops=1, …): keep the machine's values, put back when it stops
  const tunables = Object.fromEntries(KUBELET_SYSCTLS.map((k) => [k, readFileSync(`/proc/sys/${k}`, 'utf8').trim()]))
  writeFileSync(SYSCTLS_FILE, JSON.stringify(tunables))
  const kubelet = sv.launch(join(opts.binDir, 'kubelet'), [
    `--config=${config}`, `--kubeconfig=${opts.kubeconfig}`, `--root-dir=${kubeletDir}`, `--cert-dir=${join(kubeletDir, 'pki')}`,
    '--container-runtime=remote', `--container-runtime-endpoint=unix://${opts.socket}`, `--pod-infra-container-image=${PAUSE_REF}`,
    `--node-ip=${network.hostIp}`, `--hostname-override=${NODE_NAME}`, `--seccomp-profile-root=${SECCOMP_ROOT}`, '--logtostderr=true', '--v=1',
  ], 'kubelet')
  sv.onStop(async () => {
    await stopProcess(kubelet, 20_000)
    restoreSysctls()
  })
  return kubelet
}

/** the node Ready, and the not-ready taint the kubelet registers with lifted (by nodelifecycle): until then nothing schedules */
export async function nodeReady(kubeconfig: string, kubelet: ChildProcess, logs: string): Promise<void> {
  await waitFor('node Ready', 180_000, async () => {
    const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'get', 'node', NODE_NAME, '-o', 'json'], { encoding: 'utf8' })
    const node = JSON.parse(r.stdout || '{}')
    const ready = node.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True')
    return ready && !(node.spec?.taints ?? []).some((t: { key: string }) => t.key === 'node.kubernetes.io/not-ready')
  }, () => (kubelet.exitCode !== null ? `the kubelet exited (${kubelet.exitCode}); see ${join(logs, 'kubelet.log')}` : undefined))
}

/**
 * Deletes every Pod on the node and waits for the kubelet to stop their sandboxes (CNI DEL
 * runs then). Stop the scheduler first, so Pods a ReplicaSet makes anew stay unbound.
 */
export async function drainPods(kubeconfig: string, socket: string, log: (m: string) => void): Promise<void> {
  const onNode = ['--all-namespaces', '--field-selector', `spec.nodeName=${NODE_NAME}`]
  spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'delete', 'pods', ...onNode, '--grace-period=5', '--wait=false'], { stdio: 'ignore' })
  await waitFor('every Pod gone', 90_000, async () => {
    const pods = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, 'get', 'pods', ...onNode, '-o', 'name'], { encoding: 'utf8' }).stdout.trim()
    const tasks = spawnSync('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'ls', '-q'], { encoding: 'utf8' }).stdout.trim()
    return pods === '' && tasks === ''
  }).catch((err) => log(String(err)))
}
