// Authorization codes: single-use, about a minute long, bound to the client, the
// exact redirect_uri, the PKCE challenge and the resource of the authorization
// request. A code presented twice fails and revokes what its first use issued
// (RFC 6749 §4.1.2): the second presenter may be the legitimate client racing a thief.
import { randomBytes } from 'node:crypto'
import type { Db } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { sha256 } from '../../contracts/ids.ts'
import { CODE_TTL_SECS } from './constants.ts'
import { oauthErrors } from '../../contracts/errors.ts'
import { verifyS256 } from './pkce.ts'
import { issueTokenPair, type TokenResponse } from './tokens.ts'

export interface NewCode {
  grantId: string
  clientId: string
  redirectUri: string
  codeChallenge: string
  resource: string
  scopes: string[]
  now: number
}

export async function createCode(db: Db, c: NewCode): Promise<string> {
  const code = randomBytes(32).toString('base64url')
  await db.query(
    `insert into oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge, resource, scopes, expires_at) values ($1,$2,$3,$4,$5,$6,$7,$8)`,
    [sha256(code), c.grantId, c.clientId, c.redirectUri, c.codeChallenge, c.resource, c.scopes, new Date(c.now + CODE_TTL_SECS * 1000)],
  )
  return code
}

export interface Redemption {
  code: string
  clientId: string
  redirectUri: string | undefined
  codeVerifier: string
  resource: string
  now: number
}

export async function redeemCode(db: Db, x: Redemption): Promise<TokenResponse> {
  const hash = sha256(x.code)
  const familyId = 'fam_' + randomBytes(12).toString('base64url')
  let replayedFamily: string | null | undefined
  const out = await tx(db, async (c) => {
    const r = await c.query('select * from oauth_codes where code_hash = $1 for update', [hash])
    const row = r.rows[0]
    if (!row) throw oauthErrors.codeUnknown()
    if (row.used_at) {
      replayedFamily = row.family_id
      return null
    }
    // burnt by this attempt whatever the outcome: a failed PKCE check must not allow another guess
    await c.query('update oauth_codes set used_at = $2, family_id = $3 where code_hash = $1', [hash, new Date(x.now), familyId])
    if (new Date(row.expires_at).getTime() <= x.now) return 'expired' as const
    if (row.client_id !== x.clientId) return 'client' as const
    if (x.redirectUri !== row.redirect_uri) return 'redirect' as const
    if (!verifyS256(x.codeVerifier, row.code_challenge)) return 'pkce' as const
    if (x.resource !== row.resource) return 'resource' as const
    return issueTokenPair(c, { grantId: row.grant_id, clientId: row.client_id, familyId, audience: row.resource, scopes: row.scopes, now: x.now })
  })
  if (out === null) {
    if (replayedFamily) await db.query('update oauth_tokens set revoked_at = coalesce(revoked_at, $2) where family_id = $1', [replayedFamily, new Date(x.now)])
    throw oauthErrors.codeUsed()
  }
  switch (out) {
    case 'expired': throw oauthErrors.codeExpired()
    case 'client': throw oauthErrors.codeOtherClient()
    case 'redirect': throw oauthErrors.codeRedirectMismatch()
    case 'pkce': throw oauthErrors.codeVerifierMismatch()
    case 'resource': throw oauthErrors.oauthResourceMismatch()
    default: return out
  }
}
