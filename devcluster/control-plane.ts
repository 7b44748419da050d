// A real Kubernetes control plane on this machine, for the development cluster and the
// cluster tests: Debian's etcd, and kube-apiserver + kube-controller-manager built by
// scripts/fetch-kube.mjs, all listening on this machine only (the apiserver on the cluster
// bridge, so pods reach it at the host's address). No scheduler and no kubelet: the caller
// brings its node. Design: docs/cluster.md#how-it-is-built-devcluster
import { execFile, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { ClusterNetwork } from './network.ts'
import { exitNote, freePort, startLogged, stopProcess, waitFor } from './processes.ts'
import { RUNS_ROOT, sweepDeadRuns } from './stale.ts'

const run = promisify(execFile)

export interface ControlPlaneInfo {
  /** https://<hostIp>:<port> */
  url: string
  /** bearer token of a system:masters user (tests and helm act as cluster admin) */
  adminToken: string
  caFile: string
  caPem: string
  /** a kubeconfig file for that admin (helm, client-node) */
  kubeconfig: string
  dir: string
  etcdUrl: string
  network: ClusterNetwork
}

export interface ControlPlane extends ControlPlaneInfo {
  apiserver: ChildProcess
  /** stops and starts kube-apiserver with the same flags (fault tests) */
  restartApiserver(): Promise<void>
  /** compacts etcd's history up to its current revision: older watch versions get 410 */
  compactEtcd(): Promise<number>
  stop(): Promise<void>
}

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir })
}

