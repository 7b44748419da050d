// Client ID Metadata Documents: a client_id that is an https URL names the client's
// metadata, which we fetch from an address a stranger chose, so the fetch is fenced: https
// only, no redirects, one deadline and a size cap, and the address dialled is the address
// checked: the deny floor's rule (contracts/deny-floor.ts), as for webhooks and browsers —
// the floor and NIGHTJAR_DENY_CIDRS always, local addresses and localhost names unless
// NIGHTJAR_CIMD_ALLOWED_HOSTS lists the host. Design: docs/mcp.md
import { request } from 'node:https'
import type { IncomingMessage } from 'node:http'
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { readFileSync } from 'node:fs'
import type { Services } from '../services.ts'
import { pageErrors, type ErrorReply } from '../../contracts/errors.ts'
import { DenyRules, isLocalName } from '../../contracts/deny-floor.ts'
import { validateClientMetadata } from './clients.ts'
import type { OAuthClient } from './clients.ts'
import { DEFAULT_SCOPE_STRING } from './constants.ts'

export const CIMD_TIMEOUT_MS = 5000
export const CIMD_MAX_BYTES = 5 * 1024
const CACHE_MAX_MS = 24 * 3600_000
const CACHE_DEFAULT_MS = 5 * 60_000

/** Does this client_id name a metadata document (rather than a registered ncli_ id)? */
export const isMetadataUrl = (clientId: string) => /^https?:\/\//i.test(clientId)

/** A document refused: the authorization page shows its reply (nothing is redirected). */
export class MetadataRefused extends Error {
  readonly reply: ErrorReply
  constructor(reply: ErrorReply) {
    super(reply.message)
    this.reply = reply
    this.name = 'MetadataRefused'
  }
}

const refused = (why: string) => new MetadataRefused(pageErrors.authorizeClientMetadataInvalid(why))

/** The URL rules of the draft: https, a path, no userinfo or fragment, no dot segments. */
function checkUrl(clientId: string): URL {
  let u: URL
  try {
    u = new URL(clientId)
  } catch {
    throw refused('the client_id is not a URL')
  }
  if (u.protocol !== 'https:') throw refused('the client_id URL must use https')
  if (u.username || u.password || u.hash || clientId.includes('#')) throw refused('the client_id URL must not carry userinfo or a fragment')
  if (u.pathname === '/' || /\/\.\.?(\/|$)/.test(clientId.replace(/^https:\/\/[^/]+/i, ''))) throw refused('the client_id URL needs a path without dot segments')
  if (u.href !== clientId) throw refused('the client_id URL must be in normalised form')
  if (clientId.length > 2000) throw refused('the client_id URL is too long')
  return u
}

interface Cached { client: OAuthClient; expiresAt: number }

export interface CimdFetcher {
  resolve(clientId: string): Promise<OAuthClient>
}

export function cimdFetcher(services: Pick<Services, 'db' | 'config' | 'now'>): CimdFetcher {
  const fence = fenceOf(services.config)
  const cache = new Map<string, Cached>()
  return {
    async resolve(clientId) {
      const hit = cache.get(clientId)
      if (hit && hit.expiresAt > services.now()) return hit.client
      const u = checkUrl(clientId)
      const { body, maxAgeMs } = await fetchDocument(fence, u)
      const meta = checkDocument(clientId, body)
      const now = services.now()
      const client = await recordClient(services.db, clientId, meta, now, u.host)
      if (maxAgeMs > 0) cache.set(clientId, { client, expiresAt: now + maxAgeMs })
      else cache.delete(clientId)
      return client
    },
  }
}

/** What a fetch is held to: the CA it trusts, and the hosts and addresses it may not dial. */
interface Fence {
  ca?: string
  refusedAddress(host: string, address: string): boolean
  refusedName(host: string): boolean
}

function fenceOf(config: Services['config']): Fence {
  const cfg = config.cimd
  const allowed = new Set(cfg.allowedHosts.map((h: string) => h.toLowerCase()))
  const deny = new DenyRules(config.denyCidrs)
  return {
    ca: cfg.caFile ? readFileSync(cfg.caFile, 'utf8') : undefined,
    // the floor and the denied ranges bind every host; local addresses and names only the unlisted
    refusedAddress: (host, address) => {
      const refusal = deny.refusal(address)
      return refusal === 'deny_floor' || (refusal === 'local' && !allowed.has(host))
    },
    refusedName: (host) => !isIP(host) && isLocalName(host) && !allowed.has(host),
  }
}

/** the check runs on the addresses the socket will dial: this is the request's own lookup */
function guardedLookup(fence: Fence, host: string): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const list = addresses as LookupAddress[]
      if (list.some((a) => fence.refusedAddress(host, a.address))) return callback(Object.assign(new Error('not a public address'), { code: 'ENOTPUBLIC' }), '', 0)
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list)
      return callback(null, list[0].address, list[0].family)
    })
  }
}

