// Auth-state version rows (niver_). Every query takes the org, so a version of another
// org reads exactly like one that does not exist. Listing and picking never select the
// sealed column; only sealedVersion() does, for the just-in-time open at pod launch.
import type { Queryable } from '../store/db.ts'

/** Everything ever returned about a version: ids, who, when, which hosts — never contents. */
export interface AuthStateVersionView {
  id: string
  identityId: string
  createdAt: string
  createdBy: string
  origins: string[]
}

const VIEW_COLUMNS = 'id, identity_id, origins, created_at, created_by'

const toView = (r: Record<string, any>): AuthStateVersionView => ({
  id: r.id,
  identityId: r.identity_id,
  createdAt: new Date(r.created_at).toISOString(),
  createdBy: r.created_by,
  origins: r.origins,
})

export async function insertVersion(
  db: Queryable,
  v: { id: string; orgId: string; identityId: string; sealedState: string; origins: string[]; createdBy: string; createdAt: Date },
): Promise<AuthStateVersionView> {
  const r = await db.query(
    `insert into auth_state_versions (id, org_id, identity_id, sealed_state, origins, created_by, created_at)
     values ($1,$2,$3,$4,$5,$6,$7) returning ${VIEW_COLUMNS}`,
    [v.id, v.orgId, v.identityId, v.sealedState, v.origins, v.createdBy, v.createdAt],
  )
  return toView(r.rows[0])
}

/** Newest first. */
export async function listVersions(db: Queryable, orgId: string, identityId: string): Promise<AuthStateVersionView[]> {
  const r = await db.query(
    `select ${VIEW_COLUMNS} from auth_state_versions where org_id = $1 and identity_id = $2 order by created_at desc, id desc`,
    [orgId, identityId],
  )
  return r.rows.map(toView)
}

/** The given version of this identity, or its newest when versionId is absent; null when there is none. */
export async function pickVersion(db: Queryable, orgId: string, identityId: string, versionId?: string): Promise<{ id: string } | null> {
  const r = await db.query(
    `select id from auth_state_versions
      where org_id = $1 and identity_id = $2 and ($3::text is null or id = $3)
      order by created_at desc, id desc limit 1`,
    [orgId, identityId, versionId ?? null],
  )
  return r.rows[0] ? { id: r.rows[0].id } : null
}

/** The sealed envelope of one version (for opening at pod launch only). */
export async function sealedVersion(db: Queryable, orgId: string, versionId: string): Promise<{ identityId: string; sealedState: string } | null> {
  const r = await db.query(`select identity_id, sealed_state from auth_state_versions where org_id = $1 and id = $2`, [orgId, versionId])
  return r.rows[0] ? { identityId: r.rows[0].identity_id, sealedState: r.rows[0].sealed_state } : null
}
