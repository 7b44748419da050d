// What the kube pod runtime's rooms share: the pods they read (the informer) and write
// (the api-server), and the few writes more than one room makes — marking a pod failed,
// deleting a pool pod only if still unclaimed, deleting a lost node's pod with no grace.
// Design: docs/operator.md#pods-on-kubernetes
import { isConflict, isNotFound } from '../../ports/errors.ts'
import type { Logger } from '../../ports/ports.ts'
import type { Informer } from '../../watch/informer.ts'
import type { ResourceOps } from './api-ops.ts'
import { toResourceError } from './errors.ts'
import { POD_ANNOTATIONS, type PodResource } from './pod-spec.ts'
import { sessionOf } from './pod-state.ts'
import type { KubeResourceClient } from './resource-client.ts'

export interface PodRoomDeps {
  informer: Informer<PodResource>
  pods: KubeResourceClient<PodResource>
  /** the raw pod API, for what the resource client does not say (a delete with no grace) */
  podApi: ResourceOps
  log: Logger
  now: () => Date
  /** the runtime was stopped: no new timers, no retries */
  closed(): boolean
}

/** resolves with nothing, as a configure that did not mark the pod configured does */
export async function markFailed(deps: PodRoomDeps, pod: PodResource, reason: string, message: string): Promise<undefined> {
  deps.log.warn({ pod: pod.metadata.name, session: sessionOf(pod), reason }, message)
  await deps.pods
    .patch(pod.metadata.name, { metadata: { annotations: { [POD_ANNOTATIONS.failureReason]: reason, [POD_ANNOTATIONS.failureMessage]: message } } })
    .catch((err) => deps.log.warn({ pod: pod.metadata.name, err: errText(err) }, 'could not mark the pod failed'))
  return undefined
}

/** delete with gracePeriodSeconds 0: the object goes at once, without the (dead) kubelet's confirmation */
export async function forceDelete(deps: PodRoomDeps, name: string): Promise<void> {
  try {
    await deps.podApi.delete(name, { gracePeriodSeconds: 0 })
  } catch (err) {
    const mapped = toResourceError(err, 'Pod', name)
    if (!isNotFound(mapped)) throw mapped
  }
}

/**
 * Deletes a pool pod as this operator last saw it, unclaimed: the delete carries that
 * resourceVersion, so a claim that landed since (another replica's, or an operator handing
 * over leadership mid-claim) makes it fail, and the session keeps its pod. The informer
 * brings the newer pod back to the caller's path. True when the pod is gone or going.
 */
export async function deleteUnclaimed(deps: PodRoomDeps, pod: PodResource, what: string): Promise<boolean> {
  const name = pod.metadata.name
  try {
    await deps.pods.delete(name, { resourceVersion: pod.metadata.resourceVersion })
    return true
  } catch (err) {
    if (isNotFound(err)) return true
    if (isConflict(err)) deps.log.info({ pod: name }, `${what} changed before its delete (claimed, or its status moved on); looked at again`)
    else deps.log.warn({ pod: name, err: errText(err) }, `could not delete ${what}`)
    return false
  }
}

export function nodeOf(pod: PodResource): string | undefined {
  return (pod.spec as { nodeName?: string } | undefined)?.nodeName
}

export function errText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err)
}

/** stops and forgets one timer of a map */
export function dropTimer(timers: Map<string, NodeJS.Timeout>, key: string): void {
  const t = timers.get(key)
  if (t) clearTimeout(t)
  timers.delete(key)
}
