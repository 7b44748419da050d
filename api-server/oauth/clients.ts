// OAuth clients: lookup, redirect-URI rules and registration (RFC 7591 metadata).
// Every client is public (token_endpoint_auth_method none) and may only redirect to
// loopback or out-of-band, so registering one confers no authority by itself: a
// token still needs a signed-in human's consent.
import type { Queryable } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import {
  DEFAULT_SCOPE_STRING, GRANT_AUTHORIZATION_CODE, OOB_REDIRECT_URI, SUPPORTED_GRANT_TYPES,
} from './constants.ts'
import { oauthErrors } from '../../contracts/errors.ts'
import { hiddenCharacter, isBlank } from '../../contracts/person-text.ts'

export interface OAuthClient {
  id: string
  name: string
  redirectUris: string[]
  grantTypes: string[]
  responseTypes: string[]
  scope: string
  builtin: boolean
  createdAt: Date
  revokedAt: Date | null
  /** a client whose id is its metadata document's URL (cimd.ts): that URL's host, shown on the consent page */
  metadataHost?: string
}

const rowToClient = (r: any): OAuthClient => ({
  id: r.id, name: r.client_name, redirectUris: r.redirect_uris, grantTypes: r.grant_types, responseTypes: r.response_types,
  scope: r.scope, builtin: r.builtin, createdAt: r.created_at, revokedAt: r.revoked_at,
  ...(/^https:\/\//.test(r.id) ? { metadataHost: new URL(r.id).host } : {}),
})

/** An active (not revoked) client, or null. */
export async function findClient(db: Queryable, clientId: string | undefined): Promise<OAuthClient | null> {
  // a registered id is short; a metadata document's URL (cimd.ts) may be up to 2000 characters
  if (!clientId || clientId.length > (clientId.startsWith('https://') ? 2000 : 100)) return null
  const r = await db.query('select * from oauth_clients where id = $1 and revoked_at is null', [clientId])
  return r.rows[0] ? rowToClient(r.rows[0]) : null
}

/** The client of a public-client token request; unknown or revoked is invalid_client (401). */
export async function requireClient(db: Queryable, clientId: string | undefined): Promise<OAuthClient> {
  if (!clientId) throw oauthErrors.oauthParamMissing('client_id')
  const c = await findClient(db, clientId)
  if (!c) throw oauthErrors.oauthUnknownClient()
  return c
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost'])
const LITERAL_LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost)(:\d{1,5})?(\/[^#\s]*)?$/

function parseHttpLoopback(uri: string): URL | null {
  let u: URL
  try {
    u = new URL(uri)
  } catch {
    return null
  }
  if (u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname) || u.username || u.password || u.hash) return null
  return u
}

/** Registration rule: http://127.0.0.1[:port]/…, http://localhost[:port]/… or the oob URN. */
export function isAllowedRedirectUri(uri: unknown): uri is string {
  if (typeof uri !== 'string' || uri.length > 2000) return false
  if (uri === OOB_REDIRECT_URI) return true
  // the literal forms only: no userinfo, no 127.1 / 0x7f.0.0.1 spellings, no fragment
  return LITERAL_LOOPBACK.test(uri) && parseHttpLoopback(uri) !== null
}

/**
 * Does the redirect_uri of an authorization request match a registered one? Exact,
 * except that a loopback URI matches on any port (RFC 8252 §7.3: native apps pick an
 * ephemeral port at run time); scheme, host, path and query must still match.
 */
export function redirectUriMatches(client: OAuthClient, requested: string): boolean {
  if (requested.length > 2000) return false
  if (client.redirectUris.includes(requested)) return true
  const req = LITERAL_LOOPBACK.test(requested) ? parseHttpLoopback(requested) : null
  if (!req) return false
  return client.redirectUris.some((registered) => {
    const reg = parseHttpLoopback(registered)
    return reg !== null && reg.hostname === req.hostname && reg.pathname === req.pathname && reg.search === req.search
  })
}

export interface RegisteredClient {
  client_id: string
  client_id_issued_at: number
  client_name: string
  redirect_uris: string[]
  token_endpoint_auth_method: 'none'
  grant_types: string[]
  response_types: string[]
  scope: string
}

const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string')

/**
 * Validates RFC 7591 metadata and stores the client. Unknown fields are ignored
 * (RFC 7591 §2); the requested scope is clamped to the default set.
 */
export async function registerClient(db: Queryable, body: unknown, nowMs: number): Promise<RegisteredClient> {
  const { grantTypes, responseTypes, redirectUris: uniqueUris, clientName } = validateClientMetadata(body)
  const id = newId('ncli_')
  const issuedAt = Math.floor(nowMs / 1000)
  await db.query(
    `insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types, scope, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [id, clientName, uniqueUris, grantTypes, responseTypes, DEFAULT_SCOPE_STRING, new Date(nowMs)],
  )
  return {
    client_id: id, client_id_issued_at: issuedAt, client_name: clientName, redirect_uris: uniqueUris,
    token_endpoint_auth_method: 'none', grant_types: grantTypes, response_types: responseTypes, scope: DEFAULT_SCOPE_STRING,
  }
}

export interface ClientMetadata { grantTypes: string[]; responseTypes: string[]; redirectUris: string[]; clientName: string }

/**
 * The rules of client metadata, for registration and for a client's metadata document
 * (cimd.ts) alike: public clients only, supported grants, loopback or out-of-band
 * redirect URIs, a sane name. Throws the registration error of the first rule broken.
 */
export function validateClientMetadata(body: unknown): ClientMetadata {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw oauthErrors.clientMetadataNotObject()
  const m = body as Record<string, unknown>

  // Omitted means none: every Nightjar client is public, and a client that does not
  // say otherwise gets the only method there is (RFC 7591's client_secret_basic
  // default would simply fail).
  const authMethod = m.token_endpoint_auth_method ?? 'none'
  if (authMethod !== 'none') throw oauthErrors.clientAuthMethod()

  const grantTypes = m.grant_types ?? [GRANT_AUTHORIZATION_CODE, 'refresh_token']
  if (!stringArray(grantTypes) || grantTypes.length === 0 || grantTypes.length > 5) throw oauthErrors.clientGrantTypes()
  const unsupported = grantTypes.filter((g) => !(SUPPORTED_GRANT_TYPES as readonly string[]).includes(g))
  if (unsupported.length) throw oauthErrors.clientGrantTypesUnsupported(unsupported.join(', ').slice(0, 200))

  const responseTypes = m.response_types ?? (grantTypes.includes(GRANT_AUTHORIZATION_CODE) ? ['code'] : [])
  if (!stringArray(responseTypes) || responseTypes.some((r) => r !== 'code')) throw oauthErrors.clientResponseTypes()

  const redirectUris = m.redirect_uris ?? []
  if (!stringArray(redirectUris) || redirectUris.length > 10) throw oauthErrors.redirectUrisInvalid()
  if (redirectUris.length === 0 && grantTypes.includes(GRANT_AUTHORIZATION_CODE)) throw oauthErrors.redirectUriRequired()
  if (!redirectUris.every(isAllowedRedirectUri)) {
    throw oauthErrors.redirectUriNotLoopback()
  }

  let clientName = 'Unnamed MCP client'
  if (m.client_name !== undefined) {
    if (typeof m.client_name !== 'string' || !m.client_name.trim() || m.client_name.length > 200) throw oauthErrors.clientName()
    // the consent page shows the name to a person: nothing in it may hide or reorder the page (contracts/person-text.ts)
    const hidden = hiddenCharacter(m.client_name)
    if (hidden) throw oauthErrors.clientNameHidden(hidden)
    if (isBlank(m.client_name)) throw oauthErrors.clientNameBlank()
    clientName = m.client_name.trim()
  }
  return { grantTypes, responseTypes, redirectUris: [...new Set(redirectUris)], clientName }
}
