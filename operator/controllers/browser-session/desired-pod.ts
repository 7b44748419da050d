// The desired browser pod of a session — a pure function of the resource, so it can be
// tested on its own and is identical in both runtimes.
import { ANNOTATIONS, API_VERSION, BROWSER_SESSION, LABELS, type BrowserSession } from '../../../crds/types.ts'
import type { OwnerReference, PodLaunchConfig } from '../../../ports/ports.ts'

export function desiredPod(session: BrowserSession): PodLaunchConfig {
  const { spec, metadata } = session
  const requestedAt = Date.parse(metadata.annotations?.[ANNOTATIONS.requestedAt] ?? '')
  return {
    sessionId: metadata.name,
    browserKind: spec.browserKind,
    egress: {
      mode: spec.egress,
      // platform egress never tunnels, so declared hosts would be dead weight there; local
      // and split keep the launch-time snapshot (an empty list means nothing is tunnelled)
      declaredHosts: spec.egress === 'platform' ? [] : [...(spec.declaredHosts ?? [])],
    },
    ...(spec.viewport ? { viewport: { width: spec.viewport.width, height: spec.viewport.height } } : {}),
    labels: {
      'app.kubernetes.io/name': 'nightjar',
      'app.kubernetes.io/component': 'browser-pod',
      [LABELS.session]: metadata.name,
      [LABELS.org]: spec.orgId,
      [LABELS.agent]: spec.agentId,
      ...(spec.identityId ? { [LABELS.identity]: spec.identityId } : {}),
    },
    ...(Number.isFinite(requestedAt) ? { requestedAt } : {}),
    ...(spec.extensions ? { fullBrowser: true } : {}),
  }
}

/** the pod is owned by its session: Kubernetes garbage-collects it with the resource */
export function ownerReference(session: BrowserSession): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: BROWSER_SESSION.kind,
    name: session.metadata.name,
    uid: session.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  }
}
