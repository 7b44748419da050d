// The session plane: what the api-server needs from the operator side — the
// BrowserSession and Network resources, and a way to reach a Live session's pod.
// Embedded and Kubernetes runtimes each provide one; the session code is the same.
import type { PodDirectory, ResourceClient } from '../../ports/ports.ts'
import type { BrowserSession, Network } from '../../crds/types.ts'
import type { Registry } from 'prom-client'

export interface SessionPlane {
  sessions: ResourceClient<BrowserSession>
  networks: ResourceClient<Network>
  pods: PodDirectory
  /**
   * Kubernetes only: the operator is another process with neither the database nor the KMS
   * key, so a warm-resume session's auth-state is opened here and handed over (a Secret the
   * resource owns) right after the resource is created; the operator waits for it. False
   * when the version does not exist (any more). Absent in the embedded plane, whose
   * in-process operator opens the version itself.
   */
  handOverAuthState?(session: BrowserSession): Promise<boolean>
  /**
   * Embedded only: the in-process operator's series (warm pool, pod failures) join the
   * api-server's /metrics. In a cluster the operator serves its own.
   */
  registerMetrics?(registry: Registry): void
  stop(): Promise<void>
}

