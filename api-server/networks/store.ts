// Networks and join tokens. Every lookup is org-scoped except the daemon join,
// which is authenticated by the token itself (hash lookup, constant work).
import type { Queryable } from '../store/db.ts'
import { newId, newToken, sha256 } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import { HOST_SHAPE, hostEntryProblem, normalizeHostEntry } from '../../contracts/hosts.ts'

export interface NetworkRow {
  id: string
  orgId: string
  name: string
  slug: string
  declaredHosts: string[]
  createdAt: string
}

export const unknownNetwork = () => errors.notFound('network')

const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}$/

export function slugify(name: string): string {
  return name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'network'
}

export function validateNetworkName(name: string): string {
  const n = name.trim()
  if (!NAME.test(n)) throw errors.invalidRequest('name: 1-63 letters, digits, spaces or . _ - (starting with a letter or digit)')
  if (n.startsWith('nnet_')) throw errors.invalidRequest('name: must not look like a network id')
  return n
}

/** Declared hosts: host, IPv4, [IPv6] or ::1, each optionally with :port; canonical and de-duplicated. */
export function validateDeclaredHosts(hosts: readonly string[]): string[] {
  const out: string[] = []
  hosts.forEach((h, i) => {
    // the limits every host entry has at request time (contracts/hosts.ts), with this list's own words for a malformed one
    const problem = hostEntryProblem(h)
    const n = problem ? null : normalizeHostEntry(h)
    if (!n) {
      throw errors.invalidRequest(`declaredHosts.${i}: ${problem && problem !== HOST_SHAPE ? problem : 'must be a host, IPv4 or [IPv6] address, optionally with :port (no scheme, path or wildcard)'}`)
    }
    if (!out.includes(n)) out.push(n)
  })
  return out
}

function toRow(r: Record<string, any>): NetworkRow {
  return { id: r.id, orgId: r.org_id, name: r.name, slug: r.slug, declaredHosts: r.declared_hosts, createdAt: new Date(r.created_at).toISOString() }
}

export async function insertNetwork(db: Queryable, orgId: string, name: string): Promise<{ network: NetworkRow; token: { tokenId: string; secret: string } }> {
  const id = newId('nnet_')
  try {
    const r = await db.query('insert into networks (id, org_id, name, slug) values ($1, $2, $3, $4) returning *', [id, orgId, name, slugify(name)])
    const token = await insertToken(db, id)
    return { network: toRow(r.rows[0]), token }
  } catch (e: any) {
    if (e.code === '23505' && /networks_org_id/.test(e.constraint ?? '')) throw errors.networkNameTaken()
    throw e
  }
}

export async function insertToken(db: Queryable, networkId: string): Promise<{ tokenId: string; secret: string }> {
  const tokenId = newId('ntok_')
  const secret = newToken('njt_')
  await db.query('insert into network_join_tokens (id, network_id, token_hash) values ($1, $2, $3)', [tokenId, networkId, sha256(secret)])
  return { tokenId, secret }
}

export async function listNetworks(db: Queryable, orgId: string): Promise<NetworkRow[]> {
  const r = await db.query('select * from networks where org_id = $1 order by created_at', [orgId])
  return r.rows.map(toRow)
}

export async function getNetwork(db: Queryable, orgId: string, id: string): Promise<NetworkRow> {
  const r = await db.query('select * from networks where id = $1 and org_id = $2', [id, orgId])
  if (!r.rows[0]) throw unknownNetwork()
  return toRow(r.rows[0])
}

/** A network by id, name or slug, inside the org; null when absent (or another org's). */
export async function resolveNetwork(db: Queryable, orgId: string, ref: string): Promise<NetworkRow | null> {
  const r = await db.query('select * from networks where org_id = $1 and (id = $2 or name = $2 or slug = $3) order by (id = $2) desc limit 1', [orgId, ref, ref.toLowerCase()])
  return r.rows[0] ? toRow(r.rows[0]) : null
}

export async function setDeclaredHosts(db: Queryable, orgId: string, id: string, hosts: string[]): Promise<NetworkRow> {
  const r = await db.query('update networks set declared_hosts = $3 where id = $1 and org_id = $2 returning *', [id, orgId, hosts])
  if (!r.rows[0]) throw unknownNetwork()
  return toRow(r.rows[0])
}

