// The session plane: what the api-server needs from the operator side — the
// BrowserSession and Network resources, and a way to reach a Live session's node.
// Embedded and Kubernetes runtimes each provide one; the session code is the same.
import type { NodeDirectory, ResourceClient } from '../../operator/ports.ts'
import type { BrowserSession, Network, SessionPhase } from '../../crds/types.ts'
import { errors } from '../../contracts/errors.ts'

export interface SessionPlane {
  sessions: ResourceClient<BrowserSession>
  networks: ResourceClient<Network>
  nodes: NodeDirectory
  stop(): Promise<void>
}

/**
 * Resolves once the session resource reaches one of `phases` (returns the object),
 * by watching from the version read — no polling, no missed transition.
 */
export async function waitForPhase(
  client: ResourceClient<BrowserSession>,
  name: string,
  phases: readonly SessionPhase[],
  timeoutMs: number,
): Promise<BrowserSession> {
  const first = await client.get(name)
  if (!first) throw errors.sessionResourceGone()
  if (first.status?.phase && phases.includes(first.status.phase)) return first
  return new Promise((resolve, reject) => {
    let done = false
    let handle: { stop(): void } | undefined
    const finish = (fn: () => void) => {
      if (done) return
      done = true
      clearTimeout(timer)
      handle?.stop()
      fn()
    }
    const timer = setTimeout(
      () => finish(() => reject(errors.sessionStartTimeout())),
      timeoutMs,
    )
    const start = (from: string) => {
      handle = client.watch(from, {
        onEvent: (e) => {
          if (e.type === 'BOOKMARK' || e.object.metadata.name !== name) return
          if (e.type === 'DELETED') return finish(() => reject(errors.sessionResourceGone()))
          const phase = e.object.status?.phase
          if (phase && phases.includes(phase)) finish(() => resolve(e.object))
        },
        // a closed or expired watch resumes from a fresh read, so no transition is missed
        onClose: () => {
          if (done) return
          client.get(name).then((obj) => {
            if (!obj) return finish(() => reject(errors.sessionResourceGone()))
            const phase = obj.status?.phase
            if (phase && phases.includes(phase)) return finish(() => resolve(obj))
            start(obj.metadata.resourceVersion)
          }, (err) => finish(() => reject(err)))
        },
      })
    }
    start(first.metadata.resourceVersion)
  })
}
