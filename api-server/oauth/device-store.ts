// Device authorizations (RFC 8628): what POST /oauth/device creates, what the
// verification page approves or denies, and what polling the token endpoint reads.
// All timing (expiry, the polling interval, slow_down) runs on the service clock.
import { randomBytes } from 'node:crypto'
import type { Db } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { sha256 } from '../../contracts/ids.ts'
import {
  DEVICE_CODE_TTL_SECS, DEVICE_POLL_INTERVAL_SECS, DEVICE_SLOW_DOWN_STEP_SECS, USER_CODE_ALPHABET,
} from './constants.ts'
import { OAuthError, oauthErrors } from '../../contracts/errors.ts'
import { issueTokenPair, type TokenResponse } from './tokens.ts'

/** 8 symbols of a 32-symbol alphabet: a byte's low 5 bits are uniform, so there is no bias. */
export function newUserCode(): string {
  return [...randomBytes(8)].map((b) => USER_CODE_ALPHABET[b & 31]).join('')
}

/** XXXX-XXXX, the form shown to humans */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/** Accepts any case, with or without the dash (and stray spaces); null when it cannot be a code. */
export function normaliseUserCode(input: unknown): string | null {
  if (typeof input !== 'string') return null
  const s = input.toUpperCase().replace(/[\s-]/g, '')
  if (s.length !== 8) return null
  return [...s].every((ch) => USER_CODE_ALPHABET.includes(ch)) ? s : null
}

export interface DeviceAuthorization {
  deviceCode: string
  userCode: string
  expiresIn: number
  interval: number
}

export async function createDeviceAuthorization(
  db: Db,
  d: { clientId: string; workspace: string; resource: string; scopes: string[]; now: number },
): Promise<DeviceAuthorization> {
  const now = new Date(d.now)
  // housekeeping: this endpoint needs no sign-in, so it clears its own expired rows
  await db.query('delete from oauth_device_codes where expires_at < $1', [new Date(d.now - 86_400_000)])
  for (let attempt = 0; ; attempt++) {
    const deviceCode = randomBytes(32).toString('base64url')
    const userCode = newUserCode()
    try {
      await db.query(
        `insert into oauth_device_codes (device_code_hash, user_code, client_id, workspace, resource, scopes, interval_secs, expires_at, created_at)
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
        [sha256(deviceCode), userCode, d.clientId, d.workspace, d.resource, d.scopes, DEVICE_POLL_INTERVAL_SECS, new Date(d.now + DEVICE_CODE_TTL_SECS * 1000), now],
      )
      return { deviceCode, userCode, expiresIn: DEVICE_CODE_TTL_SECS, interval: DEVICE_POLL_INTERVAL_SECS }
    } catch (e: any) {
      // a user_code collision (40 bits, so rare): draw again
      if (e?.code === '23505' && attempt < 5) continue
      throw e
    }
  }
}

export interface PendingDevice {
  userCode: string
  clientId: string
  clientName: string
  builtin: boolean
  workspace: string
  scopes: string[]
}

/** A pending, unexpired authorization of a live client, for the verification page. */
export async function findPendingDevice(db: Db, userCode: string, now: number): Promise<PendingDevice | null> {
  const r = await db.query(
    `select d.user_code, d.client_id, d.workspace, d.scopes, c.client_name, c.builtin
       from oauth_device_codes d join oauth_clients c on c.id = d.client_id
      where d.user_code = $1 and d.status = 'pending' and d.expires_at > $2 and c.revoked_at is null`,
    [userCode, new Date(now)],
  )
  const row = r.rows[0]
  return row ? { userCode: row.user_code, clientId: row.client_id, clientName: row.client_name, builtin: row.builtin, workspace: row.workspace, scopes: row.scopes } : null
}

/** Records the human's decision; false when the code is no longer pending (expired, decided). */
export async function decideDevice(db: Db, userCode: string, decision: { approve: true; grantId: string } | { approve: false }, now: number): Promise<boolean> {
  const r = await db.query(
    `update oauth_device_codes set status = $2, grant_id = $3
      where user_code = $1 and status = 'pending' and expires_at > $4`,
    [userCode, decision.approve ? 'approved' : 'denied', decision.approve ? decision.grantId : null, new Date(now)],
  )
  return r.rowCount === 1
}

/**
 * One poll of the token endpoint. Order: unknown or already-redeemed → invalid_grant;
 * expired → expired_token; denied → access_denied; approved → the token pair (the
 * code is then spent); pending → slow_down if polled sooner than the interval (which
 * then grows by 5 s, RFC 8628 §3.5), else authorization_pending.
 */
export async function pollDevice(db: Db, p: { deviceCode: string; clientId: string; now: number }): Promise<TokenResponse> {
  const hash = sha256(p.deviceCode)
  const outcome = await tx(db, async (c) => {
    const r = await c.query('select * from oauth_device_codes where device_code_hash = $1 for update', [hash])
    const row = r.rows[0]
    if (!row || row.client_id !== p.clientId) return oauthErrors.deviceCodeUnknown()
    if (row.status === 'consumed') return oauthErrors.deviceCodeRedeemed()
    if (new Date(row.expires_at).getTime() <= p.now) return oauthErrors.deviceCodeExpired()
    if (row.status === 'denied') return oauthErrors.deviceDenied()
    if (row.status === 'approved') {
      await c.query(`update oauth_device_codes set status = 'consumed', last_polled_at = $2 where device_code_hash = $1`, [hash, new Date(p.now)])
      const familyId = 'fam_' + randomBytes(12).toString('base64url')
      return issueTokenPair(c, { grantId: row.grant_id, clientId: row.client_id, familyId, audience: row.resource, scopes: row.scopes, now: p.now })
    }
    const last = row.last_polled_at ? new Date(row.last_polled_at).getTime() : null
    if (last !== null && p.now - last < row.interval_secs * 1000) {
      const interval = row.interval_secs + DEVICE_SLOW_DOWN_STEP_SECS
      await c.query('update oauth_device_codes set interval_secs = $2, last_polled_at = $3 where device_code_hash = $1', [hash, interval, new Date(p.now)])
      return oauthErrors.slowDown(interval)
    }
    await c.query('update oauth_device_codes set last_polled_at = $2 where device_code_hash = $1', [hash, new Date(p.now)])
    return oauthErrors.authorizationPending()
  })
  // errors are returned, not thrown, so the poll bookkeeping above commits
  if (outcome instanceof OAuthError) throw outcome
  return outcome
}
