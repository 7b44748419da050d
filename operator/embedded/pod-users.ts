// Who a browser pod runs as on one machine. Chromium's sandbox refuses root, and a pod
// running as the service's user could read the service's memory; so a root service gives
// each pod a uid of its own (never shared, so pods cannot trace each other) with a private
// home removed on exit. A non-root service starts pods as itself: the sandbox works
// unprivileged, and the pod makes itself non-dumpable (browser-pod/sandbox.ts).
// Each run (owning process) records its pods' homes in a root-owned folder named for it
// (run-<pid>-<start time>), so a start can sweep what a killed run left and nothing else.
import { randomInt } from 'node:crypto'
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync, type Stats } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive } from '../../contracts/process.ts'

/** what a spawn needs to run a pod as its own user */
export interface PodUser {
  uid: number
  gid: number
  /** HOME and TMPDIR of the pod, mode 0700, owned by uid */
  home: string
  /** gives the uid back and removes the home folder (idempotent) */
  release(): void
}

export interface PodUsersOptions {
  /** first uid of the range (NIGHTJAR_POD_UID_BASE, default 2000000000: above any account or subuid range a distribution hands out) */
  base?: number
  /** how many uids (default 10000: more pods than a machine can run) */
  count?: number
  /** where the homes go, shared by every run on the machine (default <tmpdir>/nightjar-pods) */
  dir?: string
}

export const DEFAULT_POD_UID_BASE = 2_000_000_000

/** a run's record of its homes: one empty file per home, named as the home */
const RUN_FOLDER = /^run-(\d+)-(\d+)$/
/** a home the embedded runtime makes (named for its pod), also of releases without run records */
const RUNTIME_HOME = /^browser-pod-[0-9a-z]+-[0-9a-f]{6}$/

export class PodUsers {
  private readonly base: number
  private readonly count: number
  private readonly dir: string
  /** this process's record: a restart under the same pid gets another (the start time differs) */
  private readonly runDir: string
  private readonly taken = new Set<number>()
  /** a random start: runtimes in other processes (tests run side by side) rarely pick the same uids */
  private next: number

  constructor(opts: PodUsersOptions = {}) {
    this.base = opts.base ?? DEFAULT_POD_UID_BASE
    this.count = opts.count ?? 10_000
    this.dir = opts.dir ?? join(tmpdir(), 'nightjar-pods')
    this.runDir = join(this.dir, `run-${process.pid}-${startTime(process.pid) ?? 0}`)
    this.next = randomInt(this.count)
  }

  /** a user for the pod named `name`, or undefined when this process is not root (pods then run as it) */
  acquire(name: string): PodUser | undefined {
    if (process.getuid?.() !== 0) return undefined
    if (this.taken.size >= this.count) throw new Error(`all ${this.count} browser-pod uids from ${this.base} are in use`)
    // the root is passable but not listable: a pod cannot find its neighbours' homes
    mkdirSync(this.dir, { recursive: true, mode: 0o711 })
    // a root another user can write would let it swap a home for a link to a file root then chowns
    if (!rootOnly(lstatSync(this.dir))) throw new Error(`${this.dir} is not a folder only root can write: browser pods get no home there`)
    while (this.taken.has(this.base + this.next)) this.next = (this.next + 1) % this.count
    const uid = this.base + this.next
    this.next = (this.next + 1) % this.count
    this.taken.add(uid)
    // recorded before it exists: a sweep that sees the home also sees whose it is
    const record = join(this.runDir, name)
    mkdirSync(this.runDir, { recursive: true, mode: 0o700 })
    writeFileSync(record, '')
    const home = join(this.dir, name)
    rmSync(home, { recursive: true, force: true })
    mkdirSync(home, { mode: 0o700 })
    chownSync(home, uid, uid)
    let released = false
    return {
      uid,
      gid: uid,
      home,
      release: () => {
        if (released) return
        released = true
        this.taken.delete(uid)
        try {
          // a Chromium helper killed with the pod may still be writing its last file
          rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
          rmSync(record, { force: true })
          if (this.taken.size === 0) rmdirSync(this.runDir)
        } catch {
          /* left for the next start's sweep: nothing in it outlives the pod's session */
        }
      },
    }
  }

