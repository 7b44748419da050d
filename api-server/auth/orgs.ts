// Orgs, their owner and default agent: how a new user (and every test) gets in.
import type { Db, Queryable } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import { hashPassword } from './passwords.ts'
import { mintKey, type MintedKey } from './keys.ts'
import { ROLE_SCOPES, type Role } from './scopes.ts'
import { randomBytes } from 'node:crypto'

export interface Bootstrapped {
  orgId: string
  userId: string
  agentId: string
  email: string
  password: string
  apiKey: string
  apiKeyId: string
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/

export async function createUser(db: Queryable, orgId: string, email: string, password: string, role: Role): Promise<string> {
  if (!EMAIL.test(email)) throw errors.invalidRequest('email: not a valid address')
  if (password.length < 8) throw errors.invalidRequest('password: at least 8 characters')
  const id = newId('nusr_')
  try {
    await db.query('insert into users (id, org_id, email, password_hash, role) values ($1,$2,$3,$4,$5)', [
      id, orgId, email.toLowerCase(), await hashPassword(password), role,
    ])
  } catch (e: any) {
    if (e.code === '23505') throw errors.emailTaken()
    throw e
  }
  return id
}

export async function bootstrapOrg(db: Db, input: { org: string; email: string; password?: string }): Promise<Bootstrapped> {
  const orgName = input.org.trim()
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(orgName)) throw errors.invalidRequest('org: 1-63 letters, digits or dashes')
  const password = input.password ?? randomBytes(12).toString('base64url')
  const orgId = newId('norg_')
  const agentId = newId('nagt_')
  const { userId, key } = await tx(db, async (c) => {
    try {
      await c.query('insert into orgs (id, name) values ($1, $2)', [orgId, orgName])
    } catch (e: any) {
      if (e.code === '23505') throw errors.orgNameTaken(orgName)
      throw e
    }
    await c.query(`insert into agents (id, org_id, name, kind, is_default) values ($1, $2, 'default', 'agent', true)`, [agentId, orgId])
    const userId = await createUser(c, orgId, input.email, password, 'owner')
    const scopes = [...ROLE_SCOPES.owner]
    const key: MintedKey = await mintKey(c, {
      orgId, name: 'owner (bootstrap)', scopes, agentId, createdByUserId: userId, minterScopes: new Set(scopes),
    })
    return { userId, key }
  })
  return { orgId, userId, agentId, email: input.email.toLowerCase(), password, apiKey: key.secret, apiKeyId: key.id }
}
