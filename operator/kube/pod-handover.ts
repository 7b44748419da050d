// The hand-over of a claimed or started pod to its session: POST /v1/configure on the pod's
// API with the session's egress, viewport and auth-state (kept in memory only until then),
// then the configured mark on the pod. Retried while the api-server has trouble; a pod
// that cannot be configured is marked failed. Design: docs/operator.md#pods-on-kubernetes
import { EGRESS_MODES, type EgressMode, type Viewport } from '../../crds/types.ts'
import type { StorageState } from '../../ports/ports.ts'
import { inContext, tracedContext, type Context } from '../../telemetry/tracing.ts'
import { backoffDelay } from '../../watch/backoff.ts'
import { configurePod, type ConfigureInput } from '../pod-client.ts'
import { POD_ANNOTATIONS, type PodResource } from './pod-spec.ts'
import { endpointOfPod, isConfigured, isUp, podFailure, sessionOf } from './pod-state.ts'
import { errText, markFailed, type PodRoomDeps } from './pod-writes.ts'
import { tokenSecretName, type TokenSecrets } from './token-secrets.ts'

/** the non-secret part of the launch config, kept on the pod as an annotation */
export interface LaunchAnnotation {
  sessionId: string
  egress: { mode: EgressMode; declaredHosts: string[] }
  viewport?: Viewport
  /** the launch carried an auth-state (held in memory only) */
  storageState?: boolean
}

const CONFIGURE_ATTEMPTS = 4

export class PodHandover {
  private readonly deps: PodRoomDeps
  private readonly secrets: TokenSecrets
  private readonly timeoutMs: number
  /** pod name → pod token; in memory only */
  private readonly tokens = new Map<string, string>()
  /** session id → auth-state awaiting configure; in memory only */
  private readonly storageStates = new Map<string, StorageState>()
  /** the start's trace, per session, for a cold pod configured later from a watch event (only while tracing) */
  private readonly startTraces = new Map<string, Context>()
  private readonly configuring = new Map<string, Promise<PodResource | undefined>>()

  constructor(deps: PodRoomDeps, secrets: TokenSecrets, timeoutMs: number) {
    this.deps = deps
    this.secrets = secrets
    this.timeoutMs = timeoutMs
  }

  /** a session's start: what its configure will need that the pod does not carry */
  begin(sessionId: string, storageState: StorageState | undefined): void {
    if (storageState) this.storageStates.set(sessionId, storageState)
    const traced = tracedContext()
    if (traced) this.startTraces.set(sessionId, traced)
  }

  forgetSession(sessionId: string): void {
    this.storageStates.delete(sessionId)
    this.startTraces.delete(sessionId)
  }

  rememberToken(podName: string, token: string): void {
    this.tokens.set(podName, token)
  }

  forgetToken(podName: string): void {
    this.tokens.delete(podName)
  }

  /** never rejects: a failure either marks the pod failed or is retried later; resolves with the pod marked configured, when it was */
  configure(pod: PodResource, attempt = 0): Promise<PodResource | undefined> {
    const name = pod.metadata.name
    const running = this.configuring.get(name)
    if (running) return running
    // a cold pod comes up in a watch event: its configure joins the session start's trace
    const traced = this.startTraces.get(sessionOf(pod) ?? '')
    const p = (traced ? inContext(traced, () => this.doConfigure(pod)) : this.doConfigure(pod))
      .catch((err) => {
        // api-server trouble (reading the token, writing the annotation): try again later
        this.deps.log.warn({ pod: name, err: errText(err) }, 'configure step failed; retrying')
        if (this.deps.closed() || attempt >= 5) return undefined
        const timer = setTimeout(() => {
          const fresh = this.deps.informer.get(name)
          if (fresh && sessionOf(fresh) && isUp(fresh) && !isConfigured(fresh) && !podFailure(fresh)) void this.configure(fresh, attempt + 1)
        }, backoffDelay(attempt, { initialMs: 500, maxMs: 10_000, jitter: 0.3 }))
        timer.unref()
        return undefined
      })
      .finally(() => this.configuring.delete(name))
    this.configuring.set(name, p)
    return p
  }

  private async doConfigure(pod: PodResource): Promise<PodResource | undefined> {
    const name = pod.metadata.name
    const sid = sessionOf(pod)!
    const launch = parseLaunch(pod.metadata.annotations?.[POD_ANNOTATIONS.launch])
    if (!launch || launch.sessionId !== sid) return markFailed(this.deps, pod, 'ConfigureFailed', 'browser pod has no launch settings for its session')
    const storageState = launch.storageState ? this.storageStates.get(sid) : undefined
    if (launch.storageState && !storageState) {
      return markFailed(this.deps, pod, 'ConfigureFailed', 'the warm-resume auth-state is no longer available (the operator restarted before the pod was configured)')
    }
    const endpoint = endpointOfPod(pod)
    const token = this.tokens.get(name) ?? (await this.secrets.read(pod.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(name)))
    if (!endpoint || !token) return markFailed(this.deps, pod, 'ConfigureFailed', 'browser pod has no address or no token')
    const body: ConfigureInput = { sessionId: sid, egress: launch.egress, ...(launch.viewport ? { viewport: launch.viewport } : {}), ...(storageState ? { storageState } : {}) }

    let outcome = await configurePod(endpoint, token, body, this.timeoutMs)
    for (let attempt = 1; !outcome.ok && outcome.retryable && attempt < CONFIGURE_ATTEMPTS && !this.deps.closed(); attempt++) {
      await new Promise((r) => setTimeout(r, backoffDelay(attempt - 1, { initialMs: 250, maxMs: 5000, jitter: 0.3 })))
      outcome = await configurePod(endpoint, token, body, this.timeoutMs)
    }
    if (!outcome.ok) return markFailed(this.deps, pod, 'ConfigureFailed', `browser pod could not be configured: ${outcome.message}`)
    // the auth-state was only needed for this call
    this.forgetSession(sid)
    return this.markConfigured(name, sid, outcome.sandbox)
  }

  private async markConfigured(name: string, sid: string, sandbox: string | undefined): Promise<PodResource | undefined> {
    try {
      const annotations: Record<string, string> = { [POD_ANNOTATIONS.configured]: 'true' }
      if (sandbox) annotations[POD_ANNOTATIONS.sandbox] = sandbox
      const marked = await this.deps.pods.patch(name, { metadata: { annotations } })
      this.deps.log.info({ session: sid, pod: name }, 'browser pod configured')
      return marked
    } catch (err) {
      // the next informer event retries; configure is idempotent through the 409 check
      this.deps.log.warn({ session: sid, pod: name, err: errText(err) }, 'could not record the configured pod')
      return undefined
    }
  }
}

function parseLaunch(raw: string | undefined): LaunchAnnotation | undefined {
  if (!raw) return undefined
  try {
    const v = JSON.parse(raw) as LaunchAnnotation
    return typeof v?.sessionId === 'string' && EGRESS_MODES.includes(v.egress?.mode) && Array.isArray(v.egress.declaredHosts) ? v : undefined
  } catch {
    return undefined
  }
}
