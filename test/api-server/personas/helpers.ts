// Shared set-up for the persona tests: a real server, orgs, agents and REST helpers.
// Nothing here ever puts a secret value into an assertion message.
import { randomBytes } from 'node:crypto'
import type { TestServer } from '../../helpers/server.ts'
import { newId } from '../../../contracts/ids.ts'

export const HOUR = 3600_000

/** A controllable clock: tests move time instead of sleeping. */
export function clock(start = Date.parse('2030-01-01T00:00:00Z')) {
  let t = start
  const now = () => t
  return { now, advance: (ms: number) => { t += ms }, iso: (offsetMs = 0) => new Date(t + offsetMs).toISOString() }
}

export async function insertAgent(s: TestServer, orgId: string, opts: { name?: string; parentAgentId?: string } = {}): Promise<string> {
  const id = newId('nagt_')
  await s.testDb.db.query(
    `insert into agents (id, org_id, name, kind, parent_agent_id) values ($1,$2,$3,$4,$5)`,
    [id, orgId, opts.name ?? `agent-${randomBytes(3).toString('hex')}`, opts.parentAgentId ? 'child' : 'agent', opts.parentAgentId ?? null],
  )
  return id
}

export async function mintKey(s: TestServer, ownerKey: string, scopes: string[], agent?: string): Promise<string> {
  const r = await s.request('POST', '/v1/keys', { token: ownerKey, body: { name: `k-${randomBytes(3).toString('hex')}`, scopes, ...(agent ? { agent } : {}) } })
  if (r.status !== 201) throw new Error(`mint failed: ${r.status}`)
  return r.body.secret
}

export async function createIdentity(s: TestServer, token: string, name = `persona-${randomBytes(3).toString('hex')}`) {
  const r = await s.request('POST', '/v1/identities', { token, body: { name } })
  if (r.status !== 201) throw new Error(`identity create failed: ${r.status} ${r.body?.error?.message}`)
  return r.body as { id: string; name: string }
}

export async function createCredential(s: TestServer, token: string, identityId: string, body: { name: string; value: string; originAllowlist: string[] }) {
  const r = await s.request('POST', `/v1/identities/${identityId}/credentials`, { token, body })
  if (r.status !== 201) throw new Error(`credential create failed: ${r.status} ${r.body?.error?.message}`)
  return r.body as { id: string; name: string; placeholder: string; maskedValue: string; originAllowlist: string[] }
}

export function grantBody(principalAgentId: string, expiresAt: string, over: Record<string, unknown> = {}) {
  return {
    principalAgentId, role: 'assume', expiresAt, allowedOrigins: [], propagation: 'descendants',
    maxSessionDurationSecs: null, reason: 'test', ...over,
  }
}

export async function createGrant(s: TestServer, token: string, identityId: string, body: Record<string, unknown>) {
  const r = await s.request('POST', `/v1/identities/${identityId}/grants`, { token, body })
  if (r.status !== 201) throw new Error(`grant create failed: ${r.status} ${r.body?.error?.message}`)
  return r.body as { id: string; role: string; expiresAt: string }
}

/** Awaits p and returns the ApiError-like thing it rejected with (or 'resolved'); a resolved Buffer is wiped. */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    const v = await p
    if (Buffer.isBuffer(v)) v.fill(0)
    else if (v && typeof v === 'object' && Buffer.isBuffer((v as any).secret)) (v as any).secret.fill(0)
    return 'resolved'
  } catch (e) {
    return e
  }
}

/** The parts of an error a test may compare: never a message built from a value. */
export const errShape = (e: any): any => (e === 'resolved' ? 'resolved' : { status: e?.status, code: e?.code, message: e?.message, reason: e?.reason })
