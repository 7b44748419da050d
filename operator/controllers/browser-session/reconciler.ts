// The BrowserSession reconciler (kubebuilder style): read → handle deletion/end → desired
// pod → apply via PodRuntime → derive status → write status only if changed. No finalizer
// (the pod goes with its ownerReference); Ended and Failed are terminal, because a
// session's browser state died with its pod, so a terminal session only has its pod deleted.
// Design: docs/operator.md#the-browsersession-reconciler
import { ANNOTATIONS, type BrowserSession } from '../../../crds/types.ts'
import { contextFrom, inSpan } from '../../../telemetry/tracing.ts'
import type { AuthStateSource, EventRecorder, EventSubject, EventType, Logger, ObjectReader, PodLaunchConfig, PodObservation, PodRuntime, ResourceClient } from '../../../ports/ports.ts'
import { silentEvents, silentLogger } from '../../../ports/ports.ts'
import { isNotFound } from '../../../ports/errors.ts'
import type { ReconcileOutcome, Reconciler } from '../../runtime/controller.ts'
import type { OperatorMetrics } from '../../runtime/metrics.ts'
import { writeStatusIfChanged } from '../status-writer.ts'
import { desiredPod, ownerReference } from './desired-pod.ts'
import { endedStatus, failedStatus, REASONS, refreshedFailedStatus, statusForPod } from './status.ts'

/** pod failure reasons a user can act on, kept as the session's failureReason (every other one is PodFailed) */
const KEPT_REASONS = new Set<string>([REASONS.OOMKilled, REASONS.SandboxUnavailable, REASONS.NodeLost, REASONS.NodeDrained])

export interface BrowserSessionReconcilerDeps {
  sessions: ResourceClient<BrowserSession>
  /** where to read from (an informer cache); defaults to the client */
  cache?: ObjectReader<BrowserSession>
  pods: PodRuntime
  authState?: AuthStateSource
  now?: () => number
  log?: Logger
  /** Kubernetes Events on the session for `kubectl describe` (default: none) */
  events?: EventRecorder
  /** delete Ended/Failed resources this long after they ended (default: keep them) */
  retentionMs?: number
  /** counts pod failures by cause (default: not counted) */
  metrics?: Pick<OperatorMetrics, 'podFailed'>
}

export class BrowserSessionReconciler implements Reconciler {
  private readonly reader: ObjectReader<BrowserSession>
  private readonly now: () => Date
  private readonly log: Logger
  private readonly events: EventRecorder

  private readonly deps: BrowserSessionReconcilerDeps
  constructor(deps: BrowserSessionReconcilerDeps) {
    this.deps = deps
    this.reader = deps.cache ?? deps.sessions
    const clock = deps.now ?? Date.now
    this.now = () => new Date(clock())
    this.log = deps.log ?? silentLogger
    this.events = deps.events ?? silentEvents
  }

  async reconcile(name: string): Promise<ReconcileOutcome | void> {
    let fresh = this.reader === this.deps.sessions
    let session = await this.reader.get(name)
    // A cache miss is confirmed against the server before it deletes anything: a cache
    // that has not seen a brand-new session yet must not cost that session its pod.
    if (!session && !fresh) {
      session = await this.deps.sessions.get(name)
      fresh = true
    }
    // a starting session's reconciles join the trace of the request that started it (the
    // annotation the api-server wrote); settled sessions' resyncs are not traced
    const traceparent = session?.metadata.annotations?.[ANNOTATIONS.traceparent]
    const starting = session && !session.metadata.deletionTimestamp && (!session.status?.phase || session.status.phase === 'Pending') && session.spec.desiredState !== 'Ended'
    if (!traceparent || !starting) return this.reconcileSession(name, session, fresh)
    return inSpan('BrowserSession reconcile', { parent: contextFrom(traceparent), attributes: { 'nightjar.session.id': name } }, () => this.reconcileSession(name, session, fresh))
  }

