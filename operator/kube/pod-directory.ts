// PodDirectory for the api-server on Kubernetes: a Ready session pod's IP, pod API port
// and token. A positive answer is cached briefly (a pod's IP and token never change, and
// driving makes many calls in a row; a stale entry costs one failed call, reported like any
// dead browser); a negative one is not, so a pod becoming Ready is seen at once.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node'
import { LABELS } from '../../crds/types.ts'
import { DEFAULT_CALL } from './api-ops.ts'
import type { PodAccess, PodDirectory } from '../../ports/ports.ts'
import { BROWSER_POD_SELECTOR, POD_ANNOTATIONS, type PodResource } from './pod-spec.ts'
import { podObservation } from './pod-state.ts'
import { TokenSecrets, tokenSecretName } from './token-secrets.ts'

export interface KubePodDirectoryOptions {
  kc: KubeConfig
  namespace: string
  /** how long a found endpoint+token is reused (default 15 s; 0 = no cache) */
  cacheTtlMs?: number
  now?: () => number
}

export class KubePodDirectory implements PodDirectory {
  private readonly core: CoreV1Api
  private readonly secrets: TokenSecrets
  private readonly now: () => Date
  private readonly ttl: number
  private readonly cache = new Map<string, { access: PodAccess; until: number }>()

  private readonly opts: KubePodDirectoryOptions
  constructor(opts: KubePodDirectoryOptions) {
    this.opts = opts
    this.core = opts.kc.makeApiClient(CoreV1Api)
    this.secrets = new TokenSecrets(opts.kc, opts.namespace)
    const clock = opts.now ?? Date.now
    this.now = () => new Date(clock())
    this.ttl = opts.cacheTtlMs ?? 15_000
  }

  async lookup(sessionId: string): Promise<PodAccess | undefined> {
    const t = this.now().getTime()
    const hit = this.cache.get(sessionId)
    if (hit && hit.until > t) return { ...hit.access }
    this.cache.delete(sessionId)

    const list = await this.core.listNamespacedPod({ namespace: this.opts.namespace, labelSelector: `${BROWSER_POD_SELECTOR},${LABELS.session}=${sessionId}` }, DEFAULT_CALL)
    const pods = (JSON.parse(JSON.stringify(list.items)) as PodResource[]).filter((p) => !p.metadata.deletionTimestamp)
    for (const pod of pods) {
      // the start deadline is the operator's business; here only "is it Ready" matters
      const obs = podObservation(sessionId, pod, { now: this.now(), startTimeoutMs: Number.MAX_SAFE_INTEGER })
      if (obs.phase !== 'Ready' || !obs.endpoint) continue
      const token = await this.secrets.read(pod.metadata.annotations?.[POD_ANNOTATIONS.tokenSecret] ?? tokenSecretName(pod.metadata.name))
      if (!token) return undefined
      const access = { endpoint: obs.endpoint, token }
      if (this.ttl > 0) this.cache.set(sessionId, { access, until: t + this.ttl })
      return { ...access }
    }
    return undefined
  }

  /** drop a cached answer (e.g. after a pod call failed) */
  forget(sessionId: string): void {
    this.cache.delete(sessionId)
  }
}