  /**
   * Removes the pod homes that runs no longer alive left in the root (a server killed with
   * SIGKILL removes none): those a dead run recorded, and runtime-named homes no live run
   * recorded (releases before the records) whose uid runs no process. Never anything else
   * in the root, never a live run's home, never a home a process still runs as (`inUse`).
   */
  sweep(): SweepResult {
    const result = { swept: 0, inUse: 0, dir: this.dir }
    if (process.getuid?.() !== 0) return result // homes are only made as root
    let names: string[]
    try {
      if (!rootOnly(lstatSync(this.dir))) return result
      names = readdirSync(this.dir)
    } catch {
      return result // no root yet: nothing to sweep
    }
    // the homes are listed before the records are read, and a record is written before its home
    const live = new Set<string>()
    const dead: Array<{ runDir: string; homes: string[] }> = []
    for (const name of names) {
      const run = RUN_FOLDER.exec(name)
      const runDir = join(this.dir, name)
      if (!run || !rootOnly(lstatOrUndefined(runDir))) continue
      let homes: string[]
      try {
        homes = readdirSync(runDir)
      } catch {
        continue // another start swept it first
      }
      if (runDir === this.runDir || ownerAlive(Number(run[1]), run[2]!)) for (const h of homes) live.add(h)
      else dead.push({ runDir, homes })
    }
    const busy = uidsInUse()
    const count = (outcome: HomeOutcome) => {
      if (outcome === 'removed') result.swept++
      else if (outcome === 'in use') result.inUse++
      return outcome
    }
    for (const { runDir, homes } of dead) {
      for (const home of homes) {
        if (live.has(home) || count(removeHome(join(this.dir, home), busy)) !== 'in use') rmSync(join(runDir, home), { force: true })
      }
      try {
        rmdirSync(runDir)
      } catch {
        /* a home still in use: looked at again later */
      }
    }
    const recorded = new Set(dead.flatMap((d) => d.homes))
    // without /proc there is no telling whether an unrecorded home's pod still runs
    if (busy) for (const name of names) if (RUNTIME_HOME.test(name) && !live.has(name) && !recorded.has(name)) count(removeHome(join(this.dir, name), busy))
    return result
  }

  /**
   * sweep() now and, when a killed run's pods were still exiting (they follow it within
   * seconds), once more after retryMs; `report` hears of each sweep that found anything.
   */
  sweepLeftovers(report: (result: SweepResult) => void, retryMs = 10_000): void {
    const result = this.sweep()
    if (result.swept || result.inUse) report(result)
    if (result.inUse && retryMs > 0) setTimeout(() => this.sweepLeftovers(report, 0), retryMs).unref()
  }
}

export interface SweepResult {
  /** pod homes removed */
  swept: number
  /** homes left because a process still runs as their uid */
  inUse: number
  /** the homes root */
  dir: string
}

type HomeOutcome = 'removed' | 'in use' | 'kept'

/** a directory owned by root that only root can write */
function rootOnly(st: Stats | undefined): boolean {
  return !!st && st.isDirectory() && st.uid === 0 && (st.mode & 0o022) === 0
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/**
 * Removes a pod's home unless a process still runs as its uid (it may be writing there;
 * `busy` undefined: no /proc to tell). Taken from the uid first, so a process of the uid
 * cannot swap a folder in it for a link while root removes it.
 */
function removeHome(path: string, busy: Set<number> | undefined): HomeOutcome {
  const st = lstatOrUndefined(path)
  if (!st?.isDirectory() || st.uid === 0) return 'kept'
  if (busy?.has(st.uid)) return 'in use'
  try {
    lchownSync(path, 0, 0)
    chmodSync(path, 0o700)
    rmSync(path, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 })
    return 'removed'
  } catch {
    return 'kept'
  }
}

/** the process's start time in clock ticks since boot (/proc/<pid>/stat field 22), where there is a /proc */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // fields after the command name, which may hold spaces and parentheses: state is field 3
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/** whether the run folder's owner still runs: its pid alive and, where /proc says, started when it did */
function ownerAlive(pid: number, start: string): boolean {
  if (!alive(pid)) return false
  if (start === '0') return true
  const now = startTime(pid)
  return now === undefined || now === start
}

/** every uid a process runs as (real, effective, saved, fs), or undefined without /proc */
function uidsInUse(): Set<number> | undefined {
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n))
  } catch {
    return undefined
  }
  const uids = new Set<number>()
  for (const pid of pids) {
    try {
      const line = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
      for (const u of line?.[1]?.trim().split(/\s+/) ?? []) uids.add(Number(u))
    } catch {
      /* exited meanwhile */
    }
  }
  return uids
}

/** the range from the environment (NIGHTJAR_POD_UID_BASE), checked */
export function podUsersFromEnv(env: NodeJS.ProcessEnv = process.env): PodUsers {
  const raw = env.NIGHTJAR_POD_UID_BASE
  if (raw === undefined || raw === '') return new PodUsers()
  const base = Number(raw)
  if (!Number.isInteger(base) || base < 1000 || base > 4_294_000_000) throw new Error('NIGHTJAR_POD_UID_BASE must be a uid between 1000 and 4294000000')
  return new PodUsers({ base })
}
