// API keys: njk_ tokens stored only as SHA-256. Minting obeys no-escalation.
import type { Db, Queryable } from '../store/db.ts'
import { newId, newToken, sha256 } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import { isScope } from './scopes.ts'
import type { AuthContext } from './context.ts'

export interface MintKeyInput {
  orgId: string
  name: string
  scopes: string[]
  agentId?: string | null
  createdByUserId?: string | null
  /** the scopes of whoever mints; a key never gets a scope its minter lacks */
  minterScopes: ReadonlySet<string>
}

export interface MintedKey {
  id: string
  name: string
  scopes: string[]
  agentId: string | null
  secret: string
}

export async function mintKey(db: Queryable, input: MintKeyInput): Promise<MintedKey> {
  const name = input.name.trim()
  if (!/^[\w .:@()/-]{1,80}$/.test(name)) throw errors.invalidRequest('name: 1-80 letters, digits, spaces or . _ : @ ( ) / -')
  const scopes = [...new Set(input.scopes)].sort()
  if (scopes.length === 0) throw errors.invalidRequest('scopes: at least one scope')
  const unknown = scopes.filter((s) => !isScope(s))
  if (unknown.length) throw errors.unknownScope(unknown.join(', '))
  const escalated = scopes.filter((s) => !input.minterScopes.has(s))
  if (escalated.length) throw errors.noEscalation(escalated.join(', '))
  let agentId: string | null = null
  if (input.agentId) {
    const a = await db.query('select id from agents where id = $1 and org_id = $2', [input.agentId, input.orgId])
    if (!a.rowCount) throw errors.notFound('agent')
    agentId = input.agentId
  }
  const id = newId('nkey_')
  const secret = newToken('njk_')
  await db.query(
    `insert into api_keys (id, org_id, name, token_hash, scopes, agent_id, created_by_user_id) values ($1,$2,$3,$4,$5,$6,$7)`,
    [id, input.orgId, name, sha256(secret), scopes, agentId, input.createdByUserId ?? null],
  )
  return { id, name, scopes, agentId, secret }
}

/** Resolves an njk_ token to its AuthContext, or null. Only key records are consulted. */
export async function resolveApiKey(db: Db, token: string): Promise<AuthContext | null> {
  const r = await db.query(
    `select k.id, k.org_id, k.name, k.scopes, coalesce(k.agent_id, a.id) as agent_id
       from api_keys k
       left join agents a on a.org_id = k.org_id and a.is_default
      where k.token_hash = $1 and k.revoked_at is null`,
    [sha256(token)],
  )
  const row = r.rows[0]
  if (!row || !row.agent_id) return null
  return {
    orgId: row.org_id,
    agentId: row.agent_id,
    scopes: new Set<string>(row.scopes),
    principal: { kind: 'key', principalId: row.agent_id, credentialId: row.id, name: row.name },
  }
}

export async function listKeys(db: Db, orgId: string) {
  const r = await db.query(
    `select id, name, scopes, agent_id, created_at, revoked_at from api_keys where org_id = $1 order by created_at desc`,
    [orgId],
  )
  return r.rows.map((k) => ({ id: k.id, name: k.name, scopes: k.scopes as string[], agentId: k.agent_id, createdAt: k.created_at, revokedAt: k.revoked_at }))
}
