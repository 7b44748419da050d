// Credential records on an identity. The sealed value never leaves this module
// except to be opened by fill preparation; every result carries only the mask.
import type { Queryable } from '../store/db.ts'
import type { Sealer } from '../kms/index.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import type { CredentialKind } from '../../contracts/operations/personas.ts'
import { maskFor } from './mask.ts'
import { sealCredentialValue } from './seal.ts'
import { valueToSeal } from './totp.ts'

/** What is ever returned about a credential: there is deliberately no value field. */
export interface CredentialView {
  id: string
  identityId: string
  name: string
  placeholder: string
  kind: CredentialKind
  maskedValue: string
  originAllowlist: string[]
  createdAt: string
  rotatedAt: string | null
}

/** Internal: includes the sealed envelope, for fill preparation only. */
export interface SealedCredential {
  id: string
  orgId: string
  identityId: string
  name: string
  placeholder: string
  kind: CredentialKind
  originAllowlist: string[]
  sealedValue: string
}

const toView = (r: any): CredentialView => ({
  id: r.id,
  identityId: r.identity_id,
  name: r.name,
  placeholder: r.placeholder,
  kind: r.kind,
  maskedValue: r.masked_value,
  originAllowlist: r.origin_allowlist,
  createdAt: new Date(r.created_at).toISOString(),
  rotatedAt: r.rotated_at ? new Date(r.rotated_at).toISOString() : null,
})

const toSealed = (r: any): SealedCredential => ({
  id: r.id,
  orgId: r.org_id,
  identityId: r.identity_id,
  name: r.name,
  placeholder: r.placeholder,
  kind: r.kind,
  originAllowlist: r.origin_allowlist,
  sealedValue: r.sealed_value,
})

// Only the columns a view needs: the sealed value is never selected for a listing.
const VIEW_COLUMNS = 'id, identity_id, name, placeholder, kind, masked_value, origin_allowlist, created_at, rotated_at'

export const credentialNotFound = () => errors.notFound('credential')

export interface CreateCredentialInput {
  orgId: string
  identityId: string
  name: string
  placeholder: string
  /** default password */
  kind?: CredentialKind
  value: string
  originAllowlist: string[]
}

export async function createCredential(db: Queryable, sealer: Sealer, input: CreateCredentialInput): Promise<CredentialView> {
  const id = newId('ncred_')
  const kind = input.kind ?? 'password'
  const value = valueToSeal(kind, input.value) // a malformed TOTP value is refused before any sealing
  const sealed = await sealCredentialValue(sealer, { orgId: input.orgId, identityId: input.identityId, credentialId: id }, value)
  try {
    const r = await db.query(
      `insert into credentials (id, org_id, identity_id, name, placeholder, kind, sealed_value, masked_value, origin_allowlist)
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9) returning ${VIEW_COLUMNS}`,
      [id, input.orgId, input.identityId, input.name, input.placeholder, kind, sealed, maskFor(kind, value), input.originAllowlist],
    )
    return toView(r.rows[0])
  } catch (e: any) {
    if (e?.code === '23505') throw errors.duplicateCredentialName()
    // the identity was deleted between the lookup and the insert
    if (e?.code === '23503') throw errors.notFound('identity')
    throw e
  }
}

export async function listCredentials(db: Queryable, orgId: string, identityId: string): Promise<CredentialView[]> {
  const r = await db.query(`select ${VIEW_COLUMNS} from credentials where org_id = $1 and identity_id = $2 order by name`, [orgId, identityId])
  return r.rows.map(toView)
}

/** Re-seals under the same ids; the allowlist, name, placeholder and kind are unchanged. */
export async function rotateCredential(
  db: Queryable, sealer: Sealer, ref: { orgId: string; identityId: string; credentialId: string }, value: string, at: Date,
): Promise<CredentialView> {
  const exists = await db.query(`select kind from credentials where org_id = $1 and identity_id = $2 and id = $3`, [ref.orgId, ref.identityId, ref.credentialId])
  if (!exists.rowCount) throw credentialNotFound()
  const kind = exists.rows[0].kind as CredentialKind
  value = valueToSeal(kind, value)
  const sealed = await sealCredentialValue(sealer, ref, value)
  const r = await db.query(
    `update credentials set sealed_value = $4, masked_value = $5, rotated_at = $6
      where org_id = $1 and identity_id = $2 and id = $3 returning ${VIEW_COLUMNS}`,
    [ref.orgId, ref.identityId, ref.credentialId, sealed, maskFor(kind, value), at],
  )
  if (!r.rows[0]) throw credentialNotFound()
  return toView(r.rows[0])
}

export async function deleteCredential(db: Queryable, ref: { orgId: string; identityId: string; credentialId: string }): Promise<CredentialView> {
  const r = await db.query(
    `delete from credentials where org_id = $1 and identity_id = $2 and id = $3 returning ${VIEW_COLUMNS}`,
    [ref.orgId, ref.identityId, ref.credentialId],
  )
  if (!r.rows[0]) throw credentialNotFound()
  return toView(r.rows[0])
}

export async function findSealedCredential(
  db: Queryable, where: { orgId: string; identityId: string } & ({ name: string } | { placeholder: string }),
): Promise<SealedCredential | null> {
  const [column, value] = 'name' in where ? ['name', where.name] : ['placeholder', where.placeholder]
  const r = await db.query(`select * from credentials where org_id = $1 and identity_id = $2 and ${column} = $3`, [where.orgId, where.identityId, value])
  return r.rows[0] ? toSealed(r.rows[0]) : null
}

/** Names, placeholders and origins of an identity's credentials (assumable slots). */
export async function credentialSlots(db: Queryable, orgId: string, identityIds: string[]) {
  if (!identityIds.length) return []
  const r = await db.query(
    `select identity_id, name, placeholder, origin_allowlist from credentials where org_id = $1 and identity_id = any($2) order by name`,
    [orgId, identityIds],
  )
  return r.rows.map((x) => ({ identityId: x.identity_id as string, name: x.name as string, placeholder: x.placeholder as string, originAllowlist: x.origin_allowlist as string[] }))
}
