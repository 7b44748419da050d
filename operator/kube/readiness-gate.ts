// A browser pod's readiness gate (READINESS_GATE): the operator, not a kubelet probe, says
// when the pod API is up. It asks GET /healthz from the moment the container runs and sets
// the gate's condition True beside the kubelet's (a strategic-merge status patch); the
// kubelet then marks the pod Ready. Used by the PodRuntime, and by the node bench, which
// starts pods without an operator. Design: docs/operator.md#pods-on-kubernetes
import { setTimeout as sleep } from 'node:timers/promises'
import { podHealthy } from '../pod-client.ts'
import { READINESS_GATE, type PodResource } from './pod-spec.ts'
import { awaitsGate, endpointOfPod, gateStillShut } from './pod-state.ts'

type Condition = NonNullable<NonNullable<PodResource['status']>['conditions']>[number]

export interface GateTarget {
  /** the pod as last seen (a cache or a read); undefined once it is gone */
  current(): PodResource | undefined | Promise<PodResource | undefined>
  /** a strategic-merge patch of the pod's status */
  patchStatus(status: { conditions: Condition[] }): Promise<unknown>
  /** the caller stopped: give up */
  stopped(): boolean
  now(): Date
  /** a status patch failed (it is tried again on the next answer) */
  onPatchError?(err: unknown): void
}

/** the gate's condition: the pod API answered */
export function gateOpen(now: Date): Condition {
  return { type: READINESS_GATE, status: 'True', reason: 'PodApiAnswers', message: 'the pod API answered GET /healthz', lastTransitionTime: now.toISOString() }
}

/**
 * Opens the pod's gate once its pod API answers: asked every 50 ms for the first 10 s of
 * waiting, then each second; a pod not running yet is waited for. True once opened here;
 * false when the pod is gone, failed or going, its gate opened by someone else, or the
 * caller stopped. A pod that never answers is the caller's start deadline's to end.
 */
export async function openReadinessGate(target: GateTarget): Promise<boolean> {
  for (let asked = 0; !target.stopped(); asked++) {
    const pod = await target.current()
    if (!pod || !gateStillShut(pod)) return false
    const endpoint = awaitsGate(pod) ? endpointOfPod(pod) : undefined
    if (endpoint && (await podHealthy(endpoint, 1000))) {
      try {
        await target.patchStatus({ conditions: [gateOpen(target.now())] })
        return true
      } catch (err) {
        target.onPatchError?.(err)
      }
    }
    await sleep(asked < 200 ? 50 : 1000)
  }
  return false
}
