// Storage-version migration of the two CRDs: every stored object written back unchanged (an
// empty merge patch to its status re-encodes it at the storage version), then
// status.storedVersions trimmed to that version once all are done. Safe to repeat and to run
// beside reconciles. Design: docs/upgrades.md#storage-migration
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node'
import { BROWSER_SESSION, GROUP, NETWORK } from '../../crds/types.ts'
import { DEFAULT_CALL, MERGE_PATCH } from './api-ops.ts'
import { statusOf } from './errors.ts'

export const MIGRATED_CRDS = [BROWSER_SESSION, NETWORK].map((r) => `${r.plural}.${GROUP}`)

export interface CrdMigration {
  crd: string
  storageVersion: string
  /** status.storedVersions as found */
  storedVersions: string[]
  /** objects listed and written back (0 when nothing needed migrating) */
  rewritten: number
  /** storedVersions is now [storageVersion] (already, or trimmed by this run) */
  migrated: boolean
}

export interface StorageMigrationOptions {
  /** CRD names (default: BrowserSession's and Network's) */
  crds?: string[]
  /** list page size (default 500) */
  pageSize?: number
  /** writes in flight at once (default 4: a background chore, not a burst) */
  concurrency?: number
}

/** Migrates every object of each CRD to its storage version, then trims storedVersions. */
export async function migrateStoredVersions(kc: KubeConfig, opts: StorageMigrationOptions = {}): Promise<CrdMigration[]> {
  const results: CrdMigration[] = []
  for (const name of opts.crds ?? MIGRATED_CRDS) results.push(await migrateCrd(kc, name, opts))
  return results
}

async function migrateCrd(kc: KubeConfig, name: string, opts: StorageMigrationOptions): Promise<CrdMigration> {
  const crds = kc.makeApiClient(ApiextensionsV1Api)
  const objects = kc.makeApiClient(CustomObjectsApi)
  const crd = await crds.readCustomResourceDefinition({ name }, DEFAULT_CALL)
  const storageVersion = storageVersionOf(crd)
  const storedVersions = crd.status?.storedVersions ?? []
  const result: CrdMigration = { crd: name, storageVersion, storedVersions, rewritten: 0, migrated: false }
  if (storedVersions.length === 1 && storedVersions[0] === storageVersion) return { ...result, migrated: true }

  const { group, names } = crd.spec
  const base = { group, version: storageVersion, plural: names.plural }
  const rewrite = async (item: { metadata?: { name?: string; namespace?: string } }) => {
    const { name: objectName, namespace } = item.metadata ?? {}
    if (!objectName) return
    try {
      if (namespace) await objects.patchNamespacedCustomObjectStatus({ ...base, namespace, name: objectName, body: {} }, MERGE_PATCH)
      else await objects.patchClusterCustomObjectStatus({ ...base, name: objectName, body: {} }, MERGE_PATCH)
      result.rewritten++
    } catch (err) {
      if (statusOf(err)?.code !== 404) throw err // deleted since the list: nothing left to migrate
    }
  }
  let continueToken: string | undefined
  do {
    const page = (await objects.listClusterCustomObject({ ...base, limit: opts.pageSize ?? 500, _continue: continueToken }, DEFAULT_CALL)) as {
      items?: { metadata?: { name?: string; namespace?: string } }[]
      metadata?: { continue?: string }
    }
    const items = page.items ?? []
    const width = opts.concurrency ?? 4
    for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(rewrite))
    continueToken = page.metadata?.continue || undefined
  } while (continueToken)

  // trim, unless the storage version moved on meanwhile (then the next run migrates to it);
  // a conflict is some other status write: read again and retry
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = await crds.readCustomResourceDefinition({ name }, DEFAULT_CALL)
    if (storageVersionOf(now) !== storageVersion) return result
    try {
      await crds.patchCustomResourceDefinitionStatus(
        { name, body: { metadata: { resourceVersion: now.metadata?.resourceVersion }, status: { storedVersions: [storageVersion] } } },
        MERGE_PATCH,
      )
      return { ...result, migrated: true }
    } catch (err) {
      if (statusOf(err)?.code !== 409) throw err
    }
  }
  return result
}

function storageVersionOf(crd: V1CustomResourceDefinition): string {
  const v = crd.spec.versions.find((x) => x.storage)
  if (!v) throw new Error(`CustomResourceDefinition ${crd.metadata?.name} has no storage version`)
  return v.name
}
