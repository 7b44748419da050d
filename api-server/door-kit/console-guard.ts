// What protects the console sign-in form: a same-origin check (Origin, else
// Sec-Fetch-Site, else Referer), a login CSRF token (double-submit: a random nonce in a
// SameSite=Strict cookie and its HMAC in the form), the post-login destination rule,
// the "known browser" cookie that exempts a browser a user already signed in from
// from their account's lockout, and the 429 answer.
import { createHmac, randomBytes } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.ts'
import { safeEqual } from '../../contracts/ids.ts'
import type { ApiError } from '../../contracts/errors.ts'

/**
 * Only a same-origin path may be a post-login destination. The value is parsed as a
 * URL against a placeholder origin after refusing control characters (browsers strip
 * tab, CR and LF, so `/\t/evil.example` would become `//evil.example`) and backslashes
 * (browsers read `/\evil.example` as `//evil.example`); what comes back is the
 * serialised path, query and fragment, so the Location header can hold nothing else.
 */
export function safeNext(next: unknown, fallback: string): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2048) return fallback
  if (/[\u0000-\u001f\u007f\\]/.test(next)) return fallback
  if (!next.startsWith('/') || next.startsWith('//')) return fallback
  const placeholder = 'http://nightjar.invalid'
  let u: URL
  try {
    u = new URL(next, placeholder)
  } catch {
    return fallback
  }
  if (u.origin !== placeholder) return fallback
  const out = u.pathname + u.search + u.hash
  return out.startsWith('/') && !out.startsWith('//') && !/[\u0000-\u001f\u007f\\]/.test(out) ? out : fallback
}

/** The origins this server answers as: the configured base URL's, and the Host the browser used. */
function ownOrigins(services: Services, req: FastifyRequest): Set<string> {
  const out = new Set([new URL(services.config.baseUrl).origin])
  const host = req.headers.host
  if (host && /^[A-Za-z0-9.:[\]-]+$/.test(host)) {
    out.add(`http://${host}`.toLowerCase())
    out.add(`https://${host}`.toLowerCase())
  }
  return out
}

/**
 * Did this POST come from one of our own pages? A browser sends Origin on every
 * form POST (`null` from sandboxed or opaque contexts: refused); Sec-Fetch-Site and
 * Referer are fallbacks for older browsers. A request carrying none of them is not
 * from a browser and stands on the CSRF token alone.
 */
export function sameOriginRequest(services: Services, req: FastifyRequest): boolean {
  const origins = ownOrigins(services, req)
  const origin = req.headers.origin
  if (origin !== undefined) return origins.has(String(origin).toLowerCase())
  const site = req.headers['sec-fetch-site']
  if (site !== undefined) return site === 'same-origin' || site === 'none'
  const referer = req.headers.referer
  if (referer !== undefined) {
    try {
      return origins.has(new URL(String(referer)).origin.toLowerCase())
    } catch {
      return false
    }
  }
  return true
}

export const LOGIN_CSRF_COOKIE = 'nj_login_csrf'

const loginCsrfMac = (services: Services, nonce: string) => createHmac('sha256', services.cookieKey).update('login-csrf:' + nonce).digest('base64url')

/** The form token of the sign-in page; sets (or keeps) the nonce cookie it is bound to. */
export function issueLoginCsrf(services: Services, req: FastifyRequest, reply: FastifyReply): string {
  const existing = req.cookies?.[LOGIN_CSRF_COOKIE]
  const nonce = typeof existing === 'string' && /^[A-Za-z0-9_-]{32,64}$/.test(existing) ? existing : randomBytes(24).toString('base64url')
  reply.setCookie(LOGIN_CSRF_COOKIE, nonce, {
    path: services.config.consolePath, httpOnly: true, sameSite: 'strict', secure: services.config.baseUrl.startsWith('https:'),
  })
  return loginCsrfMac(services, nonce)
}

export function checkLoginCsrf(services: Services, req: FastifyRequest, token: unknown): boolean {
  const nonce = req.cookies?.[LOGIN_CSRF_COOKIE]
  if (typeof nonce !== 'string' || !nonce || typeof token !== 'string' || !token) return false
  return safeEqual(token, loginCsrfMac(services, nonce))
}

// --- known browsers ------------------------------------------------------------------
// After a successful sign-in the browser gets a signed cookie naming the account (by
// hash) and a random browser id. Failures from that browser count against
// (account, browser) instead of the account, so an attacker who locks an account out
// does not lock out the browsers its owner already uses.

export const KNOWN_BROWSER_COOKIE = 'nj_known_browser'
const KNOWN_BROWSER_DAYS = 180

export async function knownBrowser(services: Services, req: FastifyRequest, account: string): Promise<string | null> {
  const raw = req.cookies?.[KNOWN_BROWSER_COOKIE]
  if (!raw) return null
  try {
    const { payload } = await jwtVerify(raw, services.cookieKey, { algorithms: ['HS256'], typ: 'nj-known-browser', currentDate: new Date(services.now()) })
    return payload.acct === account && typeof payload.bid === 'string' ? payload.bid : null
  } catch {
    return null
  }
}

export async function rememberBrowser(services: Services, reply: FastifyReply, account: string, browserId: string | null): Promise<void> {
  const bid = browserId ?? randomBytes(12).toString('base64url')
  const expires = new Date(services.now() + KNOWN_BROWSER_DAYS * 86_400_000)
  const jwt = await new SignJWT({ acct: account, bid }).setProtectedHeader({ alg: 'HS256', typ: 'nj-known-browser' }).setExpirationTime(expires).sign(services.cookieKey)
  reply.setCookie(KNOWN_BROWSER_COOKIE, jwt, {
    path: services.config.consolePath, httpOnly: true, sameSite: 'strict', secure: services.config.baseUrl.startsWith('https:'), expires,
  })
}

// --- 429 ------------------------------------------------------------------------------

/** Does the client want a page (a browser navigating) rather than JSON? */
export function wantsHtml(req: FastifyRequest): boolean {
  return /\btext\/html\b/.test(String(req.headers.accept ?? ''))
}

/**
 * 429 with Retry-After: the given page for a browser, else the catalogue's JSON error
 * (errors.signInThrottled / errors.userCodeThrottled: {"error": {"code": "rate_limited", …}}).
 */
export function sendTooMany(req: FastifyRequest, reply: FastifyReply, json: ApiError, page: () => FastifyReply): FastifyReply {
  reply.headers(json.headers)
  if (wantsHtml(req)) return page()
  return reply.code(json.status).header('cache-control', 'no-store').send(json.toBody())
}