/** a CA, the API server's serving certificate and the service-account signing key */
async function makeCerts(dir: string, net: ClusterNetwork, serviceIp: string): Promise<void> {
  await openssl(dir, 'ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key')
  await openssl(dir, 'req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=nightjar-test-ca', '-days', '30', '-out', 'ca.crt')
  await openssl(dir, 'ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'apiserver.key')
  await openssl(dir, 'req', '-new', '-key', 'apiserver.key', '-subj', '/CN=kube-apiserver', '-out', 'apiserver.csr')
  const sans = [
    `IP:${net.hostIp}`, 'IP:127.0.0.1', `IP:${serviceIp}`,
    'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local', 'DNS:localhost',
  ]
  writeFileSync(join(dir, 'apiserver.ext'), `subjectAltName=${sans.join(',')}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n`)
  await openssl(dir, 'x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '30', '-extfile', 'apiserver.ext', '-out', 'apiserver.crt')
  await openssl(dir, 'genrsa', '-out', 'sa.key', '2048')
  await openssl(dir, 'rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub')
}

/** the first usable address of a CIDR (the `kubernetes` Service's ClusterIP) */
function firstIp(cidr: string): string {
  const [base] = cidr.split('/')
  const o = base.split('.').map(Number)
  o[3] += 1
  return o.join('.')
}

function kubeconfigYaml(url: string, caFile: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${url}`,
    `    certificate-authority: ${caFile}`,
    'users:',
    '- name: admin',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: test',
    '  context: {cluster: test, user: admin, namespace: default}',
    'current-context: test',
    '',
  ].join('\n')
}

function httpsGet(url: string, token: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, ca, timeout: 2000 }, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end()
  })
}

/**
 * apiArgs: more kube-apiserver flags (the development cluster: its client certificate for the
 * kubelet); controllers: more controllers (a real kubelet's node needs the node lifecycle
 * controller, which lifts the not-ready taint the kubelet registers with)
 */
export async function startControlPlane(opts: { binDir: string; network: ClusterNetwork; log?: (msg: string) => void; apiArgs?: string[]; controllers?: string[] }): Promise<ControlPlane> {
  const log = opts.log ?? (() => {})
  const net = opts.network
  const root = RUNS_ROOT
  mkdirSync(root, { recursive: true })
  sweepDeadRuns(root, 'cp') // control planes of runs that died
  const dir = join(root, `cp-${process.pid}-${randomBytes(3).toString('hex')}`)
  mkdirSync(dir, { recursive: true })
  const pids: number[] = []
  const remember = (c: ChildProcess) => {
    if (c.pid) pids.push(c.pid)
    writeFileSync(join(dir, 'pids'), pids.join('\n') + '\n')
  }

  const serviceIp = firstIp(net.serviceCidr)
  await makeCerts(dir, net, serviceIp)
  const adminToken = randomBytes(24).toString('hex')
  writeFileSync(join(dir, 'tokens.csv'), `${adminToken},nightjar-test-admin,nightjar-test-admin,"system:masters"\n`, { mode: 0o600 })
  const caFile = join(dir, 'ca.crt')
  const caPem = readFileSync(caFile, 'utf8')

  const { etcd, etcdUrl } = await startEtcd(dir, remember, log)

  // kube-apiserver
  const apiPort = await freePort(net.hostIp)
  const url = `https://${net.hostIp}:${apiPort}`
  const apiLog = join(dir, 'kube-apiserver.log')
  const apiArgs = [
    `--etcd-servers=${etcdUrl}`,
    `--bind-address=${net.hostIp}`, `--advertise-address=${net.hostIp}`, `--secure-port=${apiPort}`, '--insecure-port=0',
    `--tls-cert-file=${join(dir, 'apiserver.crt')}`, `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
    `--client-ca-file=${caFile}`, `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC', '--anonymous-auth=false',
    `--service-account-key-file=${join(dir, 'sa.pub')}`, `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-cluster-ip-range=${net.serviceCidr}`, '--allow-privileged=true',
    `--cert-dir=${join(dir, 'apiserver-certs')}`, '--profiling=false', '--event-ttl=1h',
    '--logtostderr=true', '--v=1',
    ...(opts.apiArgs ?? []),
  ]
  let apiserver = startLogged(`${opts.binDir}/kube-apiserver`, apiArgs, apiLog)
  remember(apiserver)
  const ready = async () => (await httpsGet(`${url}/readyz`, adminToken, caPem)).status === 200
  log(`starting kube-apiserver on ${url}`)
  await waitFor('kube-apiserver', 60_000, ready, exitNote(apiserver, 'kube-apiserver', apiLog))

  const kubeconfig = join(dir, 'admin.kubeconfig')
  writeFileSync(kubeconfig, kubeconfigYaml(url, caFile, adminToken), { mode: 0o600 })

  const kcm = await startControllerManager({ binDir: opts.binDir, dir, kubeconfig, caFile, url, adminToken, caPem, controllers: opts.controllers ?? [] }, remember, log)

  const cp: ControlPlane = {
    url, adminToken, caFile, caPem, kubeconfig, dir, etcdUrl, network: net,
    get apiserver() { return apiserver },
    async restartApiserver() {
      await stopProcess(apiserver, 10_000)
      apiserver = startLogged(`${opts.binDir}/kube-apiserver`, apiArgs, apiLog)
      remember(apiserver)
      await waitFor('kube-apiserver (restarted)', 60_000, ready, exitNote(apiserver, 'kube-apiserver', apiLog))
    },
    async compactEtcd() {
      // etcd's JSON gateway: read the current revision, then compact everything before it
      const head = await (await fetch(`${etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/').toString('base64') }) })).json() as { header: { revision: string } }
      const revision = Number(head.header.revision)
      const r = await fetch(`${etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision, physical: true }) })
      if (!r.ok) throw new Error(`etcd compaction failed: ${r.status} ${await r.text()}`)
      return revision
    },
    async stop() {
      await stopProcess(kcm)
      await stopProcess(apiserver)
      await stopProcess(etcd)
      removeRun(dir, log)
    },
  }
  return cp
}

/** etcd on a free loopback port, healthy */
async function startEtcd(dir: string, remember: (c: ChildProcess) => void, log: (msg: string) => void): Promise<{ etcd: ChildProcess; etcdUrl: string }> {
  const [etcdPort, peerPort] = [await freePort(), await freePort()]
  const etcdUrl = `http://127.0.0.1:${etcdPort}`
  const etcdLog = join(dir, 'etcd.log')
  log(`starting etcd on ${etcdUrl}`)
  const etcd = startLogged('etcd', [
    '--name', 'test', '--data-dir', join(dir, 'etcd'),
    '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl,
    '--listen-peer-urls', `http://127.0.0.1:${peerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`,
    '--initial-cluster', `test=http://127.0.0.1:${peerPort}`,
    // tests are throwaway: fsync on every write costs seconds on a busy disk
    '--unsafe-no-fsync', '--quota-backend-bytes', String(2 << 30), '--log-level', 'warn',
  ], etcdLog)
  remember(etcd)
  await waitFor('etcd', 20_000, async () => (await fetch(`${etcdUrl}/health`)).ok, exitNote(etcd, 'etcd', etcdLog))
  return { etcd, etcdUrl }
}

/** kube-controller-manager, ready once the token controller has given `default` in `default` its token Secret */
async function startControllerManager(
  o: { binDir: string; dir: string; kubeconfig: string; caFile: string; url: string; adminToken: string; caPem: string; controllers: string[] },
  remember: (c: ChildProcess) => void, log: (msg: string) => void,
): Promise<ChildProcess> {
  const kcmLog = join(o.dir, 'kube-controller-manager.log')
  const kcm = startLogged(`${o.binDir}/kube-controller-manager`, [
    `--kubeconfig=${o.kubeconfig}`, `--authentication-kubeconfig=${o.kubeconfig}`, `--authorization-kubeconfig=${o.kubeconfig}`,
    `--controllers=${['garbagecollector', 'namespace', 'serviceaccount', 'serviceaccount-token', 'deployment', 'replicaset', 'disruption', 'endpoint', ...o.controllers].join(',')}`,
    `--service-account-private-key-file=${join(o.dir, 'sa.key')}`, `--root-ca-file=${o.caFile}`,
    '--leader-elect=false', '--port=0', '--secure-port=0', '--use-service-account-credentials=false',
    '--logtostderr=true', '--v=1',
  ], kcmLog)
  remember(kcm)
  log('starting kube-controller-manager')
  await waitFor('kube-controller-manager', 60_000, async () => {
    const r = await httpsGet(`${o.url}/api/v1/namespaces/default/serviceaccounts/default`, o.adminToken, o.caPem)
    return r.status === 200 && (JSON.parse(r.body).secrets ?? []).length > 0
  }, exitNote(kcm, 'kube-controller-manager', kcmLog))
  return kcm
}

/** the run's directory goes; NIGHTJAR_KEEP_CLUSTER=1 keeps the logs (control plane and every pod) for a post-mortem */
function removeRun(dir: string, log: (msg: string) => void): void {
  if (process.env.NIGHTJAR_KEEP_CLUSTER === '1') {
    const kept = join(tmpdir(), `nightjar-cluster-kept-${Date.now()}`)
    renameSync(dir, kept) // out of the directory the next run sweeps
    log(`kept the cluster's logs in ${kept}`)
  } else rmSync(dir, { recursive: true, force: true })
}
