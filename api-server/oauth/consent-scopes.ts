// What a consent grants of what the client asked for, and why the rest is not granted.
// Every grant is clamped to the OAuth default set, less what the person's role lacks;
// the page says so, so a client that asked for more is never left re-asking in a loop.
import { OAUTH_DEFAULT_SCOPES, grantableOverOAuth, isScope } from '../auth/scopes.ts'

/** A scope asked for that the grant will not carry, and why, in words for the consent page. */
export interface RefusedScope {
  scope: string
  why: string
}

export interface ConsentScopes {
  granted: string[]
  refused: RefusedScope[]
  /** how many asked-for names are no Nightjar scope (never echoed: the client chose them) */
  unknown: number
}

/** The scopes a grant carries for a person holding `held`: the default set, within their role. */
export function grantedScopes(held: ReadonlySet<string>): string[] {
  return OAUTH_DEFAULT_SCOPES.filter((s) => held.has(s))
}

/** The `scope` parameter as a list: space-separated, each name once (RFC 6749 §3.3). */
export function requestedScopes(scope: unknown): string[] {
  return typeof scope === 'string' ? [...new Set(scope.split(' ').filter(Boolean))] : []
}

export function consentScopes(requested: unknown, held: ReadonlySet<string>, role: string): ConsentScopes {
  const granted = grantedScopes(held)
  const asked = requestedScopes(requested)
  const refused = asked.filter((s) => isScope(s) && !granted.includes(s)).map((scope) => ({
    scope,
    why: grantableOverOAuth(scope)
      ? `your role (${role}) does not hold it`
      : 'an OAuth sign-in never grants it; an API key made in the console can carry it',
  }))
  return { granted, refused, unknown: asked.filter((s) => !isScope(s)).length }
}
