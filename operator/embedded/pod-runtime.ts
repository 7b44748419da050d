// PodRuntime (and PodDirectory) for one machine: browser pods are child processes, with
// a warm pool so a claim does not wait for Chromium. Pods are single-use, so nothing of
// one session can leak into the next; each gets a fresh token, never logged.
// Design: docs/operator.md#pods-in-the-embedded-runtime
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import type { BrowserKind, SandboxKind } from '../../crds/types.ts'
import type { Logger, PodAccess, PodDirectory, OwnerReference, PodLaunchConfig, PodObservation, PodRuntime } from '../../ports/ports.ts'
import { silentLogger } from '../../ports/ports.ts'
import { configurePod } from '../pod-client.ts'
import { warmPoolSettings } from '../runtime/warm-pool.ts'
import { WarmPoolDriver } from '../runtime/warm-pool-driver.ts'
import { ChildPod, type ExitInfo, type PodCommand } from './child-pod.ts'
import { podUsersFromEnv, type PodUsers } from './pod-users.ts'
import { podTracingEnv } from '../../telemetry/tracing.ts'

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * `node browser-pod/main.ts`, run from the repository root: Node 24 strips the types
 * itself, as in the browser-pod image; an older Node loads tsx first.
 */
export function defaultPodCommand(): PodCommand {
  // (process.features.typescript: 'strip' on Node 24; @types/node for Node 20 does not know it yet)
  const loader = (process.features as { typescript?: unknown }).typescript ? [] : ['--import', 'tsx']
  return { command: process.execPath, args: [...loader, `${REPO_ROOT}browser-pod/main.ts`], cwd: REPO_ROOT }
}

/** environment the pod may inherit; everything else (database URLs, KMS keys) stays out */
const PASS_THROUGH = ['NIGHTJAR_CHROMIUM_PATH', 'NIGHTJAR_HOST_ALIASES', 'NIGHTJAR_DENY_CIDRS', 'NIGHTJAR_TUNNEL_URL', 'NIGHTJAR_BROWSER_SANDBOX']
const BASE_ENV = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ', 'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'FONTCONFIG_PATH']

export interface EmbeddedPodRuntimeOptions {
  command?: PodCommand
  /** started, unclaimed chromium pods kept ready at the least (default 2; 0 = start on demand) */
  poolSize?: number
  /**
   * The pool grows toward recent demand up to this many (default: poolSize, i.e. a fixed
   * pool). Demand is the most claims asked for in any ten seconds within poolWindowMs
   * (by when each start was asked for, so a burst that waited for launch slots counts whole);
   * when it passes out of the window the pool shrinks back, one pod per refill.
   */
  poolMax?: number
  /** how long a burst of claims keeps the pool large (default 120 s) */
  poolWindowMs?: number
  /** pool pods launching at once (default 2): a refill never thrashes the CPU */
  poolLaunchConcurrency?: number
  /**
   * After a claim that leaves a warm pod in the pool, the refill waits this long (default
   * 1 s): a Chromium launch takes a core-second, and the session just claimed is in its
   * latency-critical first steps (connect, first navigation) on the same cores. A claim that
   * empties the pool refills as soon as the warm claims in flight are configured — the next
   * start would be cold otherwise, but a launch begun in the middle of a burst's claims
   * takes their cores (a launch takes over a second; the claims, tens of milliseconds).
   */
  poolRefillDelayMs?: number
  /** source of pass-through variables (default process.env) */
  env?: NodeJS.ProcessEnv
  /** extra variables for every pod (tests use it to steer the fake pod) */
  extraEnv?: Record<string, string>
  /** a pod that prints no ready line in time is killed (default 60 s) */
  readyTimeoutMs?: number
  configureTimeoutMs?: number
  /** SIGTERM → SIGKILL grace (default 5 s) */
  killGraceMs?: number
  /** whom pods run as when this process is root (default: from NIGHTJAR_POD_UID_BASE) */
  users?: PodUsers
  log?: Logger
}

type PodState = 'starting' | 'running' | 'configuring' | 'ready' | 'failed' | 'terminating'

interface PodRecord {
  name: string
  proc: ChildPod
  token: string
  browserKind: BrowserKind
  state: PodState
  /** set when this process is root: the pod's own uid */
  uid?: number
  sessionId?: string
  launch?: PodLaunchConfig
  reason?: string
  message?: string
  /** Ready: what isolates its pages, as the pod said at configure */
  sandbox?: SandboxKind
}

/** diagnostics: what runs right now (tests use it to find pids) */
export interface PodProcessInfo {
  podName: string
  pid?: number
  /** the uid it runs as (its own when this process is root) */
  uid?: number
  state: PodState
  sessionId?: string
}

