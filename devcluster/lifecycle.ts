// `up`, `down` and `status` of the development cluster, as scripts/cluster.ts offers them:
// `up` prepares the machine (Debian packages, the Kubernetes binaries, helm, the images, the
// gVisor shim), starts the supervisor detached and follows its log until it is ready; `down`
// stops the supervisor, then sweeps whatever a supervisor that died could have left.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { alive } from '../contracts/process.ts'
import { importImages } from './images.ts'
import { removeSeccompProfiles, sweepLeftovers } from './leftovers.ts'
import { MAX_SIMULATED_NODES } from './fleet/fleet.ts'
import { bridgeName } from './network.ts'
import { CONTROL_SOCKET, KUBECTL, MAX_NODES, nodesOf, readState, REPO_ROOT, RUN_DIR, type State, SUPERVISOR_PID_FILE } from './state.ts'

export const say = (msg: string) => process.stderr.write(`cluster: ${msg}\n`)

const script = (name: string) => join(REPO_ROOT, 'scripts', name)

function apiReady(s: State): boolean {
  const out = spawnSync(KUBECTL, ['--kubeconfig', s.kubeconfig, 'get', '--raw', '/readyz'], { encoding: 'utf8', timeout: 10_000 })
  return out.status === 0 && out.stdout.trim() === 'ok'
}

/** the cluster's state when it is up and answering */
export function status(): State | undefined {
  const s = readState()
  return s && alive(s.supervisorPid) && apiReady(s) ? s : undefined
}

/**
 * one line per node, the real ones first, then the simulated fleet's: name, address
 * ("simulated" for the fleet's), Ready as the API says, stopped by node-stop, pod range
 */
export function nodeLines(s: State): string[] {
  const out = spawnSync(KUBECTL, ['--kubeconfig', s.kubeconfig, 'get', 'nodes', '-o', 'json'], { encoding: 'utf8', timeout: 10_000 })
  const items = (out.status === 0 ? JSON.parse(out.stdout).items : []) as { metadata: { name: string }; status: { conditions?: { type: string; status: string }[] } }[]
  const nodes = [
    ...nodesOf(s).map((n) => ({ name: n.name, address: n.ip, stopped: n.stopped, pods: n.podRange })),
    ...(s.simulatedNodes ?? []).map((n) => ({ name: n.name, address: 'simulated', stopped: n.stopped, pods: n.podCidr })),
  ]
  return nodes.map((n) => {
    const ready = items.find((i) => i.metadata.name === n.name)?.status.conditions?.find((c) => c.type === 'Ready')?.status
    const word = ready === 'True' ? 'Ready' : ready === undefined ? 'not registered' : 'NotReady'
    return `${n.name}\t${n.address}\t${word}${n.stopped ? ' (node-stop)' : ''}\tpods ${n.pods}`
  })
}

/**
 * node-stop or node-start of one node (real or simulated), done by the supervisor (which owns
 * its programs): returns its answer once done (node-start: once the node is Ready again)
 */
export function nodeCommand(name: string, command: 'stop' | 'start'): Promise<string> {
  if (!status()) return Promise.reject(new Error('the cluster is not up'))
  return control(`/nodes/${encodeURIComponent(name)}/${command}`, `node-${command} ${name}`)
}

/** a request to the supervisor's control socket: its answer, or an error saying `what` failed */
function control(path: string, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: CONTROL_SOCKET, method: 'POST', path, timeout: 300_000 }, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => (res.statusCode === 200 ? resolve(body.trim()) : reject(new Error(`${what}: ${body.trim()}`))))
    })
    req.on('timeout', () => req.destroy(new Error(`${what}: no answer in 5 minutes`)))
    req.on('error', reject)
    req.end()
  })
}

/** builds the images only (scripts/images.mjs) */
export function buildImages(): void {
  execFileSync(process.execPath, [script('images.mjs')], { stdio: 'inherit' })
}

function printExports(s: State) {
  process.stdout.write(`# images: ${Object.values(s.images).join(' ')} (chart: --set images.registry=localhost)\n`)
  process.stdout.write(`export KUBECONFIG=${s.kubeconfig}\n`)
  process.stdout.write(`export DATABASE_URL='${s.databaseUrl}'\n`)
}

