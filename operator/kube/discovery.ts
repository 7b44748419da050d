// Start-up check through API discovery: are the CRDs installed and served, with the
// status subresource the operator writes through? The operator does not install CRDs
// (the chart does, or an administrator); without them every list would 404 and the
// informers would retry forever, so readiness reports this one clear reason instead.
import { ApisApi, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node'
import { BROWSER_SESSION, GROUP, NETWORK, VERSION } from '../../crds/types.ts'
import { DEFAULT_CALL } from './api-ops.ts'
import { statusOf } from './errors.ts'

export interface CrdCheck {
  ok: boolean
  /** what is missing, for logs and /readyz */
  problems: string[]
}

export async function checkCrdsServed(kc: KubeConfig): Promise<CrdCheck> {
  const problems: string[] = []
  let groups
  try {
    groups = await kc.makeApiClient(ApisApi).getAPIVersions(undefined, DEFAULT_CALL)
  } catch (err) {
    return { ok: false, problems: [`API discovery failed: ${statusOf(err) ? `HTTP ${statusOf(err)!.code}` : err instanceof Error ? err.message : String(err)}`] }
  }
  const group = groups.groups.find((g) => g.name === GROUP)
  if (!group || !group.versions.some((v) => v.version === VERSION)) {
    return { ok: false, problems: [`API group ${GROUP}/${VERSION} is not served: install the CRDs (crds/*.yaml, or the chart with crds.install=true)`] }
  }
  const resources = await kc.makeApiClient(CustomObjectsApi).getAPIResources({ group: GROUP, version: VERSION }, DEFAULT_CALL)
  const names = new Set(resources.resources.map((r) => r.name))
  for (const { plural } of [BROWSER_SESSION, NETWORK]) {
    if (!names.has(plural)) problems.push(`resource ${plural}.${GROUP} is not served`)
    if (!names.has(`${plural}/status`)) problems.push(`resource ${plural}.${GROUP} has no status subresource`)
  }
  return { ok: problems.length === 0, problems }
}
