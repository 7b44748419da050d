// Upstream proxies on the api-server's side (docs/proxy.md), a session's or an identity's
// default (here, so sessions/ reads it as it reads the rest of personas/): checked against
// the org's allowlist, its credentials sealed at once under the owner's id (the KMS
// envelope, like a credential), opened only for the one pod call that hands them to a
// session's egress gateway. Nothing here logs, journals or returns a username or password.
import type { Queryable } from '../store/db.ts'
import type { Sealer, SealContext } from '../kms/index.ts'
import { noKmsError } from '../kms/index.ts'
import { errors } from '../../contracts/errors.ts'
import { formatHostPattern } from '../../contracts/hosts.ts'
import { formatProxyUrl, parseProxyUrl, proxyAllowed, type ProxyAddress } from '../../contracts/proxy.ts'
import { getGovernance } from './governance.ts'

/** A proxy as a caller names it (session_start's `proxy`, an identity's default). */
export interface ProxyRequest {
  url: string
  username?: string
  password?: string
}

/** Whose proxy credentials these are: a session's, or an identity's default. */
export interface ProxyOwner {
  orgId: string
  kind: 'session' | 'identity'
  id: string
}

const sealContext = (o: ProxyOwner): SealContext => ({ orgId: o.orgId, kind: `proxy_auth:${o.kind}`, ids: [o.id] })

/** The proxy's normalised URL once its host is on the org's allowlist; 400 proxy_host_not_allowed otherwise. */
export async function allowedProxy(db: Queryable, orgId: string, url: string): Promise<{ url: string; address: ProxyAddress }> {
  const address = parseProxyUrl(url)
  // the operation's schema refused a malformed URL already; a stored one is re-read here
  if (typeof address === 'string') throw errors.invalidRequest(`proxy.url: ${address}`)
  const { proxyHosts } = await getGovernance(db, orgId)
  if (!proxyAllowed(address, proxyHosts)) throw errors.proxyHostNotAllowed(formatHostPattern({ host: address.host, port: address.port }))
  return { url: formatProxyUrl(address), address }
}

/** Seals the credentials (null when there are none); the transient Buffer is zeroed. */
export async function sealProxyAuth(sealer: Sealer, owner: ProxyOwner, p: Pick<ProxyRequest, 'username' | 'password'>): Promise<string | null> {
  if (p.username === undefined) return null
  if (!sealer.enabled) throw noKmsError() // fail closed: nothing unencrypted is stored (ERR-20)
  const plain = Buffer.from(JSON.stringify({ username: p.username, password: p.password ?? '' }), 'utf8')
  try {
    return await sealer.seal(sealContext(owner), plain)
  } finally {
    plain.fill(0)
  }
}

/** Opens sealed credentials for the hand-over to a pod; the caller drops them at once. */
export async function openProxyAuth(sealer: Sealer, owner: ProxyOwner, sealed: string): Promise<{ username: string; password: string }> {
  const plain = await sealer.open(sealContext(owner), sealed)
  try {
    return JSON.parse(plain.toString('utf8')) as { username: string; password: string }
  } finally {
    plain.fill(0)
  }
}

/** An identity's default proxy: its URL and sealed credentials, or null. */
export async function identityDefaultProxy(db: Queryable, orgId: string, identityId: string): Promise<{ url: string; sealedAuth: string | null } | null> {
  const r = await db.query('select proxy_url, proxy_sealed_auth from identities where org_id = $1 and id = $2', [orgId, identityId])
  const row = r.rows[0]
  return row?.proxy_url ? { url: row.proxy_url, sealedAuth: row.proxy_sealed_auth ?? null } : null
}

/** Sets (or with null clears) an identity's default proxy; false when the identity is unknown. */
export async function setIdentityDefaultProxy(db: Queryable, orgId: string, identityId: string, proxy: { url: string; sealedAuth: string | null } | null): Promise<boolean> {
  const r = await db.query('update identities set proxy_url = $3, proxy_sealed_auth = $4 where org_id = $1 and id = $2', [orgId, identityId, proxy?.url ?? null, proxy?.sealedAuth ?? null])
  return (r.rowCount ?? 0) > 0
}
