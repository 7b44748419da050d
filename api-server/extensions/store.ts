// The extensions table (migration 029): every query takes the org, so another org's
// extension is not found, like an unknown one.
import type { Queryable } from '../store/db.ts'
import type { ExtensionManifestSummary } from './package.ts'

export interface ExtensionRow {
  id: string
  orgId: string
  name: string
  version: string
  sha256: string
  manifest: ExtensionManifestSummary
  packageBytes: number
  trusted: boolean
  trustDecidedBy: string | null
  trustDecidedAt: string | null
  trustReason: string | null
  createdBy: string
  createdAt: string
}

const COLUMNS = 'id, org_id, name, version, sha256, manifest, package_bytes, trusted, trust_decided_by, trust_decided_at, trust_reason, created_by, created_at'

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null)

function toRow(r: Record<string, unknown>): ExtensionRow {
  return {
    id: r.id as string, orgId: r.org_id as string, name: r.name as string, version: r.version as string, sha256: r.sha256 as string,
    manifest: r.manifest as ExtensionManifestSummary, packageBytes: Number(r.package_bytes), trusted: r.trusted as boolean,
    trustDecidedBy: (r.trust_decided_by as string | null) ?? null, trustDecidedAt: iso(r.trust_decided_at), trustReason: (r.trust_reason as string | null) ?? null,
    createdBy: r.created_by as string, createdAt: iso(r.created_at)!,
  }
}

export async function insertExtension(
  db: Queryable,
  row: { id: string; orgId: string; name: string; version: string; sha256: string; manifest: ExtensionManifestSummary; pkg: Uint8Array; createdBy: string },
): Promise<ExtensionRow> {
  const r = await db.query(
    `insert into extensions (id, org_id, name, version, sha256, manifest, package, package_bytes, created_by)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${COLUMNS}`,
    [row.id, row.orgId, row.name, row.version, row.sha256, JSON.stringify(row.manifest), Buffer.from(row.pkg), row.pkg.byteLength, row.createdBy],
  )
  return toRow(r.rows[0])
}

export async function countExtensions(db: Queryable, orgId: string): Promise<number> {
  const r = await db.query('select count(*)::int as n from extensions where org_id = $1', [orgId])
  return r.rows[0].n as number
}

export async function listExtensions(db: Queryable, orgId: string): Promise<ExtensionRow[]> {
  const r = await db.query(`select ${COLUMNS} from extensions where org_id = $1 order by created_at, id`, [orgId])
  return r.rows.map(toRow)
}

export async function findExtensions(db: Queryable, orgId: string, ids: readonly string[]): Promise<ExtensionRow[]> {
  if (!ids.length) return []
  const r = await db.query(`select ${COLUMNS} from extensions where org_id = $1 and id = any($2::text[])`, [orgId, ids])
  return r.rows.map(toRow)
}

export async function setTrust(
  db: Queryable,
  req: { orgId: string; id: string; trusted: boolean; actor: string; reason: string | null; at: string },
): Promise<ExtensionRow | null> {
  const r = await db.query(
    `update extensions set trusted = $3, trust_decided_by = $4, trust_decided_at = $5, trust_reason = $6
     where org_id = $1 and id = $2 returning ${COLUMNS}`,
    [req.orgId, req.id, req.trusted, req.actor, req.at, req.reason],
  )
  return r.rows[0] ? toRow(r.rows[0]) : null
}

export async function deleteExtension(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const r = await db.query('delete from extensions where org_id = $1 and id = $2', [orgId, id])
  return (r.rowCount ?? 0) > 0
}

/** the packages of these extensions (the org's only), by id */
export async function extensionPackages(db: Queryable, orgId: string, ids: readonly string[]): Promise<Map<string, Uint8Array>> {
  if (!ids.length) return new Map()
  const r = await db.query('select id, package from extensions where org_id = $1 and id = any($2::text[])', [orgId, ids])
  return new Map(r.rows.map((x) => [x.id as string, new Uint8Array(x.package as Buffer)]))
}

export async function setSessionExtensions(db: Queryable, sessionId: string, ids: readonly string[]): Promise<void> {
  await db.query('update sessions set extension_ids = $2 where id = $1', [sessionId, ids])
}

export async function sessionExtensionIds(db: Queryable, orgId: string, sessionId: string): Promise<string[]> {
  const r = await db.query('select extension_ids from sessions where org_id = $1 and id = $2', [orgId, sessionId])
  return (r.rows[0]?.extension_ids as string[] | undefined) ?? []
}

export async function identityExtensionIds(db: Queryable, orgId: string, identityId: string): Promise<string[]> {
  const r = await db.query('select extension_ids from identities where org_id = $1 and id = $2', [orgId, identityId])
  return (r.rows[0]?.extension_ids as string[] | undefined) ?? []
}

export async function setIdentityExtensions(db: Queryable, orgId: string, identityId: string, ids: readonly string[]): Promise<boolean> {
  const r = await db.query('update identities set extension_ids = $3 where org_id = $1 and id = $2', [orgId, identityId, ids])
  return (r.rowCount ?? 0) > 0
}
