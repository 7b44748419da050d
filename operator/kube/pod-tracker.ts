// Session pods as the kube pod runtime follows them: which pod is whose (from the informer,
// with a fresh read where a stale cache could make a new pod look gone), when a session's
// phase changed (its listeners are told), the start deadline nobody writes, and waiting for
// a deleted pod to be gone. Design: docs/operator.md#pods-on-kubernetes
import { createHash } from 'node:crypto'
import { LABELS } from '../../crds/types.ts'
import type { PodObservation, PodPhase } from '../../ports/ports.ts'
import { BROWSER_POD_SELECTOR, type PodResource } from './pod-spec.ts'
import { podObservation, sessionOf, startDeadline } from './pod-state.ts'
import { dropTimer, errText, type PodRoomDeps } from './pod-writes.ts'

/** the api-server having no pod for a session stands for this long (observe() then ensure() in one reconcile) */
const MISS_REUSE_MS = 1000

export interface PodTrackerOptions {
  startTimeoutMs: number
  deleteTimeoutMs: number
  /** could a pool pod have been claimed for a session without the cache showing it yet? */
  poolMayHoldClaims(): boolean
}

export class PodTracker {
  private readonly deps: PodRoomDeps
  private readonly opts: PodTrackerOptions
  /** session id → pod name, from the informer */
  private readonly bySession = new Map<string, string>()
  private readonly lastPhase = new Map<string, PodPhase>()
  private readonly deadlines = new Map<string, NodeJS.Timeout>()
  private readonly goneWaiters = new Map<string, Set<() => void>>()
  private readonly listeners = new Set<(sessionId: string) => void>()
  /** session id → when the api-server had no pod for it (findPod) */
  private readonly freshMisses = new Map<string, number>()
  /** sessions whose pool claim failed without a known outcome (a claim patch may have landed) */
  private readonly uncertainClaims = new Set<string>()

  constructor(deps: PodRoomDeps, opts: PodTrackerOptions) {
    this.deps = deps
    this.opts = opts
  }

  stop(): void {
    for (const t of this.deadlines.values()) clearTimeout(t)
    this.deadlines.clear()
    this.listeners.clear()
    for (const set of this.goneWaiters.values()) for (const w of set) w()
    this.goneWaiters.clear()
  }

