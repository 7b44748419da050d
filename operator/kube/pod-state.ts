// What a Pod object says about a session's browser (Failed, Ready, Running, Pending), pure
// and shared by the PodRuntime and the PodDirectory so both agree on when a browser is
// Ready. Design: docs/operator.md#pods-on-kubernetes
import { LABELS, SANDBOX_KINDS, type SandboxKind } from '../../crds/types.ts'
import type { PodObservation } from '../../ports/ports.ts'

/** the reason a pod gives when Chromium's sandbox would not start (browser-pod/sandbox.ts) */
const SANDBOX_UNAVAILABLE = 'SandboxUnavailable'
import { CONTAINER_NAME, POD_API_PORT_NAME, POD_ANNOTATIONS, DEFAULT_POD_API_PORT, type PodResource } from './pod-spec.ts'

export const CLAIMED_AT = 'nightjar.dev/claimed-at'

/** waiting reasons that never resolve on their own */
const FATAL_WAITING = new Set(['InvalidImageName', 'ErrImageNeverPull'])

export function sessionOf(pod: PodResource): string | undefined {
  return pod.metadata.labels?.[LABELS.session]
}

export function isConfigured(pod: PodResource): boolean {
  return pod.metadata.annotations?.[POD_ANNOTATIONS.configured] === 'true'
}

/** the pod API answers: the pod runs and its readiness probe (GET /healthz) passes */
export function isUp(pod: PodResource): boolean {
  const st = pod.status
  return st?.phase === 'Running' && !!st.podIP && !!st.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && !pod.metadata.deletionTimestamp
}

export function podApiPortOfPod(pod: PodResource): number {
  const containers = (pod.spec as { containers?: { name?: string; ports?: { name?: string; containerPort?: number }[] }[] }).containers ?? []
  const c = containers.find((x) => x.name === CONTAINER_NAME) ?? containers[0]
  return c?.ports?.find((p) => p.name === POD_API_PORT_NAME)?.containerPort ?? DEFAULT_POD_API_PORT
}

export function endpointOfPod(pod: PodResource): string | undefined {
  const ip = pod.status?.podIP
  if (!ip) return undefined
  return `http://${ip.includes(':') ? `[${ip}]` : ip}:${podApiPortOfPod(pod)}`
}

/** a terminal condition of the pod itself (not counting the start deadline) */
export function podFailure(pod: PodResource): { reason: string; message: string } | undefined {
  const name = pod.metadata.name
  const a = pod.metadata.annotations ?? {}
  if (a[POD_ANNOTATIONS.failureReason]) return { reason: a[POD_ANNOTATIONS.failureReason], message: a[POD_ANNOTATIONS.failureMessage] ?? `browser pod ${name} failed` }
  if (pod.metadata.deletionTimestamp) return { reason: 'PodDeleted', message: `browser pod ${name} is being deleted` }
  const st = pod.status ?? {}
  const c = st.containerStatuses?.find((x) => x.name === CONTAINER_NAME)
  const term = c?.state?.terminated
  if (st.phase === 'Failed' || st.phase === 'Succeeded' || term) {
    const why = term ? `${term.reason ?? 'exited'}${term.exitCode !== undefined ? `, exit code ${term.exitCode}` : ''}` : (st.reason ?? st.phase ?? 'ended')
    // the kernel's OOM kill keeps its own name: it is the one exit a user can act on (a
    // bigger memory limit, a lighter page), so a session shows it as its failure reason
    // so does a sandbox that would not start: the pod says so in its termination message
    if (term?.message?.startsWith(`${SANDBOX_UNAVAILABLE}:`)) return { reason: SANDBOX_UNAVAILABLE, message: `browser pod ${name} ended: ${term.message.slice(SANDBOX_UNAVAILABLE.length + 1).trim().slice(0, 1000)}` }
    return { reason: term?.reason === 'OOMKilled' ? 'OOMKilled' : 'PodExited', message: `browser pod ${name} ended (${why})` }
  }
  const waiting = c?.state?.waiting?.reason
  if (waiting && FATAL_WAITING.has(waiting)) return { reason: 'StartFailed', message: `browser pod ${name} cannot start (${waiting})` }
  return undefined
}

/** when the pod's start clock began: its creation, or its claim from the warm pool */
function startedWaiting(pod: PodResource): number {
  const created = Date.parse(pod.metadata.creationTimestamp ?? '')
  const claimed = Date.parse(pod.metadata.annotations?.[CLAIMED_AT] ?? '')
  return Math.max(Number.isFinite(created) ? created : 0, Number.isFinite(claimed) ? claimed : 0)
}

export function startDeadline(pod: PodResource, startTimeoutMs: number): number {
  return startedWaiting(pod) + startTimeoutMs
}

export function podObservation(sessionId: string, pod: PodResource | undefined, opts: { now: Date; startTimeoutMs: number }): PodObservation {
  if (!pod) return { sessionId, phase: 'Gone' }
  const base = { sessionId, podName: pod.metadata.name }
  const failure = podFailure(pod)
  if (failure) return { ...base, phase: 'Failed', ...failure }
  if (isConfigured(pod) && pod.status?.phase === 'Running' && pod.status.podIP) {
    // Ready stays Ready through a readiness-probe flap: the session's browser is the same one
    const sandbox = pod.metadata.annotations?.[POD_ANNOTATIONS.sandbox]
    return { ...base, phase: 'Ready', endpoint: endpointOfPod(pod), ...(isSandboxKind(sandbox) ? { sandbox } : {}) }
  }
  if (opts.now.getTime() > startDeadline(pod, opts.startTimeoutMs)) {
    return { ...base, phase: 'Failed', reason: 'StartTimeout', message: `browser pod ${pod.metadata.name} was not ready within ${Math.round(opts.startTimeoutMs / 1000)} s` }
  }
  return { ...base, phase: isUp(pod) ? 'Running' : 'Pending' }
}

function isSandboxKind(v: string | undefined): v is SandboxKind {
  return (SANDBOX_KINDS as readonly (string | undefined)[]).includes(v)
}
