// Reads, from /proc, what isolates a browser pod's Chromium: for each of its processes the
// seccomp mode, namespaces, uid and flags, and for renderers the interfaces of their network
// namespace. Run as root on the machine the processes run on (the embedded runtime, or a
// real node's runc containers, which share this kernel).
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { descendants } from './process.ts'

export interface ChromiumProcess {
  pid: number
  /** browser, renderer, zygote, utility, gpu-process … (from --type=) */
  type: string
  seccomp: number
  /** seccomp filters stacked on it (Seccomp_filters): a renderer has one more than its pod's processes */
  seccompFilters: number
  /** real, effective, saved and filesystem uids */
  uids: number[]
  userNs: string
  netNs: string
  pidNs: string
  noSandboxFlag: boolean
  /** interfaces of its network namespace (from /proc/<pid>/net/dev) */
  interfaces: string[]
}

const read = (path: string) => readFileSync(path, 'utf8')

export function processFacts(pid: number): ChromiumProcess | undefined {
  let cmdline: string
  let status: string
  try {
    // Chromium rewrites its argv for child processes: one string with spaces, or NUL-separated
    cmdline = read(`/proc/${pid}/cmdline`).replace(/\0/g, ' ')
    status = read(`/proc/${pid}/status`)
  } catch {
    return undefined // gone meanwhile
  }
  if (!/chrom/i.test(cmdline)) return undefined
  const ns = (kind: string) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/${kind}`)
    } catch {
      return 'unreadable'
    }
  }
  let interfaces: string[] = []
  try {
    interfaces = read(`/proc/${pid}/net/dev`).split('\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean)
  } catch {
    /* gone meanwhile */
  }
  return {
    pid,
    type: /--type=([\w-]+)/.exec(cmdline)?.[1] ?? 'browser',
    seccomp: Number(/^Seccomp:\s*(\d)/m.exec(status)?.[1] ?? -1),
    seccompFilters: Number(/^Seccomp_filters:\s*(\d+)/m.exec(status)?.[1] ?? -1),
    uids: (/^Uid:\s*(.*)$/m.exec(status)?.[1] ?? '').trim().split(/\s+/).map(Number),
    userNs: ns('user'),
    netNs: ns('net'),
    pidNs: ns('pid'),
    noSandboxFlag: /(^|\s)--no-sandbox(\s|$)/.test(cmdline),
    interfaces,
  }
}

/** every Chromium process below `podPid` (the browser pod's Node.js process) */
export function chromiumProcesses(podPid: number): ChromiumProcess[] {
  return descendants([podPid]).map(processFacts).filter((p): p is ChromiumProcess => p !== undefined)
}

export function namespacesOf(pid: number): { user: string; net: string; pid: string } {
  return { user: readlinkSync(`/proc/${pid}/ns/user`), net: readlinkSync(`/proc/${pid}/ns/net`), pid: readlinkSync(`/proc/${pid}/ns/pid_for_children`) }
}

export interface ReadAttempt {
  mem: string
  environ: string
  /** when readable: whether the environment holds the string looked for */
  environHolds?: boolean
}

/**
 * Tries, as `uid`, what a compromised Chromium process would: read `target`'s memory (its
 * first mapping) and environment. Each answer is "read" or the errno code.
 */
export async function readAs(uid: number, target: number, lookFor?: string): Promise<ReadAttempt> {
  const script = `
    const fs = require('node:fs'); const pid = ${target}; const out = {}; const lookFor = process.env.LOOK_FOR
    try { const start = parseInt(fs.readFileSync('/proc/' + pid + '/maps', 'utf8').split('-')[0], 16)
      const fd = fs.openSync('/proc/' + pid + '/mem', 'r'); const n = fs.readSync(fd, Buffer.alloc(64), 0, 64, start); out.mem = n > 0 ? 'read' : 'empty' }
    catch (e) { out.mem = e.code || String(e) }
    try { const env = fs.readFileSync('/proc/' + pid + '/environ', 'latin1'); out.environ = 'read'; if (lookFor) out.environHolds = env.includes(lookFor) } catch (e) { out.environ = e.code || String(e) }
    process.stdout.write(JSON.stringify(out))`
  // what is looked for travels by environment, never on a command line
  const child = spawn(process.execPath, ['-e', script], { uid, gid: uid, stdio: ['ignore', 'pipe', 'pipe'], cwd: '/', env: lookFor ? { LOOK_FOR: lookFor } : {} })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  // 'close', not 'exit': the process may exit before its stdout has all been read
  await new Promise((r) => child.once('close', r))
  return JSON.parse(out) as ReadAttempt
}

/**
 * The processes of a Kubernetes pod on one of this machine's kubelets (cgroupfs driver), by the
 * pod's uid: every pid in its cgroup and its containers' ([<node>/]kubepods/<qos>/pod<uid>[/<container>]/cgroup.procs,
 * <node> the cgroup root of a further node of the development cluster).
 */
export function podProcesses(podUid: string): number[] {
  const pids = new Set<number>()
  const walk = (dir: string, depth: number) => {
    let names: string[]
    try {
      names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)
    } catch {
      return
    }
    for (const name of names) {
      if (name === `pod${podUid}`) {
        // the pod's own level too: runsc puts its sandbox and gofer there, not in a container's
        try {
          for (const l of readFileSync(join(dir, name, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.add(Number(l))
        } catch { /* gone meanwhile */ }
        for (const c of readdirSync(join(dir, name), { withFileTypes: true }).filter((d) => d.isDirectory())) {
          try {
            for (const l of readFileSync(join(dir, name, c.name, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.add(Number(l))
          } catch { /* a container gone meanwhile */ }
        }
      } else if (depth < 3) walk(join(dir, name), depth + 1)
    }
  }
  const root = '/sys/fs/cgroup/pids'
  const nodeRoots = existsSync(root) ? readdirSync(root).filter((d) => d.startsWith('nightjar-node-')).map((d) => join(root, d, 'kubepods')) : []
  for (const kubepods of [join(root, 'kubepods'), ...nodeRoots]) walk(kubepods, 0)
  return [...pids]
}

/** seccomp filters on any process (the pod process's, to compare a renderer's with) */
export function seccompFiltersOf(pid: number): number {
  return Number(/^Seccomp_filters:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? -1)
}

/** what a process inside a gVisor sandbox shows through gVisor's own /proc */
export interface InsideProcess {
  pid: number
  cmd: string
  /** Chromium's --type=, "browser" for its main process, undefined for other programs */
  type?: string
  seccomp: number
  uids: number[]
  /** its user namespace's uid_map, whitespace-collapsed (a namespace of its own maps other ids) */
  uidMap: string
  /** interfaces of its network namespace, or the errno its /proc/<pid>/net/dev answered */
  interfaces: string[] | string
  /** opening its memory / reading its environment from the probe's uid: "read" or the errno */
  mem: string
  environ: string
  environHolds: boolean
}

/**
 * A program run inside a container (`kubectl exec -i … -- node -e INSIDE_PROBE`, as the pod's
 * uid) when its processes live in gVisor's kernel, which this host's /proc cannot see. What
 * it looks for in environments comes on stdin, never on a command line; it prints JSON.
 */
export const INSIDE_PROBE = String.raw`
const fs = require('node:fs')
let lookFor = ''
process.stdin.on('data', (d) => (lookFor += d)).on('end', () => {
  const read = (p) => { try { return fs.readFileSync(p, 'latin1') } catch (e) { return { error: e.code || String(e) } } }
  const procs = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue
    const cmd = read('/proc/' + d + '/cmdline'), status = read('/proc/' + d + '/status')
    if (typeof cmd !== 'string' || typeof status !== 'string') continue
    const line = cmd.replace(/\0/g, ' ').trim()
    const uidMap = read('/proc/' + d + '/uid_map'), net = read('/proc/' + d + '/net/dev'), env = read('/proc/' + d + '/environ')
    let mem
    try { fs.closeSync(fs.openSync('/proc/' + d + '/mem', 'r')); mem = 'read' } catch (e) { mem = e.code || String(e) }
    procs.push({
      pid: Number(d), cmd: line.slice(0, 200),
      type: /chrom/i.test(line.split(' ')[0]) ? (/--type=([\w-]+)/.exec(line) || [, 'browser'])[1] : undefined,
      seccomp: Number((/^Seccomp:\s*(\d)/m.exec(status) || [])[1] ?? -1),
      uids: ((/^Uid:\s*(.*)$/m.exec(status) || [])[1] || '').trim().split(/\s+/).map(Number),
      uidMap: typeof uidMap === 'string' ? uidMap.trim().replace(/\s+/g, ' ') : uidMap.error,
      interfaces: typeof net === 'string' ? net.split('\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean) : net.error,
      mem, environ: typeof env === 'string' ? 'read' : env.error,
      environHolds: typeof env === 'string' && lookFor !== '' && env.includes(lookFor),
    })
  }
  process.stdout.write(JSON.stringify(procs))
})`
