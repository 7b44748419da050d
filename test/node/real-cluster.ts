// The real node (or nodes) for its tests and its benchmark (not a test file): `npm run cluster
// -- up`, run as a user would, which is a no-op but for changed images when the cluster is up.
import { spawn, spawnSync } from 'node:child_process'
import { alive } from '../../contracts/process.ts'
import { KUBECTL, NODE_NAME, nodesOf, readState, REPO_ROOT } from '../../devcluster/state.ts'

export { KUBECTL, NODE_NAME }
export const ROOT = REPO_ROOT

export interface RealCluster {
  kubeconfig: string
  /** the cluster's Postgres, as `up` printed it */
  databaseUrl: string
  /** the Linux bridge the Pods are on (the host side is their gateway) */
  bridge: string
  /** every node's name, the first (NODE_NAME) first */
  nodes: string[]
  /** every node's container log directory as this machine sees it (the first's is /var/log/pods) */
  podLogDirs: string[]
}

/**
 * `npm run cluster -- up` (its last lines: export KUBECONFIG=…, export DATABASE_URL=…);
 * with nodes, `up --nodes <nodes>`, after a `down` when a cluster of another size is up; with
 * simulatedNodes, `--simulated-nodes <n>` too (a running cluster's fleet is resized in place)
 */
export function clusterUp(nodes?: number, simulatedNodes?: number): RealCluster {
  const running = readState()
  if (nodes && running && alive(running.supervisorPid) && nodesOf(running).length !== nodes) {
    process.stderr.write(`# the cluster is up with ${nodesOf(running).length} node(s); down, then up with ${nodes}\n`)
    spawnSync(process.execPath, ['--import', 'tsx', `${ROOT}scripts/cluster.ts`, 'down'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 10 * 60_000 })
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', `${ROOT}scripts/cluster.ts`, 'up', ...(nodes ? ['--nodes', String(nodes)] : []), ...(simulatedNodes === undefined ? [] : ['--simulated-nodes', String(simulatedNodes)])], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 60 * 60_000 })
  if (r.status !== 0) throw new Error(`npm run cluster -- up failed (exit ${r.status})`)
  const kubeconfig = /^export KUBECONFIG=(.+)$/m.exec(r.stdout)?.[1]
  const databaseUrl = /^export DATABASE_URL='(.+)'$/m.exec(r.stdout)?.[1]
  if (!kubeconfig || !databaseUrl) throw new Error('`up` did not print KUBECONFIG and DATABASE_URL last')
  const state = readState()
  if (!state) throw new Error('`up` printed its exports but left no state.json')
  return { kubeconfig, databaseUrl, bridge: state.bridge, nodes: nodesOf(state).map((n) => n.name), podLogDirs: nodesOf(state).map((n) => n.podLogDir) }
}

/** `npm run cluster -- node-stop|node-start <name>`, as a user runs it; resolves with its output */
export function clusterCommand(command: 'node-stop' | 'node-start', name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}scripts/cluster.ts`, command, name], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (out += c))
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${name} failed (exit ${code}): ${out.trim()}`))))
  })
}

/** kubectl against the real node; throws with kubectl's own words on failure */
export function kubectlOn(kubeconfig: string) {
  return (args: string[], input?: string): string => {
    const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input, timeout: 120_000, maxBuffer: 64 << 20 })
    if (r.status !== 0) throw new Error(`kubectl ${args.slice(0, 4).join(' ')}: ${(r.stderr || r.stdout).trim()}`)
    return r.stdout
  }
}
