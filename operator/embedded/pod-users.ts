// Who a browser pod runs as on one machine. Chromium's sandbox refuses root, and a pod
// running as the service's user could read the service's memory; so a root service gives
// each pod a uid of its own (never shared, so pods cannot trace each other) with a private
// home removed on exit. A non-root service starts pods as itself: the sandbox works
// unprivileged, and the pod makes itself non-dumpable (browser-pod/sandbox.ts).
import { randomInt } from 'node:crypto'
import { chownSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

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
  /** where the homes go (default <tmpdir>/nightjar-pods) */
  dir?: string
}

export const DEFAULT_POD_UID_BASE = 2_000_000_000

export class PodUsers {
  private readonly base: number
  private readonly count: number
  private readonly dir: string
  private readonly taken = new Set<number>()
  /** a random start: runtimes in other processes (tests run side by side) rarely pick the same uids */
  private next: number

  constructor(opts: PodUsersOptions = {}) {
    this.base = opts.base ?? DEFAULT_POD_UID_BASE
    this.count = opts.count ?? 10_000
    this.dir = opts.dir ?? join(tmpdir(), 'nightjar-pods')
    this.next = randomInt(this.count)
  }

  /** a user for the pod named `name`, or undefined when this process is not root (pods then run as it) */
  acquire(name: string): PodUser | undefined {
    if (process.getuid?.() !== 0) return undefined
    if (this.taken.size >= this.count) throw new Error(`all ${this.count} browser-pod uids from ${this.base} are in use`)
    while (this.taken.has(this.base + this.next)) this.next = (this.next + 1) % this.count
    const uid = this.base + this.next
    this.next = (this.next + 1) % this.count
    this.taken.add(uid)
    // the parent is passable but not listable: a pod cannot find its neighbours' homes
    mkdirSync(this.dir, { recursive: true, mode: 0o711 })
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
        } catch {
          /* left for the temp folder's cleaner: nothing in it outlives the pod's session */
        }
      },
    }
  }
}

/** the range from the environment (NIGHTJAR_POD_UID_BASE), checked */
export function podUsersFromEnv(env: NodeJS.ProcessEnv = process.env): PodUsers {
  const raw = env.NIGHTJAR_POD_UID_BASE
  if (raw === undefined || raw === '') return new PodUsers()
  const base = Number(raw)
  if (!Number.isInteger(base) || base < 1000 || base > 4_294_000_000) throw new Error('NIGHTJAR_POD_UID_BASE must be a uid between 1000 and 4294000000')
  return new PodUsers({ base })
}