/** Appends one canonical host unless declared already; null when it was (nothing changed). */
export async function appendDeclaredHost(db: Queryable, orgId: string, id: string, host: string): Promise<NetworkRow | null> {
  const r = await db.query(
    'update networks set declared_hosts = array_append(declared_hosts, $3::text) where id = $1 and org_id = $2 and not ($3::text = any(declared_hosts)) returning *',
    [id, orgId, host],
  )
  if (r.rows[0]) return toRow(r.rows[0])
  await getNetwork(db, orgId, id) // unknown (or deleted meanwhile): the one 404
  return null
}

/** the declared hosts as the table has them now (any org: the broker's lookup by network id) */
export async function declaredHostsOf(db: Queryable, networkId: string): Promise<string[]> {
  const r = await db.query('select declared_hosts from networks where id = $1', [networkId])
  return (r.rows[0]?.declared_hosts as string[] | undefined) ?? []
}

export async function revokeTokens(db: Queryable, networkId: string): Promise<void> {
  await db.query('update network_join_tokens set revoked_at = now() where network_id = $1 and revoked_at is null', [networkId])
}

export async function deleteNetworkRow(db: Queryable, orgId: string, id: string): Promise<NetworkRow> {
  const r = await db.query('delete from networks where id = $1 and org_id = $2 returning *', [id, orgId])
  if (!r.rows[0]) throw unknownNetwork()
  return toRow(r.rows[0])
}

/** The daemon join: the token must be live and belong to the network named or slugged. */
export async function authenticateJoin(db: Queryable, ref: string, token: string): Promise<{ networkId: string; orgId: string } | null> {
  if (!/^njt_[0-9A-Za-z]{20,60}$/.test(token) || !ref) return null
  const r = await db.query(
    `select n.id, n.org_id from network_join_tokens t join networks n on n.id = t.network_id
      where t.token_hash = $1 and t.revoked_at is null and (n.name = $2 or n.slug = $3 or n.id = $2)`,
    [sha256(token), ref, ref.toLowerCase()],
  )
  return r.rows[0] ? { networkId: r.rows[0].id, orgId: r.rows[0].org_id } : null
}

// --- daemon registry --------------------------------------------------------------

export async function upsertDaemon(db: Queryable, d: { networkId: string; orgId: string; daemonId: string; host: string; version: string; connectedSince: string; replicaId: string }) {
  // a daemon that reconnected to another replica moves its row there
  await db.query(
    `insert into network_daemons (id, network_id, org_id, host, version, connected_since, online, replica_id) values ($1,$2,$3,$4,$5,$6,true,$7)
     on conflict (network_id, id) do update set host = excluded.host, version = excluded.version, connected_since = excluded.connected_since, online = true, last_seen_at = now(), replica_id = excluded.replica_id`,
    [d.daemonId, d.networkId, d.orgId, d.host.slice(0, 200), d.version.slice(0, 50), d.connectedSince, d.replicaId],
  )
}

/** Offline, unless the daemon has moved to another replica meanwhile (its old socket closing late must not undo the move). */
export async function markDaemonOffline(db: Queryable, networkId: string, daemonId: string, replicaId: string) {
  await db.query('update network_daemons set online = false, last_seen_at = now() where network_id = $1 and id = $2 and replica_id = $3', [networkId, daemonId, replicaId])
}

export interface DaemonRow {
  id: string
  host: string
  version: string
  connectedSince: string
  /** the replica holding its WebSocket (null: registered before replicas were recorded) */
  replicaId: string | null
  /** online, on a replica whose heartbeat is fresh */
  live: boolean
}

/**
 * A network's daemons. A daemon is live while its row says online and its replica still
 * heartbeats (`deadAfter`, an SQL interval): a killed replica cannot mark its daemons offline.
 * Offline daemons, and daemons of replicas gone for good, are forgotten after an hour so
 * one-off ids do not pile up.
 */
export async function daemonRows(db: Queryable, networkId: string, deadAfter: string): Promise<DaemonRow[]> {
  await db.query(
    `delete from network_daemons d where d.network_id = $1 and d.last_seen_at < now() - interval '1 hour'
      and (not d.online or not exists (select 1 from api_replicas r where r.id = d.replica_id))`,
    [networkId],
  )
  const r = await db.query(
    `select d.*, (d.online and r.heartbeat_at > now() - $2::interval) as live from network_daemons d
       left join api_replicas r on r.id = d.replica_id where d.network_id = $1 order by d.connected_since`,
    [networkId, deadAfter],
  )
  return r.rows.map((x) => ({
    id: x.id as string,
    host: x.host as string,
    version: x.version as string,
    connectedSince: new Date(x.connected_since).toISOString(),
    replicaId: (x.replica_id as string | null) ?? null,
    live: x.live === true,
  }))
}
