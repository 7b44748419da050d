// Pure status derivation for a BrowserSession: given the resource and what the pod
// runtime observes, what should status say? Conditions carry the generation they were
// computed from; timestamps (startedAt, endedAt, lastTransitionTime) are set once, so
// recomputing a settled state yields an identical object — no write.
import { SESSION_CONDITIONS, type BrowserSession, type BrowserSessionStatus } from '../../../crds/types.ts'
import { findCondition, rfc3339, setConditions, type ConditionInput } from '../../conditions.ts'
import type { PodObservation } from '../../../ports/ports.ts'
import { compact } from '../status-writer.ts'

const { Ready, PodScheduled, Degraded } = SESSION_CONDITIONS

/** condition reasons a consumer (api-server, kubectl user) may match on */
export const REASONS = {
  PodAssigned: 'PodAssigned',
  WaitingForPod: 'WaitingForPod',
  PodStarting: 'PodStarting',
  PodReady: 'PodReady',
  PodFailed: 'PodFailed',
  /** the browser container was killed for outgrowing its memory limit */
  OOMKilled: 'OOMKilled',
  /** Chromium's sandbox could not start on the pod's host, and nobody turned it off */
  SandboxUnavailable: 'SandboxUnavailable',
  /** the pod's node stopped answering (kubelet and containers gone): docs/nodes.md */
  NodeLost: 'NodeLost',
  /** the pod's node was drained and the session outlived browserPods.drainGraceSeconds */
  NodeDrained: 'NodeDrained',
  PodDeleted: 'PodDeleted',
  SessionEnded: 'SessionEnded',
  AsExpected: 'AsExpected',
  AuthStateUnavailable: 'AuthStateUnavailable',
  AuthStateNotFound: 'AuthStateNotFound',
} as const

function cond(session: BrowserSession, type: string, status: ConditionInput['status'], reason: string, message: string): ConditionInput {
  return { type, status, reason, message, observedGeneration: session.metadata.generation }
}

/** Pending or Live, from a pod that is not Failed. */
export function statusForPod(session: BrowserSession, pod: PodObservation, now: Date): BrowserSessionStatus {
  const prev = session.status ?? {}
  const assigned = pod.phase !== 'Gone' && !!pod.podName
  const scheduled = assigned
    ? cond(session, PodScheduled, 'True', REASONS.PodAssigned, `browser pod ${pod.podName} assigned`)
    : cond(session, PodScheduled, 'False', REASONS.WaitingForPod, 'waiting for a browser pod')
  const healthy = cond(session, Degraded, 'False', REASONS.AsExpected, 'no problems seen')
  if (pod.phase === 'Ready') {
    return compact({
      phase: 'Live',
      podName: pod.podName,
      sandbox: pod.sandbox ?? prev.sandbox,
      endpoint: pod.endpoint,
      startedAt: prev.startedAt ?? rfc3339(now),
      conditions: setConditions(prev.conditions, [cond(session, Ready, 'True', REASONS.PodReady, 'browser ready'), scheduled, healthy], now),
    })
  }
  return compact({
    phase: 'Pending',
    podName: assigned ? pod.podName : undefined,
    conditions: setConditions(
      prev.conditions,
      [cond(session, Ready, 'False', REASONS.PodStarting, `browser pod ${pod.phase === 'Running' ? 'configuring' : 'starting'}`), scheduled, healthy],
      now,
    ),
  })
}

/** Failed is terminal: the session's browser state is lost with its pod. */
export function failedStatus(session: BrowserSession, reason: string, message: string, now: Date): BrowserSessionStatus {
  const scheduledBefore = findCondition(session.status?.conditions, PodScheduled)
  return terminalStatus(session, 'Failed', [
    cond(session, Ready, 'False', reason, message),
    scheduledBefore
      ? cond(session, PodScheduled, scheduledBefore.status, scheduledBefore.reason, scheduledBefore.message)
      : cond(session, PodScheduled, 'False', REASONS.WaitingForPod, 'no browser pod was assigned'),
    cond(session, Degraded, 'True', reason, message),
  ], now)
}

/** A Failed session seen again: keep everything, only follow the generation. */
export function refreshedFailedStatus(session: BrowserSession, now: Date): BrowserSessionStatus {
  const prev = session.status ?? {}
  const degraded = findCondition(prev.conditions, Degraded)
  return failedStatus(session, degraded?.reason ?? REASONS.PodFailed, degraded?.message ?? 'browser pod failed', now)
}

export function endedStatus(session: BrowserSession, now: Date): BrowserSessionStatus {
  return terminalStatus(session, 'Ended', [
    cond(session, Ready, 'False', REASONS.SessionEnded, 'session ended'),
    cond(session, PodScheduled, 'False', REASONS.PodDeleted, 'browser pod deleted'),
    cond(session, Degraded, 'False', REASONS.AsExpected, 'no problems seen'),
  ], now)
}

/** Failed and Ended alike: the pod's name and the start kept, the end stamped once, the conditions set. */
function terminalStatus(session: BrowserSession, phase: 'Failed' | 'Ended', conditions: ConditionInput[], now: Date): BrowserSessionStatus {
  const prev = session.status ?? {}
  return compact({
    phase,
    podName: prev.podName,
    sandbox: prev.sandbox,
    startedAt: prev.startedAt,
    endedAt: prev.endedAt ?? rfc3339(now),
    conditions: setConditions(prev.conditions, conditions, now),
  })
}
