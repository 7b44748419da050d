// The operator side of warm resume (ports/ports.ts AuthStateSource): opens the
// session's version just in time for the pod launch. The document goes from here to the
// pod's configure call and nowhere else — not into the BrowserSession resource, not into
// a log line (nothing here logs), not into an error message.
import type { Config } from '../config.ts'
import type { Db } from '../store/db.ts'
import type { AuthStateSource, StorageState } from '../../ports/ports.ts'
import { createKmsProvider, isSealError, PgDataKeyStore, Sealer } from '../kms/index.ts'
import { openAuthState } from './seal.ts'
import { sealedVersion } from './store.ts'

export class SealedAuthStateSource implements AuthStateSource {
  private readonly db: Db
  private readonly sealer: Sealer
  constructor(
    db: Db,
    sealer: Sealer,
  ) {
    this.db = db
    this.sealer = sealer
  }

  async load(session: { name: string; orgId: string; identityId?: string; versionId: string }): Promise<StorageState | undefined> {
    const row = await sealedVersion(this.db, session.orgId, session.versionId)
    // a version of another identity is as absent as an unknown one
    if (!row || !session.identityId || row.identityId !== session.identityId) return undefined
    try {
      return await openAuthState(this.sealer, { orgId: session.orgId, identityId: row.identityId, versionId: session.versionId }, row.sealedState)
    } catch (e) {
      // a provider outage is worth a retry (throw); a value that does not open never will
      if (isSealError(e) && e.failure !== 'kms_unavailable') return undefined
      throw e
    }
  }
}

/**
 * The source for an embedded plane. The plane starts before the app (which owns the
 * request-path Sealer), so it gets a Sealer of its own on the same KMS configuration and
 * data-key table: opens never create a key, so two instances agree by construction.
 */
export function authStateSource(config: Config, db: Db): AuthStateSource {
  const kms = createKmsProvider(config.kms)
  return new SealedAuthStateSource(db, new Sealer(kms, new PgDataKeyStore(db, kms?.name ?? 'local')))
}
