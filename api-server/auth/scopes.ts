// Scopes are literal strings carried by a credential. A Bearer credential has
// exactly the scopes it was minted with; only the console session derives
// scopes from the human's org role.
import { errors, type ApiError } from '../../contracts/errors.ts'

export const ALL_SCOPES = [
  'sessions:read',
  'sessions:write',
  'sessions:drive',
  // run page JavaScript (evaluate): a read path around the sealed fill, so a scope of its own
  'sessions:evaluate',
  'identities:read',
  'identities:write',
  'networks:read',
  'networks:write',
  'keys:write',
  'agents:write',
  'org:admin',
] as const
export type Scope = (typeof ALL_SCOPES)[number]

/** The OAuth default set: every OAuth grant is clamped to exactly this. */
export const OAUTH_DEFAULT_SCOPES: readonly Scope[] = ['sessions:write', 'sessions:drive', 'identities:read']

export type Role = 'owner' | 'admin' | 'member'

export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: ALL_SCOPES,
  admin: ALL_SCOPES.filter((s) => s !== 'keys:write'),
  member: ['sessions:read', 'sessions:write', 'sessions:drive', 'identities:read', 'networks:read'],
}

export function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s)
}

export function hasScopes(held: ReadonlySet<string>, needed: readonly string[]): boolean {
  return needed.every((s) => held.has(s))
}

/** The scopes of `needed` that `held` lacks, in `needed`'s order. */
export function missingScopes(held: ReadonlySet<string>, needed: readonly string[]): string[] {
  return needed.filter((s) => !held.has(s))
}

/** The 403 naming what `held` lacks of `needed`; null when nothing is missing. */
export function scopeRefusal(held: ReadonlySet<string>, needed: readonly string[]): ApiError | null {
  const missing = missingScopes(held, needed)
  return missing.length ? errors.missingScope(missing.join(' ')) : null
}

/** The one scope check of every door and console page: throws the 403 naming what is missing. */
export function requireScopes(held: ReadonlySet<string>, needed: readonly string[]): void {
  const refusal = scopeRefusal(held, needed)
  if (refusal) throw refusal
}

/** Whether an OAuth grant can ever carry `scope` (every grant is clamped to the default set). */
export function grantableOverOAuth(scope: string): boolean {
  return (OAUTH_DEFAULT_SCOPES as readonly string[]).includes(scope)
}
