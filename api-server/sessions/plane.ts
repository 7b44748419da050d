// The session plane: what the api-server needs from the operator side — the
// BrowserSession and Network resources, and a way to reach a Live session's node.
// Embedded and Kubernetes runtimes each provide one; the session code is the same.
import type { NodeDirectory, ResourceClient } from '../../operator/ports.ts'
import type { BrowserSession, Network } from '../../crds/types.ts'

export interface SessionPlane {
  sessions: ResourceClient<BrowserSession>
  networks: ResourceClient<Network>
  nodes: NodeDirectory
  stop(): Promise<void>
}