  private async reconcileSession(name: string, session: BrowserSession | undefined, fresh: boolean): Promise<ReconcileOutcome | void> {
    const { pods, sessions } = this.deps
    if (!session || session.metadata.deletionTimestamp) {
      await pods.delete(name)
      return
    }
    const phase = session.status?.phase

    if (phase === 'Failed') {
      // terminal: the pod is already dead; make sure its remains are gone
      await pods.delete(name)
      const status = refreshedFailedStatus(session, this.now())
      await writeStatusIfChanged(sessions, session, status)
      return this.retain(name, status.endedAt)
    }

    if (session.spec.desiredState === 'Ended' || phase === 'Ended') {
      // pod first, then status: once a session reads Ended its browser is really gone,
      // so the api-server may release the lease on seeing it
      await pods.delete(name)
      const status = endedStatus(session, this.now())
      if (await writeStatusIfChanged(sessions, session, status)) {
        // ended while starting: its auth-state may not have been used
        await this.releaseAuthState(session)
        this.log.info({ session: name }, 'session ended')
        this.event(session, 'Normal', 'Ended', 'session ended; its browser pod is deleted')
      }
      return this.retain(name, status.endedAt)
    }

    // a starting session without a pod will need the server's copy before one is made (below):
    // it is read beside the pod lookup, so a start waits for one round trip instead of two
    const serverCopy = !fresh && !session.status?.podName && (!phase || phase === 'Pending') ? sessions.get(name) : undefined
    void serverCopy?.catch(() => undefined) // awaited below only when the pod is gone
    let pod = await pods.observe(name)
    if (pod.phase === 'Gone') {
      if (session.status?.podName) return this.fail(session, REASONS.PodFailed, `browser pod ${session.status.podName} disappeared`, 'PodLost')
      // Creating a pod is a side effect no resourceVersion precondition can undo, so it is
      // decided on the server's current object, never on a possibly stale cache (which
      // might not show yet that this session already failed or ended).
      if (!fresh) return this.reconcileSession(name, await (serverCopy ?? sessions.get(name)), true)
      const launch = await this.launchConfig(session)
      if ('failed' in launch) return this.fail(session, launch.failed, launch.message)
      pod = await pods.ensure(launch.config, ownerReference(session))
      // the runtime holds the auth-state now (and never asks for it again): no copy stays behind
      if (launch.config.storageState) await this.releaseAuthState(session)
    }
    if (pod.phase === 'Failed') {
      // the reasons a user can act on keep their names; every other pod failure is PodFailed
      const reason = KEPT_REASONS.has(pod.reason ?? '') ? pod.reason! : REASONS.PodFailed
      return this.fail(session, reason, pod.message || `browser pod failed${pod.reason ? ` (${pod.reason})` : ''}`, pod.reason)
    }
    const next = statusForPod(session, pod, this.now())
    const wrote = await writeStatusIfChanged(sessions, session, next)
    if (wrote) {
      this.log.debug({ session: name, pod: pod.podName, podPhase: pod.phase }, 'session status updated')
      this.transitionEvents(session, next.podName, next.phase, pod)
    }
  }

  /** a terminal resource past its retention is deleted; before that, come back when it is due */
  private async retain(name: string, endedAt: string | undefined): Promise<ReconcileOutcome | void> {
    const keep = this.deps.retentionMs
    if (keep === undefined || !endedAt) return
    const due = Date.parse(endedAt) + keep - this.now().getTime()
    if (due > 0) return { requeueAfterMs: due }
    try {
      await this.deps.sessions.delete(name)
      this.log.debug({ session: name }, 'ended session resource deleted after its retention')
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
  }

  /**
   * One Normal event on the happy path (Live, naming the pod), so a burst of starts costs the
   * api-server one event write per session, not one per step; the steps are in status.
   */
  private transitionEvents(session: BrowserSession, podName: string | undefined, phase: string | undefined, pod: PodObservation): void {
    if (phase === 'Live' && session.status?.phase !== 'Live') this.event(session, 'Normal', 'Live', `browser pod ${podName} ready at ${pod.endpoint}`)
  }

  private event(session: BrowserSession, type: EventType, reason: string, message: string): void {
    const m = session.metadata
    const subject: EventSubject = { apiVersion: session.apiVersion, kind: session.kind || 'BrowserSession', name: m.name, namespace: m.namespace, uid: m.uid }
    this.events.record(subject, type, reason, message)
  }

  /**
   * Status first, then the pod: a failed write retries while the dead pod still explains why.
   * The event carries the specific cause (StartTimeout, PodExited, PodLost…) where the
   * condition keeps the stable reason API callers match on.
   */
  private async fail(session: BrowserSession, reason: string, message: string, cause?: string): Promise<void> {
    if (await writeStatusIfChanged(this.deps.sessions, session, failedStatus(session, reason, message, this.now()))) {
      this.log.warn({ session: session.metadata.name, reason, message }, 'session failed')
      this.event(session, 'Warning', cause ?? reason, message)
      this.deps.metrics?.podFailed(cause ?? reason)
      await this.releaseAuthState(session)
    }
    await this.deps.pods.delete(session.metadata.name)
  }

  /**
   * A warm-resume session's auth-state is credential-equivalent: where the source keeps a copy
   * (Kubernetes: a Secret the api-server wrote), it goes as soon as nothing needs it. Best
   * effort: a copy that stays is removed with the resource (owned by it), so a failure here
   * must not fail the reconcile.
   */
  private async releaseAuthState(session: BrowserSession): Promise<void> {
    const source = this.deps.authState
    if (!session.spec.warmResume || !source?.release) return
    await source.release(session.metadata.name).catch((err: unknown) => {
      this.log.warn({ session: session.metadata.name, err: err instanceof Error ? err.message : String(err) }, 'could not drop the handed-over auth-state; it goes with the resource')
    })
  }

  /** the desired pod plus, for a warm resume, the decrypted auth-state (in memory only) */
  private async launchConfig(session: BrowserSession): Promise<{ config: PodLaunchConfig } | { failed: string; message: string }> {
    const config = desiredPod(session)
    const warm = session.spec.warmResume
    if (!warm) return { config }
    if (!this.deps.authState) return { failed: REASONS.AuthStateUnavailable, message: 'warm resume is not available in this deployment' }
    const storageState = await this.deps.authState.load({
      name: session.metadata.name,
      orgId: session.spec.orgId,
      identityId: session.spec.identityId,
      versionId: warm.versionId,
      createdAt: session.metadata.creationTimestamp,
    })
    if (!storageState) return { failed: REASONS.AuthStateNotFound, message: `auth-state version ${warm.versionId} not found` }
    return { config: { ...config, storageState } }
  }
}