/** the node's Kubernetes binaries (built once by fetch-kube.mjs, cached): their directory */
const fetchKube = () => execFileSync(process.execPath, [script('fetch-kube.mjs'), '--node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()

/**
 * Starts the cluster, or brings a running one's images up to date. serveArgv: how to run the
 * supervisor (the CLI's `serve`), given the binaries' directory, the gVisor shim ('' for none),
 * the node count and the simulated fleet's size. nodes: how many (1 when not said; a running
 * cluster must have as many). simulatedNodes: the fleet's size (none when not said; a running
 * cluster's fleet is resized to it in place).
 */
export function up(serveArgv: (binDir: string, gvisorShim: string, nodes: number, simulatedNodes: number) => string[], nodes?: number, simulatedNodes?: number): Promise<void> {
  return withClusterLock('up', () => upUnlocked(serveArgv, nodes, simulatedNodes))
}

async function upUnlocked(serveArgv: (binDir: string, gvisorShim: string, nodes: number, simulatedNodes: number) => string[], nodes?: number, simulatedNodes?: number): Promise<void> {
  if (nodes !== undefined && !(Number.isInteger(nodes) && nodes >= 1 && nodes <= MAX_NODES)) throw new Error(`--nodes takes 1 to ${MAX_NODES}`)
  if (simulatedNodes !== undefined && !(Number.isInteger(simulatedNodes) && simulatedNodes >= 0 && simulatedNodes <= MAX_SIMULATED_NODES)) throw new Error(`--simulated-nodes takes 0 to ${MAX_SIMULATED_NODES}`)
  const s = readState()
  if (s && alive(s.supervisorPid) && apiReady(s)) {
    const running = nodesOf(s).length
    if (nodes !== undefined && nodes !== running) throw new Error(`the cluster is up with ${running} node${running > 1 ? 's' : ''}; \`down\` first to have ${nodes}`)
    if (simulatedNodes !== undefined && simulatedNodes !== (s.simulatedNodes ?? []).length) say(await control(`/fleet/${simulatedNodes}`, `--simulated-nodes ${simulatedNodes}`))
    // up already; the images may have changed since (a new commit): build what changed
    // and import it, so what runs is what the tree says (both steps are no-ops otherwise)
    say('already up; bringing its images up to date')
    execFileSync(process.execPath, [script('images.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
    // a node taken down by node-stop has no containerd to import into: it keeps what it had
    await importImages(nodesOf(s).filter((n) => !n.stopped), fetchKube(), say)
    printExports(s)
    return
  }
  if (s) {
    say('a previous cluster is half there; cleaning it up first')
    await downUnlocked()
  }
  if (process.getuid?.() !== 0) throw new Error('the cluster needs root (containerd, the kubelet, bridges and iptables)')
  ensureAptPackages()
  const binDir = fetchKube()
  execFileSync(process.execPath, [script('fetch-helm.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  execFileSync(process.execPath, [script('images.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const shim = spawnSync(process.execPath, [script('fetch-gvisor-shim.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  // a node without gVisor still serves every other pod: say so and go on
  const gvisorShim = shim.status === 0 ? shim.stdout.trim() : ''
  if (!gvisorShim) say('gVisor will not be offered on this node (RuntimeClass handler runsc): its shim could not be built, see above')
  mkdirSync(RUN_DIR, { recursive: true })
  const logFile = join(RUN_DIR, 'supervisor.log')
  const fd = openSync(logFile, 'a')
  const child = spawn(process.execPath, serveArgv(binDir, gvisorShim, nodes ?? 1, simulatedNodes ?? 0), { cwd: REPO_ROOT, detached: true, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  let exited = false // (a dead child stays a zombie for kill(pid, 0) until reaped: watch its exit)
  child.once('exit', () => (exited = true))
  child.unref()
  writeFileSync(SUPERVISOR_PID_FILE, `${child.pid}\n`)
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
      await downUnlocked()
      throw new Error(`the cluster did not come up (see above); everything it started is removed`)
    }
    await new Promise((r) => setTimeout(r, 500))
  }
}

export function down(): Promise<void> {
  return withClusterLock('down', downUnlocked)
}

/** held while `up` or `down` runs */
const LOCK_FILE = `${RUN_DIR}.lock`

/**
 * One `up` or `down` at a time on the machine: two at once start two supervisors on one run
 * directory (a bench killed mid-`up` leaves its `up` running; the next one raced it, and each
 * tore down what the other started). A lock whose process is gone is taken over.
 */
async function withClusterLock<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      writeFileSync(LOCK_FILE, `${process.pid} ${what}\n`, { flag: 'wx' })
      break
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const [pid, holding] = (existsSync(LOCK_FILE) ? readFileSync(LOCK_FILE, 'utf8') : '').trim().split(' ')
      if (Number(pid) && alive(Number(pid))) throw new Error(`another \`cluster ${holding ?? ''}\` (pid ${pid}) is running: wait for it, or stop it, before \`cluster ${what}\``)
      rmSync(LOCK_FILE, { force: true }) // its process is gone
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(LOCK_FILE, { force: true })
  }
}

async function downUnlocked(): Promise<void> {
  const s = readState()
  // state.json appears once the cluster is ready; supervisor.pid as soon as it starts
  const supervisor = s?.supervisorPid ?? (existsSync(SUPERVISOR_PID_FILE) ? Number(readFileSync(SUPERVISOR_PID_FILE, 'utf8')) : undefined)
  if (supervisor && alive(supervisor)) {
    say(`stopping supervisor ${supervisor} (it deletes every Pod first)…`)
    process.kill(supervisor, 'SIGTERM')
    const deadline = Date.now() + 180_000
    while (alive(supervisor) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    if (alive(supervisor)) process.kill(supervisor, 'SIGKILL')
  }
  await sweepLeftovers(s?.bridge ?? (supervisor ? bridgeName(supervisor) : undefined))
  rmSync(RUN_DIR, { recursive: true, force: true })
  removeSeccompProfiles()
  say('down: no process, bridge, iptables chain, mount or namespace of the cluster is left')
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
