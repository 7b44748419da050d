// Shared set-up for the cloak tests (not a test file): a real server running sessions,
// the "public web" namespace answering as app.example.com, an org with cloak governance,
// and REST helpers that keep every reply for the canary searches.
import { randomBytes } from 'node:crypto'
import { startTestServer, type Reply, type TestServer } from '../../helpers/server.ts'
import { startPublicWeb, type PublicWeb } from '../../helpers/netns.ts'
import type { Bootstrapped } from '../../../api-server/auth/orgs.ts'
import { mintKey } from '../../../api-server/auth/keys.ts'
import { newId } from '../../../contracts/ids.ts'

export const APP = 'http://app.example.com'

interface T {
  teardown(fn: () => unknown): void
}

export interface CloakWorld {
  s: TestServer
  web: PublicWeb
  acme: Bootstrapped
  /** every reply body seen so far (for canary searches) */
  replies: string[]
  req(method: string, path: string, body?: unknown, token?: string): Promise<Reply>
  /** session_start over REST; throws unless 201 */
  open(body: Record<string, unknown>, token?: string): Promise<string>
  end(id: string, token?: string): Promise<Reply>
  /** a new agent of the org and a key bound to it with exactly these scopes */
  agentKey(scopes: string[], orgId?: string): Promise<{ agentId: string; key: string }>
  grant(identityId: string, agentId: string, token?: string): Promise<string>
  enableCloak(origins?: string[], token?: string): Promise<void>
}

export async function cloakWorld(t: T, opts: { env?: Record<string, string> } = {}): Promise<CloakWorld> {
  const web = await startPublicWeb(t)
  const aliases = { 'app.example.com': web.ip, 'other.example.com': web.ip }
  const s = await startTestServer(t, { sessions: true, env: { NIGHTJAR_HOST_ALIASES: JSON.stringify(aliases), ...opts.env } })
  const acme = await s.bootstrap()
  const replies: string[] = []
  const req = async (method: string, path: string, body?: unknown, token = acme.apiKey): Promise<Reply> => {
    const r = await s.request(method, path, { token, body })
    replies.push(r.text)
    return r
  }
  const world: CloakWorld = {
    s, web, acme, replies, req,
    open: async (body, token) => {
      const r = await req('POST', '/v1/sessions', body, token)
      if (r.status !== 201) throw new Error(`session_start ${r.status} ${r.text}`)
      return r.body.id as string
    },
    end: (id, token) => req('DELETE', `/v1/sessions/${id}`, undefined, token),
    agentKey: async (scopes, orgId = acme.orgId) => {
      const agentId = newId('nagt_')
      await s.testDb.db.query(`insert into agents (id, org_id, name, kind) values ($1,$2,$3,'agent')`, [agentId, orgId, `agent-${randomBytes(3).toString('hex')}`])
      const key = await mintKey(s.testDb.db, { orgId, name: `k-${randomBytes(3).toString('hex')}`, scopes, agentId, minterScopes: new Set(scopes) })
      return { agentId, key: key.secret }
    },
    grant: async (identityId, agentId, token = acme.apiKey) => {
      const r = await req('POST', `/v1/identities/${identityId}/grants`, {
        principalAgentId: agentId, role: 'assume', expiresAt: new Date(Date.now() + 3600_000).toISOString(),
        allowedOrigins: [], propagation: 'same_conversation', maxSessionDurationSecs: null, reason: 'cloak test',
      }, token)
      if (r.status !== 201) throw new Error(`grant ${r.status} ${r.text}`)
      return r.body.id as string
    },
    enableCloak: async (origins = [APP], token = acme.apiKey) => {
      const r = await req('PUT', '/v1/governance', { cloakEnabled: true, declaredAdvisorOrigins: origins }, token)
      if (r.status !== 200) throw new Error(`governance ${r.status} ${r.text}`)
    },
  }
  return world
}

/** The same fingerprint app-home.html prints: length and FNV-1a, never the value. */
export function proof(value: string): string {
  let h = 0x811c9dc5
  for (const c of new TextEncoder().encode(value)) {
    h ^= c
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return `len=${value.length} fnv=${h.toString(16).padStart(8, '0')}`
}

/** Session rows, BrowserSession resources and session pods: a refused start must add none. */
export async function sessionFootprint(s: TestServer): Promise<{ rows: number; resources: number; podSessions: Set<string> }> {
  const rows = Number((await s.testDb.db.query('select count(*) from sessions')).rows[0].count)
  const resources = (await s.plane!.sessions.list()).items.length
  const podSessions = new Set(s.plane!.pods.processes().flatMap((p) => (p.sessionId ? [p.sessionId] : [])))
  return { rows, resources, podSessions }
}

/** Nothing was created between two footprints (pods of ended sessions may still be going away). */
export function nothingCreated(before: Awaited<ReturnType<typeof sessionFootprint>>, after: Awaited<ReturnType<typeof sessionFootprint>>): boolean {
  return after.rows === before.rows && after.resources === before.resources && [...after.podSessions].every((id) => before.podSessions.has(id))
}
