// The console session: a signed (HS256, jose) cookie naming a server-side
// session row, so logout really ends it. Only this credential carries the
// human's role-derived scopes.
import { SignJWT, jwtVerify } from 'jose'
import { fastifyCookie } from '@fastify/cookie'
import { createHmac } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.ts'
import { newId, safeEqual } from '../../contracts/ids.ts'
import { ROLE_SCOPES, type Role } from '../auth/scopes.ts'
import type { AuthContext } from '../auth/context.ts'

export const COOKIE = 'nj_console'
const TTL_SECONDS = 12 * 3600

export interface ConsoleUser {
  sessionId: string
  userId: string
  email: string
  orgId: string
  orgName: string
  role: Role
  scopes: ReadonlySet<string>
  agentId: string
}

export async function startConsoleSession(services: Services, reply: FastifyReply, userId: string): Promise<void> {
  const sid = newId('nusr_').replace('nusr_', 'ncs_')
  const expires = new Date(Date.now() + TTL_SECONDS * 1000)
  await services.db.query('insert into console_sessions (id, user_id, expires_at) values ($1, $2, $3)', [sid, userId, expires])
  const jwt = await new SignJWT({ sid }).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setExpirationTime(expires).sign(services.cookieKey)
  reply.setCookie(COOKIE, jwt, {
    path: '/', httpOnly: true, sameSite: 'lax', secure: services.config.baseUrl.startsWith('https:'), expires,
  })
}

export async function consoleUser(services: Services, req: FastifyRequest): Promise<ConsoleUser | null> {
  return consoleUserOf(services, req.cookies?.[COOKIE])
}

/** The signed-in person behind a raw request's Cookie header (the live view's WebSocket upgrade). */
export async function consoleUserOfHeader(services: Services, cookieHeader: string | undefined): Promise<ConsoleUser | null> {
  if (!cookieHeader) return null
  let cookies: Record<string, string | undefined>
  try {
    cookies = fastifyCookie.parse(cookieHeader)
  } catch {
    return null
  }
  return consoleUserOf(services, cookies[COOKIE])
}

async function consoleUserOf(services: Services, raw: string | undefined): Promise<ConsoleUser | null> {
  if (!raw) return null
  try {
    const { payload } = await jwtVerify(raw, services.cookieKey, { algorithms: ['HS256'] })
    const r = await services.db.query(
      `select s.id as sid, u.id, u.email, u.role, u.org_id, o.name as org_name, a.id as agent_id
         from console_sessions s join users u on u.id = s.user_id join orgs o on o.id = u.org_id
         left join agents a on a.org_id = u.org_id and a.is_default
        where s.id = $1 and s.user_id = $2 and s.revoked_at is null and s.expires_at > now()`,
      [payload.sid, payload.sub],
    )
    const row = r.rows[0]
    if (!row) return null
    const role = row.role as Role
    return { sessionId: row.sid, userId: row.id, email: row.email, orgId: row.org_id, orgName: row.org_name, role, scopes: new Set(ROLE_SCOPES[role]), agentId: row.agent_id }
  } catch {
    return null
  }
}

export async function endConsoleSession(services: Services, reply: FastifyReply, user: ConsoleUser | null) {
  if (user) await services.db.query('update console_sessions set revoked_at = now() where id = $1', [user.sessionId])
  reply.clearCookie(COOKIE, { path: '/' })
}

export function consoleAuthContext(u: ConsoleUser): AuthContext {
  return { orgId: u.orgId, agentId: u.agentId, scopes: u.scopes, userId: u.userId, principal: { kind: 'console', principalId: u.userId, credentialId: u.sessionId, name: u.email } }
}

/** CSRF token bound to the console session (forms post it back). */
export function csrfToken(services: Services, u: ConsoleUser): string {
  return createHmac('sha256', services.cookieKey).update('csrf:' + u.sessionId).digest('base64url')
}

export function checkCsrf(services: Services, u: ConsoleUser, token: unknown): boolean {
  return typeof token === 'string' && safeEqual(token, csrfToken(services, u))
}