/** GET the document: https only, no redirects, one deadline, the size cap, JSON. */
async function fetchDocument(fence: Fence, u: URL): Promise<{ body: unknown; maxAgeMs: number }> {
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if ((isIP(host) && fence.refusedAddress(host, host)) || fence.refusedName(host)) throw refused('its address is not public')
  return new Promise((resolve, reject) => {
    const req = request(u, {
      method: 'GET', headers: { accept: 'application/json' }, lookup: guardedLookup(fence, host), ca: fence.ca ? [fence.ca] : undefined, agent: false,
      timeout: CIMD_TIMEOUT_MS,
    }, (res) => { readDocument(res).then(resolve, reject) })
    // one deadline for the whole exchange (connect, headers and body), not per socket event
    const deadline = setTimeout(() => { req.destroy(); reject(refused(`the document did not arrive within ${CIMD_TIMEOUT_MS / 1000} s`)) }, CIMD_TIMEOUT_MS)
    req.on('close', () => clearTimeout(deadline))
    req.on('timeout', () => req.destroy())
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(deadline)
      reject(e.code === 'ENOTPUBLIC' ? refused('its address is not public') : refused('the document could not be fetched'))
    })
    req.end()
  })
}

/** The answer's body: a 200 of application/json within the size cap, parsed. */
function readDocument(res: IncomingMessage): Promise<{ body: unknown; maxAgeMs: number }> {
  return new Promise((resolve, reject) => {
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
    if (res.statusCode !== 200) { res.destroy(); return reject(refused(`the document answered HTTP ${res.statusCode}`)) }
    if (type !== 'application/json') { res.destroy(); return reject(refused('the document is not application/json')) }
    if (Number(res.headers['content-length'] ?? 0) > CIMD_MAX_BYTES) { res.destroy(); return reject(refused(`the document is larger than ${CIMD_MAX_BYTES} bytes`)) }
    const chunks: Buffer[] = []
    let size = 0
    res.on('data', (c: Buffer) => {
      size += c.length
      if (size > CIMD_MAX_BYTES) { res.destroy(); reject(refused(`the document is larger than ${CIMD_MAX_BYTES} bytes`)) }
      chunks.push(c)
    })
    res.on('error', () => reject(refused('the document could not be read')))
    res.on('end', () => {
      if (size > CIMD_MAX_BYTES) return
      let body: unknown
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        return reject(refused('the document is not JSON'))
      }
      resolve({ body, maxAgeMs: maxAge(res.headers['cache-control']) })
    })
  })
}

/** The document names itself and holds to the registration rules. */
function checkDocument(clientId: string, body: unknown): ReturnType<typeof validateClientMetadata> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw refused('the document is not a JSON object')
  if ((body as Record<string, unknown>).client_id !== clientId) throw refused('its client_id does not equal the URL it was fetched from')
  try {
    return validateClientMetadata(body)
  } catch (e) {
    throw refused(`its metadata breaks a registration rule (${(e as Error).message.replace(/\.$/, '')})`)
  }
}

/** upsert: grants and codes refer to the client row; a changed document updates it (a revoked client stays refused) */
async function recordClient(db: Services['db'], clientId: string, meta: ReturnType<typeof validateClientMetadata>, now: number, metadataHost: string): Promise<OAuthClient> {
  await db.query(
    `insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types, scope, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (id) do update set client_name = excluded.client_name, redirect_uris = excluded.redirect_uris,
       grant_types = excluded.grant_types, response_types = excluded.response_types`,
    [clientId, meta.clientName, meta.redirectUris, meta.grantTypes, meta.responseTypes, DEFAULT_SCOPE_STRING, new Date(now)],
  )
  const r = await db.query('select * from oauth_clients where id = $1 and revoked_at is null', [clientId])
  if (!r.rows[0]) throw refused('this client was revoked')
  return {
    id: clientId, name: meta.clientName, redirectUris: meta.redirectUris, grantTypes: meta.grantTypes, responseTypes: meta.responseTypes,
    scope: DEFAULT_SCOPE_STRING, builtin: false, createdAt: r.rows[0].created_at, revokedAt: null, metadataHost,
  }
}

/** Cache-Control max-age in ms (no-store / no-cache: 0; absent: 5 min), at most a day. */
function maxAge(header: string | string[] | undefined): number {
  const v = String(header ?? '').toLowerCase()
  if (/\b(no-store|no-cache)\b/.test(v)) return 0
  const m = /\bmax-age\s*=\s*(\d+)/.exec(v)
  return m ? Math.min(CACHE_MAX_MS, Number(m[1]) * 1000) : CACHE_DEFAULT_MS
}
