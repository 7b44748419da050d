// Access (njo_) and refresh (njr_) tokens: issued in pairs, stored only as SHA-256,
// each bound to its grant, its family (one code or device approval and its refresh
// rotations) and its audience (the resource it was issued for).
import type pg from 'pg'
import type { Db } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { newToken, sha256 } from '../../contracts/ids.ts'
import type { AuthContext } from '../auth/context.ts'
import type { Services } from '../services.ts'
import { OAUTH_DEFAULT_SCOPES } from '../auth/scopes.ts'
import { ACCESS_TOKEN_TTL_SECS, REFRESH_TOKEN_TTL_SECS } from './constants.ts'
import { OAUTH_ERRORS, oauthErrors } from '../../contracts/errors.ts'
import { canonicalResource } from './resource.ts'
import { revokeGrants } from './grants.ts'

/** The token response body, exactly (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

export interface IssueInput {
  grantId: string
  clientId: string
  familyId: string
  audience: string
  scopes: string[]
  now: number
}

/**
 * Issues a pair inside the caller's transaction. The grant row is locked first, so a
 * revocation running at the same moment either lands before (and we refuse) or after
 * (and it revokes what we issued): no token outlives its grant's revocation.
 */
export async function issueTokenPair(c: pg.PoolClient, t: IssueInput): Promise<TokenResponse> {
  const g = await c.query('select revoked_at from oauth_grants where id = $1 for update', [t.grantId])
  if (!g.rows[0] || g.rows[0].revoked_at) throw oauthErrors.grantRevoked()
  const access = newToken('njo_')
  const refresh = newToken('njr_')
  const insert = `insert into oauth_tokens (token_hash, kind, grant_id, client_id, family_id, audience, scopes, expires_at, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8,$9)`
  const now = new Date(t.now)
  await c.query(insert, [sha256(access), 'access', t.grantId, t.clientId, t.familyId, t.audience, t.scopes, new Date(t.now + ACCESS_TOKEN_TTL_SECS * 1000), now])
  await c.query(insert, [sha256(refresh), 'refresh', t.grantId, t.clientId, t.familyId, t.audience, t.scopes, new Date(t.now + REFRESH_TOKEN_TTL_SECS * 1000), now])
  await c.query('update oauth_grants set last_used_at = $2 where id = $1', [t.grantId, now])
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECS, refresh_token: refresh, scope: t.scopes.join(' ') }
}

export async function issueForGrant(db: Db, t: IssueInput): Promise<TokenResponse> {
  return tx(db, (c) => issueTokenPair(c, t))
}

/**
 * The njo_ resolver behind BearerAuth. Only OAuth records are consulted; null (the
 * one identical 401) unless the token is an unexpired, unrevoked access token whose
 * audience is this deployment's resource and whose grant and client are live.
 */
export async function resolveAccessToken(services: Services, token: string): Promise<AuthContext | null> {
  const r = await services.db.query(
    `select t.grant_id, t.scopes, g.org_id, g.agent_id, g.workspace, c.client_name, u.email
       from oauth_tokens t
       join oauth_grants g on g.id = t.grant_id
       join oauth_clients c on c.id = g.client_id
       join users u on u.id = g.user_id
      where t.token_hash = $1 and t.kind = 'access' and t.revoked_at is null and t.expires_at > $2
        and t.audience = $3 and g.revoked_at is null and c.revoked_at is null`,
    [sha256(token), new Date(services.now()), canonicalResource(services.config)],
  )
  const row = r.rows[0]
  if (!row) return null
  // defence in depth: whatever a row says, an OAuth credential never exceeds the default set
  const scopes = new Set<string>((row.scopes as string[]).filter((s) => (OAUTH_DEFAULT_SCOPES as readonly string[]).includes(s)))
  return {
    orgId: row.org_id,
    agentId: row.agent_id,
    scopes,
    principal: { kind: 'oauth', principalId: row.agent_id, credentialId: row.grant_id, name: `${row.client_name} (${row.email}, ${row.workspace})` },
  }
}

/**
 * The one answer to every refresh token that does not work — unknown, spent, revoked,
 * expired, another client's or another resource's — so the endpoint is no oracle for
 * which tokens exist or what became of them.
 */
export const BAD_REFRESH_TOKEN_DESCRIPTION = OAUTH_ERRORS.refreshTokenInvalid.message
const badRefreshToken = () => oauthErrors.refreshTokenInvalid()

/**
 * Refresh-token rotation: a refresh token is spent by its first use and a new pair is
 * issued in the same family. Presenting a spent one means it leaked (or a client
 * raced itself): the whole grant is revoked (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2).
 */
export async function rotateRefreshToken(
  db: Db,
  input: { refreshToken: string; clientId: string; resource: string; now: number },
): Promise<TokenResponse> {
  const hash = sha256(input.refreshToken)
  const spent = { reused: false, grantId: '' }
  const out = await tx(db, async (c) => {
    const r = await c.query(
      `select t.grant_id, t.client_id, t.family_id, t.audience, t.scopes, t.expires_at, t.used_at, t.revoked_at
         from oauth_tokens t where t.token_hash = $1 and t.kind = 'refresh' for update`,
      [hash],
    )
    const row = r.rows[0]
    if (!row) throw badRefreshToken()
    if (row.used_at) {
      spent.reused = true
      spent.grantId = row.grant_id
      return null
    }
    if (row.revoked_at) throw badRefreshToken()
    if (new Date(row.expires_at).getTime() <= input.now) throw badRefreshToken()
    if (row.client_id !== input.clientId) throw badRefreshToken()
    // the resource parameter was already checked against this deployment; a token
    // minted for another deployment's resource is simply not valid here
    if (row.audience !== input.resource) throw badRefreshToken()
    await c.query('update oauth_tokens set used_at = $2 where token_hash = $1', [hash, new Date(input.now)])
    return issueTokenPair(c, { grantId: row.grant_id, clientId: row.client_id, familyId: row.family_id, audience: row.audience, scopes: row.scopes, now: input.now })
  })
  if (spent.reused) {
    await tx(db, (c) => revokeGrants(c, [spent.grantId], input.now))
    throw badRefreshToken()
  }
  return out!
}

/** The grant a token (access or refresh) belongs to, for revocation; null when unknown. */
export async function grantOfToken(db: Db, token: string): Promise<{ grantId: string; orgId: string } | null> {
  const r = await db.query(
    `select g.id, g.org_id from oauth_tokens t join oauth_grants g on g.id = t.grant_id where t.token_hash = $1`,
    [sha256(token)],
  )
  return r.rows[0] ? { grantId: r.rows[0].id, orgId: r.rows[0].org_id } : null
}
