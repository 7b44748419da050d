// Upstream proxies on the api-server's side (docs/proxy.md), a session's or an identity's
// default (here, so sessions/ reads it as it reads the rest of personas/): held to the
// platform's address rule, then the org's allowlist; its credentials sealed at once under
// the owner's id (the KMS envelope), opened only for the one pod call that hands them to a
// session's egress gateway. Nothing here logs, journals or returns a username or password.
import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { Queryable } from '../store/db.ts'
import type { Config } from '../config.ts'
import type { Sealer, SealContext } from '../kms/index.ts'
import { noKmsError } from '../kms/index.ts'
import { errors } from '../../contracts/errors.ts'
import { formatHostPattern } from '../../contracts/hosts.ts'
import { formatProxyUrl, isPlatformProxy, parseProxyUrl, proxyAllowed, ProxyReach, type ProxyAddress } from '../../contracts/proxy.ts'
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

/** What the platform says of proxies: its deny ranges, its own proxies, where it listens. */
export type ProxyPlatform = Pick<Config, 'denyCidrs' | 'platformProxies' | 'host'> & { replica: Pick<Config['replica'], 'address'> }

/** This api-server's own addresses: its interfaces', the one it listens on, the one replicas reach it at. */
function ownAddresses(platform: ProxyPlatform): string[] {
  const out = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
  if (isIP(platform.host)) out.push(platform.host)
  const replicaHost = platform.replica.address ? URL.parse(platform.replica.address)?.hostname.replace(/^\[|\]$/g, '') : undefined
  if (replicaHost && isIP(replicaHost)) out.push(replicaHost)
  return out
}

/** Is this proxy one the platform itself names (NIGHTJAR_PLATFORM_PROXIES)? The pod is told, so it may be internal. */
export function platformProxy(platform: Pick<Config, 'platformProxies'>, url: string): boolean {
  const a = parseProxyUrl(url)
  return typeof a !== 'string' && isPlatformProxy(a, platform.platformProxies)
}

/**
 * The proxy's normalised URL once the platform's rule and the org's allowlist allow it:
 * 400 proxy_address_refused for an address (or a localhost name) no allowlist can allow —
 * known now for a literal; a name is judged again by the pod once resolved —, 400
 * proxy_host_not_allowed for a host the org admin has not listed.
 */
export async function allowedProxy(db: Queryable, orgId: string, url: string, platform: ProxyPlatform): Promise<{ url: string; address: ProxyAddress }> {
  const address = parseProxyUrl(url)
  // the operation's schema refused a malformed URL already; a stored one is re-read here
  if (typeof address === 'string') throw errors.invalidRequest(`proxy.url: ${address}`)
  const reach = new ProxyReach({ denyCidrs: platform.denyCidrs, ownAddresses: () => ownAddresses(platform) })
  if (reach.hostRefused(address.host, isPlatformProxy(address, platform.platformProxies))) throw errors.proxyAddressRefused()
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
