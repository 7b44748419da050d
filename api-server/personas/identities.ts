// Identity (persona) records. Every query is scoped to the caller's org; a foreign
// id and an unknown id both come back as null, which callers turn into one 404.
import type { Queryable } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import type { OpenMode } from './validation.ts'

export interface Identity {
  id: string
  name: string
  defaultOpenMode: OpenMode
  createdAt: string
}

export type LeaseState = 'available' | 'in_use'

const toIdentity = (r: any): Identity => ({
  id: r.id,
  name: r.name,
  defaultOpenMode: r.default_open_mode,
  createdAt: new Date(r.created_at).toISOString(),
})

export const identityNotFound = () => errors.notFound('identity')

export async function createIdentity(db: Queryable, input: { orgId: string; name: string; defaultOpenMode: OpenMode }): Promise<Identity> {
  try {
    const r = await db.query(
      `insert into identities (id, org_id, name, default_open_mode) values ($1, $2, $3, $4) returning *`,
      [newId('nident_'), input.orgId, input.name, input.defaultOpenMode],
    )
    return toIdentity(r.rows[0])
  } catch (e: any) {
    if (e?.code === '23505') throw errors.duplicateIdentityName()
    throw e
  }
}

export async function listIdentities(db: Queryable, orgId: string): Promise<Array<Identity & { leaseState: LeaseState; proxy?: { url: string; authenticated: boolean } }>> {
  const r = await db.query(
    `select i.*, (l.identity_id is not null) as leased
       from identities i left join identity_leases l on l.identity_id = i.id
      where i.org_id = $1 order by i.name`,
    [orgId],
  )
  return r.rows.map((row) => ({
    ...toIdentity(row), leaseState: row.leased ? 'in_use' : 'available',
    // the default proxy's URL and whether credentials are sealed for it, never the envelope
    ...(row.proxy_url ? { proxy: { url: row.proxy_url as string, authenticated: row.proxy_sealed_auth != null } } : {}),
  }))
}

/** By id (nident_…) or by name, inside the org only. */
export async function findIdentity(db: Queryable, orgId: string, ref: string): Promise<Identity | null> {
  const byId = ref.startsWith('nident_')
  const r = await db.query(`select * from identities where org_id = $1 and ${byId ? 'id' : 'name'} = $2`, [orgId, ref])
  return r.rows[0] ? toIdentity(r.rows[0]) : null
}

/** For path parameters, which are always ids: a name there is just an unknown id. */
export async function requireIdentityById(db: Queryable, orgId: string, identityId: string): Promise<Identity> {
  const r = await db.query(`select * from identities where org_id = $1 and id = $2`, [orgId, identityId])
  if (!r.rows[0]) throw identityNotFound()
  return toIdentity(r.rows[0])
}

/** Deletes an identity with its credentials and grants; refused while a lease is held. */
export async function deleteIdentity(db: Queryable, orgId: string, identityId: string): Promise<Identity> {
  try {
    // The lease table's foreign key (NO ACTION) makes this refusal race-free: a lease
    // inserted concurrently either commits first (we fail) or waits for us.
    const r = await db.query(`delete from identities where org_id = $1 and id = $2 returning *`, [orgId, identityId])
    if (!r.rows[0]) throw identityNotFound()
    return toIdentity(r.rows[0])
  } catch (e: any) {
    if (e?.code === '23503') throw errors.identityLeased()
    throw e
  }
}