export class EmbeddedPodRuntime implements PodRuntime, PodDirectory {
  private readonly command: PodCommand
  private readonly pool: WarmPoolDriver
  private readonly readyTimeoutMs: number
  private readonly configureTimeoutMs: number
  private readonly killGraceMs: number
  private readonly log: Logger
  private readonly baseEnv: Record<string, string>
  private readonly users: PodUsers
  /** every live process, by pod name */
  private readonly pods = new Map<string, PodRecord>()
  /** session → its pod; a Failed pod stays here until delete() so observe() reports it */
  private readonly bySession = new Map<string, PodRecord>()
  private readonly listeners = new Set<(sessionId: string) => void>()
  private seq = 0
  private readonly poolClaims = { hits: 0, misses: 0 }
  private refillTimer?: NodeJS.Timeout
  private shrinkTimer?: NodeJS.Timeout
  private closed = false

  constructor(opts: EmbeddedPodRuntimeOptions = {}) {
    this.command = opts.command ?? defaultPodCommand()
    const settings = warmPoolSettings({
      size: opts.poolSize,
      max: opts.poolMax,
      windowMs: opts.poolWindowMs,
      launchConcurrency: opts.poolLaunchConcurrency ?? 2,
      refillDelayMs: opts.poolRefillDelayMs,
      backoff: { initialMs: 200, maxMs: 30_000 },
    })
    this.pool = new WarmPoolDriver(settings, () => this.refillPool())
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 60_000
    this.configureTimeoutMs = opts.configureTimeoutMs ?? 30_000
    this.killGraceMs = opts.killGraceMs ?? 5_000
    this.log = opts.log ?? silentLogger
    const source = opts.env ?? process.env
    this.baseEnv = {}
    for (const key of [...BASE_ENV, ...PASS_THROUGH]) {
      const v = source[key]
      if (v !== undefined) this.baseEnv[key] = v
    }
    // tracing (off unless an OTLP endpoint is set): where pods send spans, never a collector's headers
    Object.assign(this.baseEnv, podTracingEnv(source))
    Object.assign(this.baseEnv, opts.extraEnv)
    this.users = opts.users ?? podUsersFromEnv(source)
  }

  /** sweep the pod homes a killed run left, then fill the warm pool (call once at start-up) */
  start(): void {
    this.users.sweepLeftovers(({ swept, inUse, dir }) =>
      this.log.info({ swept, inUse, dir }, `swept ${swept} browser-pod home(s) left by runs that are gone${inUse ? `; ${inUse} still in use` : ''}`))
    this.refillPool()
  }

  async ensure(config: PodLaunchConfig, _owner: OwnerReference): Promise<PodObservation> {
    if (this.closed) throw new Error('pod runtime is shut down')
    const existing = this.bySession.get(config.sessionId)
    if (existing) return this.observation(config.sessionId, existing)

    const pooled = this.claimFromPool(config.browserKind)
    // the pool serves chromium: only its claims are hits or misses
    if (config.browserKind === 'chromium') this.poolClaims[pooled ? 'hits' : 'misses']++
    const rec = pooled ?? this.spawn(config.browserKind)
    const warm = rec.state === 'running'
    rec.sessionId = config.sessionId
    rec.launch = config
    this.bySession.set(config.sessionId, rec)
    this.log.info({ pod: rec.name, session: config.sessionId, warm }, 'pod claimed')
    this.pool.claimed({ warm, chromium: config.browserKind === 'chromium', requestedAt: config.requestedAt }, Date.now(), this.warmLeft())

    // a warm pod is configured right away, so the first reconcile can already report Live;
    // a cold one reports Pending and notifies subscribers when configure() is done. A warm
    // claim's outcome is this call's answer: a notification would only queue a second
    // reconcile that reads a cache still without the status just written (a 409 and a retry
    // per start in a burst)
    const configured = this.configure(rec, !warm)
    if (warm) {
      // the last claim in flight is configured: the refill an empty pool waited for may start
      await configured.finally(() => this.pool.configured(this.warmLeft()))
    }
    return this.observation(config.sessionId, rec)
  }

  /** the warm pool for metrics: unclaimed pool pods (up or starting), and claims since start */
  poolStats(): { size: number; hits: number; misses: number } {
    let size = 0
    for (const r of this.pods.values()) if (!r.sessionId && (r.state === 'running' || r.state === 'starting')) size++
    return { size, ...this.poolClaims }
  }

  async observe(sessionId: string): Promise<PodObservation> {
    return this.observation(sessionId, this.bySession.get(sessionId))
  }

  async delete(sessionId: string): Promise<void> {
    const rec = this.bySession.get(sessionId)
    if (!rec) return
    this.bySession.delete(sessionId)
    rec.launch = undefined
    if (rec.proc.exited) return
    rec.state = 'terminating'
    this.log.info({ pod: rec.name, session: sessionId }, 'deleting pod')
    await rec.proc.kill(this.killGraceMs)
  }

