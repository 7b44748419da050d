// "Write status only if it changed", shared by the reconcilers. A settled object must
// cost no api-server writes per reconcile (resyncs would otherwise write everything every
// few minutes), so the new status is compared with the old one first. The write carries
// the read's resourceVersion as a precondition: a reconcile that computed from stale
// state gets 409 and is retried on fresh state instead of overwriting newer status.
import { isDeepStrictEqual } from 'node:util'
import { isNotFound } from '../../ports/errors.ts'
import { topLevelDiff } from '../merge-patch.ts'
import type { AnyResource, MergePatch, ResourceClient, StatusOf } from '../../ports/ports.ts'

/** drops undefined-valued keys so that {a: undefined} and {} compare equal */
export function compact<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T
}

/** @returns true when a write happened */
export async function writeStatusIfChanged<T extends AnyResource>(
  client: ResourceClient<T>,
  obj: T,
  next: StatusOf<T>,
): Promise<boolean> {
  const prev = compact((obj.status ?? {}) as object) as Record<string, unknown>
  const wanted = compact(next as object) as Record<string, unknown>
  if (isDeepStrictEqual(prev, wanted)) return false
  try {
    await client.patchStatus(obj.metadata.name, topLevelDiff(prev, wanted) as MergePatch<StatusOf<T>>, {
      resourceVersion: obj.metadata.resourceVersion,
    })
    return true
  } catch (err) {
    if (isNotFound(err)) return false // deleted meanwhile: nothing left to report on
    throw err
  }
}
