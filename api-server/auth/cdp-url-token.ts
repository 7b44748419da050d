// CDP URL tokens: for CDP clients that cannot send an Authorization header (Puppeteer's
// browserURL, chrome-remote-interface, agent-browser), a credential carried in the URL's
// path. Bound to one session, good for that session's CDP endpoint only (never a Bearer
// credential: no resolver knows the prefix), signed with a key of its own derived from the
// server key, expiring after TOKEN_TTL_MS or with the session, whichever comes first.
import { createHmac } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import type { AuthContext } from './context.ts'

export const CDP_TOKEN_PREFIX = 'njc_'
/** short enough that a URL pasted somewhere stops working soon; a client connects within it */
export const TOKEN_TTL_MS = 15 * 60_000
const TYP = 'nj-cdp-url'

/** A path segment that is a CDP URL token (a JWT's three base64url parts). */
export const CDP_TOKEN_SEGMENT = /^njc_[A-Za-z0-9_-]{10,1000}\.[A-Za-z0-9_-]{10,1000}\.[A-Za-z0-9_-]{10,200}$/

export interface TokenDeps {
  cookieKey: Uint8Array
  now: () => number
}

// a key of its own: no other signed value of the server (console cookies) ever verifies as one
const keyOf = (deps: TokenDeps) => new Uint8Array(createHmac('sha256', deps.cookieKey).update('nightjar cdp url token').digest())

/** A token for `sessionId`'s CDP endpoint, acting as `auth` with sessions:drive only. */
export async function mintCdpToken(deps: TokenDeps, { auth, sessionId }: { auth: AuthContext; sessionId: string }): Promise<{ token: string; expiresAt: number }> {
  const expiresAt = deps.now() + TOKEN_TTL_MS
  const { principal } = auth
  const jwt = await new SignJWT({ org: auth.orgId, agt: auth.agentId, pk: principal.kind, pid: principal.principalId, cid: principal.credentialId })
    .setProtectedHeader({ alg: 'HS256', typ: TYP })
    .setSubject(sessionId)
    .setExpirationTime(Math.floor(expiresAt / 1000))
    .sign(keyOf(deps))
  return { token: CDP_TOKEN_PREFIX + jwt, expiresAt: Math.floor(expiresAt / 1000) * 1000 }
}

/** The caller a token stands for, if it is good and bound to `sessionId`; null otherwise (one answer for every failure). */
export async function resolveCdpToken(deps: TokenDeps, token: string, sessionId: string): Promise<AuthContext | null> {
  if (!CDP_TOKEN_SEGMENT.test(token)) return null
  try {
    const { payload } = await jwtVerify(token.slice(CDP_TOKEN_PREFIX.length), keyOf(deps), { algorithms: ['HS256'], typ: TYP, currentDate: new Date(deps.now()) })
    const { org, agt, pk, pid, cid } = payload
    if (payload.sub !== sessionId || typeof org !== 'string' || typeof agt !== 'string' || typeof pid !== 'string' || typeof cid !== 'string') return null
    if (pk !== 'key' && pk !== 'oauth' && pk !== 'console') return null
    return { orgId: org, agentId: agt, scopes: new Set(['sessions:drive']), principal: { kind: pk, principalId: pid, credentialId: cid, name: 'CDP URL token' } }
  } catch {
    return null
  }
}