  async list(): Promise<PodObservation[]> {
    return [...this.bySession.entries()].map(([sid, rec]) => this.observation(sid, rec))
  }

  subscribe(listener: (sessionId: string) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async lookup(sessionId: string): Promise<PodAccess | undefined> {
    const rec = this.bySession.get(sessionId)
    if (!rec || rec.state !== 'ready' || rec.proc.port === undefined) return undefined
    return { endpoint: endpointOf(rec.proc.port), token: rec.token }
  }

  processes(): PodProcessInfo[] {
    return [...this.pods.values()].map((r) => ({ podName: r.name, pid: r.proc.pid, uid: r.uid, state: r.state, sessionId: r.sessionId }))
  }

  /** kill every pod (SIGTERM, then SIGKILL after the grace period); resolves when all exited */
  async shutdown(): Promise<void> {
    this.closed = true
    if (this.refillTimer) clearTimeout(this.refillTimer)
    this.pool.stop()
    if (this.shrinkTimer) clearTimeout(this.shrinkTimer)
    this.listeners.clear()
    const all = [...this.pods.values()]
    for (const rec of all) rec.state = 'terminating'
    await Promise.all(all.map((rec) => rec.proc.kill(this.killGraceMs)))
    this.bySession.clear()
  }

  // --- pool ---------------------------------------------------------------------------

  /** a pool pod for this kind, preferring one that is already up */
  private claimFromPool(kind: BrowserKind): PodRecord | undefined {
    const free = [...this.pods.values()].filter((r) => !r.sessionId && r.browserKind === kind && (r.state === 'running' || r.state === 'starting'))
    return free.find((r) => r.state === 'running') ?? free[0]
  }

  /** how many pool pods recent demand asks for, between poolSize and poolMax */
  poolTarget(now = Date.now()): number {
    return this.pool.target(now)
  }

  private warmLeft(): boolean {
    return [...this.pods.values()].some((r) => !r.sessionId && r.browserKind === 'chromium' && r.state === 'running')
  }

  /**
   * Top the pool up to its target of unclaimed chromium pods, launching at most
   * poolLaunchConcurrency at once (each launch that comes up, or dies, refills again);
   * above the target, retire one idle pod per pass. Only chromium is pooled: cloak is rare
   * and governed, so it starts on demand. Pool pods that keep dying before they are
   * claimed are replaced with backoff, not in a hot loop.
   */
  private refillPool(): void {
    if (this.closed || this.refillTimer) return
    const delay = this.pool.refillDelay()
    if (delay === 0) return this.topUp()
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined
      this.topUp()
    }, delay)
  }

  private topUp(): void {
    if (this.closed) return
    const all = [...this.pods.values()]
    const pool = all.filter((r) => !r.sessionId && r.browserKind === 'chromium' && (r.state === 'starting' || r.state === 'running'))
    const counts = { pool: pool.length, launching: all.filter((r) => r.state === 'starting').length, idle: pool.filter((r) => r.state === 'running').length }
    const plan = this.pool.plan(counts, Date.now())
    for (let i = 0; i < plan.launch; i++) this.spawn('chromium')
    const idle = plan.retire ? pool.find((r) => r.state === 'running') : undefined
    if (idle) {
      idle.state = 'terminating'
      this.log.debug({ pod: idle.name }, 'pool shrinks to recent demand')
      void idle.proc.kill(this.killGraceMs)
    }
    if (plan.lookAgainMs !== undefined && !this.shrinkTimer) {
      this.shrinkTimer = setTimeout(() => {
        this.shrinkTimer = undefined
        this.refillPool()
      }, plan.lookAgainMs)
      this.shrinkTimer.unref()
    }
  }

  private spawn(kind: BrowserKind): PodRecord {
    const name = `browser-pod-${(++this.seq).toString(36)}-${randomBytes(3).toString('hex')}`
    const token = randomBytes(32).toString('base64url')
    const user = this.users.acquire(name)
    const env: Record<string, string> = {
      ...this.baseEnv,
      ...(user ? { HOME: user.home, TMPDIR: user.home } : {}),
      NIGHTJAR_POD_TOKEN: token,
      NIGHTJAR_POD_HOST: '127.0.0.1',
      NIGHTJAR_POD_PORT: '0',
      NIGHTJAR_BROWSER_KIND: kind,
      NIGHTJAR_POD_NAME: name,
      NIGHTJAR_POD_SHARED_LOOPBACK: '1',
    }
    const rec: PodRecord = {
      name,
      token,
      browserKind: kind,
      state: 'starting',
      uid: user?.uid,
      proc: new ChildPod({
        name,
        command: this.command,
        env,
        token,
        user,
        readyTimeoutMs: this.readyTimeoutMs,
        log: this.log,
        onExit: (info) => {
          user?.release()
          this.onExit(rec, info)
        },
      }),
    }
    this.pods.set(name, rec)
    rec.proc.ready.then(
      () => {
        if (rec.state !== 'starting') return
        rec.state = 'running'
        // a healthy pool pod ends any crash backoff; a claimed one is configure()'s business
        if (!rec.sessionId) this.pool.podUp()
        this.refillPool() // a launch slot is free
      },
      () => {},
    )
    this.log.debug({ pod: name, pid: rec.proc.pid, kind }, 'pod started')
    return rec
  }

  // --- session pods -------------------------------------------------------------------

  /** wait for the pod to be up, then POST /v1/configure; any failure fails the pod */
  private async configure(rec: PodRecord, notifyWhenDone: boolean): Promise<void> {
    const sessionId = rec.sessionId!
    try {
      const port = await rec.proc.ready
      if (rec.state !== 'starting' && rec.state !== 'running') return // deleted or died meanwhile
      rec.state = 'configuring'
      const launch = rec.launch!
      const outcome = await configurePod(
        endpointOf(port),
        rec.token,
        {
          sessionId,
          egress: { mode: launch.egress.mode, declaredHosts: launch.egress.declaredHosts },
          ...(launch.viewport ? { viewport: launch.viewport } : {}),
          ...(launch.storageState ? { storageState: launch.storageState } : {}),
        },
        this.configureTimeoutMs,
      )
      if (!outcome.ok) throw new Error(outcome.message)
      rec.sandbox = outcome.sandbox
      // the auth-state was only needed for this call: do not keep it in memory
      if (rec.launch) rec.launch = { ...rec.launch, storageState: undefined }
      if (rec.state !== 'configuring') return
      rec.state = 'ready'
      this.log.info({ pod: rec.name, session: sessionId }, 'pod ready')
    } catch (err) {
      if (rec.state === 'terminating' || rec.state === 'failed' || rec.proc.exited) return
      rec.state = 'failed'
      rec.reason = 'ConfigureFailed'
      rec.message = `browser pod could not be configured: ${err instanceof Error ? err.message : 'error'}`
      this.log.warn({ pod: rec.name, session: sessionId, reason: rec.reason }, rec.message)
      void rec.proc.kill(this.killGraceMs)
    }
    if (notifyWhenDone) this.notify(sessionId)
  }

  private onExit(rec: PodRecord, info: ExitInfo): void {
    this.pods.delete(rec.name)
    const how = info.spawnError ? `could not start (${info.spawnError})` : info.signal ? `was killed (${info.signal})` : `exited (code ${info.code})`
    if (rec.state === 'terminating' || this.closed) return
    if (rec.sessionId) {
      if (rec.state !== 'failed') {
        rec.state = 'failed'
        rec.reason = info.reason?.reason ?? (info.beforeReady ? 'StartFailed' : 'PodExited')
        rec.message = info.reason ? `browser pod ${rec.name} ${how}: ${info.reason.message}` : `browser pod ${rec.name} ${how}`
        this.log.warn({ pod: rec.name, session: rec.sessionId, code: info.code, signal: info.signal }, 'session pod died')
      }
      rec.launch = undefined
      this.notify(rec.sessionId)
      return
    }
    // an unclaimed pool pod died: replace it (with backoff if they keep dying)
    this.pool.podFailed()
    this.log.warn({ pod: rec.name, code: info.code, signal: info.signal, reason: info.reason?.reason }, `pool pod ${how}${info.reason ? ` (${info.reason.reason}: ${info.reason.message})` : ''}; replacing`)
    this.refillPool()
  }

  private observation(sessionId: string, rec: PodRecord | undefined): PodObservation {
    if (!rec) return { sessionId, phase: 'Gone' }
    const base = { sessionId, podName: rec.name }
    switch (rec.state) {
      case 'starting':
        return { ...base, phase: 'Pending' }
      case 'running':
      case 'configuring':
        return { ...base, phase: 'Running' }
      case 'ready':
        return { ...base, phase: 'Ready', endpoint: endpointOf(rec.proc.port!), ...(rec.sandbox ? { sandbox: rec.sandbox } : {}) }
      case 'failed':
        return { ...base, phase: 'Failed', reason: rec.reason, message: rec.message }
      case 'terminating':
        return { ...base, phase: 'Pending' }
    }
  }

  private notify(sessionId: string): void {
    for (const l of this.listeners) {
      try {
        l(sessionId)
      } catch (err) {
        this.log.error({ err: String(err) }, 'pod listener threw')
      }
    }
  }
}

function endpointOf(port: number): string {
  return `http://127.0.0.1:${port}`
}