  subscribe(listener: (sessionId: string) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  podNameOf(sessionId: string): string | undefined {
    return this.bySession.get(sessionId)
  }

  assign(sessionId: string, podName: string): void {
    this.bySession.set(sessionId, podName)
  }

  /** a miss is only ever reused from observe() into the ensure() of the same reconcile */
  dropMiss(sessionId: string): void {
    this.freshMisses.delete(sessionId)
  }

  /** a claim patch failed without a known outcome: look with a list next time */
  claimUncertain(sessionId: string): void {
    this.uncertainClaims.add(sessionId)
  }

  /** the session is being deleted */
  forgetSession(sessionId: string): void {
    dropTimer(this.deadlines, sessionId)
    this.uncertainClaims.delete(sessionId)
    this.freshMisses.delete(sessionId)
  }

  /** its pods deleted: the session no longer has one */
  released(sessionId: string, podNames: Set<string>): void {
    const name = this.bySession.get(sessionId)
    if (name && podNames.has(name)) this.bySession.delete(sessionId)
  }

  /** the informer saw a session's pod */
  tracked(sessionId: string, pod: PodResource): void {
    this.bySession.set(sessionId, pod.metadata.name)
    this.uncertainClaims.delete(sessionId)
    this.freshMisses.delete(sessionId)
  }

  /** the informer saw a pod deleted */
  untracked(pod: PodResource): void {
    const name = pod.metadata.name
    for (const w of this.goneWaiters.get(name) ?? []) w()
    this.goneWaiters.delete(name)
    const sid = sessionOf(pod)
    if (sid && this.bySession.get(sid) === name) {
      this.bySession.delete(sid)
      dropTimer(this.deadlines, sid)
      this.lastPhase.delete(sid)
      this.notify(sid)
    }
  }

  observation(sessionId: string, pod: PodResource | undefined): PodObservation {
    return podObservation(sessionId, pod, { now: this.deps.now(), startTimeoutMs: this.opts.startTimeoutMs })
  }

  /**
   * The session's pod: from the cache, else from the api-server (never a false "Gone": a pod
   * created or claimed a moment ago may not have reached the informer yet). Reads are by name
   * where a name is known; the list remains only where an unseen claim of ours may exist,
   * and is answered from the api-server's watch cache as fresh as our last write (read from
   * etcd, a label-selected list decodes every pod of the namespace: O(N²) as sessions grow).
   * Within one reconcile, observe() and ensure() share a fresh look that found nothing.
   */
  async findPod(sessionId: string): Promise<PodResource | undefined> {
    const { informer, pods } = this.deps
    const name = this.bySession.get(sessionId)
    const cached = name ? informer.get(name) : undefined
    if (cached && sessionOf(cached) === sessionId) return cached
    const missed = this.freshMisses.get(sessionId)
    if (!name && missed !== undefined && !this.uncertainClaims.has(sessionId) && this.deps.now().getTime() - missed < MISS_REUSE_MS) return undefined
    // the reads by name and the list run side by side: a start that finds nothing (the
    // common case) waits for one round trip, not two
    const byName = [...new Set([...(name ? [name] : []), sessionPodName(sessionId)])]
      .filter((candidate) => !informer.get(candidate)) // cached, and not this session's
      .map((candidate) => pods.get(candidate))
    const claimsPossible = this.opts.poolMayHoldClaims() || this.uncertainClaims.has(sessionId)
    const listed = claimsPossible ? pods.list({ labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}=${sessionId}`, fresherThanOwnWrites: true }) : undefined
    void listed?.catch(() => undefined) // awaited below unless a read by name answers first
    for (const pod of await Promise.all(byName)) if (pod && sessionOf(pod) === sessionId) return pod
    if (!listed) {
      this.rememberMiss(sessionId)
      return undefined
    }
    const { items } = await listed
    if (!items.length) this.rememberMiss(sessionId)
    // prefer a pod that is not on its way out
    return items.find((p) => !p.metadata.deletionTimestamp) ?? items[0]
  }

  private rememberMiss(sessionId: string): void {
    this.freshMisses.set(sessionId, this.deps.now().getTime())
    if (this.freshMisses.size > 10_000) this.freshMisses.delete(this.freshMisses.keys().next().value!)
  }

  /** tells the session's listeners when its phase moved; keeps the start deadline while it starts */
  phaseMaybeChanged(sid: string, pod: PodResource): void {
    const obs = this.observation(sid, pod)
    if (obs.phase === 'Pending' || obs.phase === 'Running') this.armDeadline(sid, pod)
    else dropTimer(this.deadlines, sid)
    if (this.lastPhase.get(sid) === obs.phase) return
    this.lastPhase.set(sid, obs.phase)
    this.notify(sid)
  }

  /** the start deadline is a change nobody writes: a timer brings the session back to be failed */
  private armDeadline(sid: string, pod: PodResource): void {
    if (this.deadlines.has(sid) || this.deps.closed()) return
    const delay = Math.max(0, startDeadline(pod, this.opts.startTimeoutMs) - this.deps.now().getTime()) + 50
    const timer = setTimeout(() => {
      this.deadlines.delete(sid)
      this.lastPhase.delete(sid)
      this.notify(sid)
    }, delay)
    timer.unref()
    this.deadlines.set(sid, timer)
  }

  private notify(sid: string): void {
    for (const l of this.listeners) {
      try {
        l(sid)
      } catch (err) {
        this.deps.log.error({ err: errText(err) }, 'pod listener threw')
      }
    }
  }

  /** resolves when the informer reports the pod deleted, or confirm() finds it gone */
  waitGone(name: string): { promise: Promise<void>; confirm(): void; cancel(): void } {
    let set = this.goneWaiters.get(name)
    if (!set) this.goneWaiters.set(name, (set = new Set()))
    const waiters = set
    let resolve!: () => void
    let reject!: (e: Error) => void
    const promise = new Promise<void>((res, rej) => {
      resolve = res
      reject = rej
    })
    const finish = () => {
      clearTimeout(timer)
      waiters.delete(finish)
      resolve()
    }
    const timer = setTimeout(() => {
      waiters.delete(finish)
      reject(new Error(`browser pod ${name} still terminating after ${this.opts.deleteTimeoutMs} ms`))
    }, this.opts.deleteTimeoutMs)
    waiters.add(finish)
    return {
      promise,
      cancel: finish,
      // the DELETED event may have passed before we started waiting: ask the api-server
      confirm: () =>
        void this.deps.pods.get(name).then(
          (p) => {
            if (!p) finish()
          },
          () => {},
        ),
    }
  }
}

/** a DNS-1123 name derived from the session id (which has upper case and '_'), stable across retries */
export function sessionPodName(sessionId: string): string {
  const digest = createHash('sha256').update(sessionId).digest()
  return `nightjar-browser-s${base32(digest).slice(0, 20)}`
}

export function base32(buf: Buffer): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567'
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of buf) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return out
}
