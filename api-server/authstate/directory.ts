// The api-server side of warm resume: which version a session_start restores
// (sessions/lifecycle.ts turns null into the 404). Reads ids only, never the sealed state.
import type { Queryable } from '../store/db.ts'
import type { AuthStateDirectory } from '../sessions/directories.ts'
import { pickVersion } from './store.ts'

export class PgAuthStateDirectory implements AuthStateDirectory {
  private readonly db: Queryable
  constructor(db: Queryable) {
    this.db = db
  }

  pick({ orgId, identityId, versionId }: { orgId: string; identityId: string; versionId?: string }): Promise<{ id: string } | null> {
    return pickVersion(this.db, orgId, identityId, versionId)
  }
}
