// Credential requests: an agent asks for a credential it lacks and a person of the org
// enters it on a console page. A request holds what was asked, never a value; it is single
// use, bound to its org and identity, and expires. Answering seals the credential in the
// transaction that closes the request, so it answers at most once and a failed save
// leaves it open. Unknown, expired, answered and foreign requests are one 404.
import { EventEmitter } from 'node:events'
import type { Db, Queryable } from '../store/db.ts'
import { tx } from '../store/db.ts'
import type { Sealer } from '../kms/index.ts'
import type { OrgEvents } from '../events/port.ts'
import { newId } from '../../contracts/ids.ts'
import { errors } from '../../contracts/errors.ts'
import type { CredentialKind } from '../../contracts/operations/personas.ts'
import { recordAudit } from '../audit/audit.ts'
import { createCredential, type CredentialView } from './credentials.ts'
import { placeholderFor } from './validation.ts'

export interface CredentialRequest {
  id: string
  orgId: string
  identityId: string
  identityName: string
  credentialName: string
  originAllowlist: string[]
  reason: string
  requestedBy: string
  /** the asking agent's name, for the person to judge the request by */
  requestedByName: string | null
  createdAt: string
  expiresAt: string
  completedAt: string | null
  credentialId: string | null
}

export const credentialRequestNotFound = () => errors.notFound('credential request')

const toRequest = (r: any): CredentialRequest => ({
  id: r.id,
  orgId: r.org_id,
  identityId: r.identity_id,
  identityName: r.identity_name,
  credentialName: r.credential_name,
  originAllowlist: r.origin_allowlist,
  reason: r.reason,
  requestedBy: r.requested_by,
  requestedByName: r.agent_name ?? null,
  createdAt: new Date(r.created_at).toISOString(),
  expiresAt: new Date(r.expires_at).toISOString(),
  completedAt: r.completed_at ? new Date(r.completed_at).toISOString() : null,
  credentialId: r.credential_id ?? null,
})

const SELECT = `select r.*, i.name as identity_name, a.name as agent_name from credential_requests r
  join identities i on i.id = r.identity_id and i.org_id = r.org_id
  left join agents a on a.id = r.requested_by and a.org_id = r.org_id`

/** Answered requests in this process; another replica's answer is seen by waitAnswered's poll. */
const answered = new EventEmitter()
answered.setMaxListeners(0)

export async function createCredentialRequest(
  db: Queryable,
  input: { orgId: string; identityId: string; credentialName: string; originAllowlist: string[]; reason: string; requestedBy: string; ttlSecs: number; now: number },
): Promise<CredentialRequest> {
  // a request may not replace a credential: rotation is an authoring act, not an agent's
  const exists = await db.query('select 1 from credentials where org_id = $1 and identity_id = $2 and name = $3', [input.orgId, input.identityId, input.credentialName])
  if (exists.rowCount) throw errors.duplicateCredentialName()
  // the org's requests expired over a day ago go (the audit keeps each one); the table stays small
  await db.query(`delete from credential_requests where org_id = $1 and expires_at < $2`, [input.orgId, new Date(input.now - 86_400_000)])
  const id = newId('ncreq_')
  await db.query(
    `insert into credential_requests (id, org_id, identity_id, credential_name, origin_allowlist, reason, requested_by, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, input.orgId, input.identityId, input.credentialName, input.originAllowlist, input.reason, input.requestedBy, new Date(input.now), new Date(input.now + input.ttlSecs * 1000)],
  )
  return (await findRequest(db, input.orgId, id))!
}

/** Any request of the org by id, answered or not (null when unknown here). */
export async function findRequest(db: Queryable, orgId: string, id: string): Promise<CredentialRequest | null> {
  const r = await db.query(`${SELECT} where r.id = $1 and r.org_id = $2`, [id, orgId])
  return r.rows[0] ? toRequest(r.rows[0]) : null
}

/** A request a person may still answer: of this org, not answered, not expired; else the one 404. */
export async function requireOpenRequest(db: Queryable, orgId: string, id: string, now: number): Promise<CredentialRequest> {
  const req = await findRequest(db, orgId, id)
  if (!req || req.completedAt || Date.parse(req.expiresAt) <= now) throw credentialRequestNotFound()
  return req
}

/** What answering a request uses: the database, the sealer, and where the answer is reported (credential_request.answered). */
export interface AnswerDeps {
  db: Db
  sealer: Sealer
  events: OrgEvents
}

/**
 * A person answers: the credential is created (sealed as every credential is) and the
 * request closed, in one transaction. The value is only passed through to createCredential.
 */
export async function answerCredentialRequest(
  { db, sealer, events }: AnswerDeps,
  input: { orgId: string; requestId: string; userId: string; kind: CredentialKind; value: string; now: number },
): Promise<CredentialView> {
  let identityId = ''
  const cred = await tx(db, async (c) => {
    const r = await c.query(`${SELECT} where r.id = $1 and r.org_id = $2 for update of r`, [input.requestId, input.orgId])
    const req = r.rows[0] ? toRequest(r.rows[0]) : null
    if (!req || req.completedAt || Date.parse(req.expiresAt) <= input.now) throw credentialRequestNotFound()
    identityId = req.identityId
    const created = await createCredential(c, sealer, {
      orgId: input.orgId, identityId: req.identityId, name: req.credentialName, placeholder: placeholderFor(req.credentialName),
      kind: input.kind, value: input.value, originAllowlist: req.originAllowlist,
    })
    await c.query('update credential_requests set completed_at = $3, completed_by = $4, credential_id = $5 where id = $1 and org_id = $2',
      [req.id, input.orgId, new Date(input.now), input.userId, created.id])
    await recordAudit(c, {
      orgId: input.orgId, actor: input.userId, action: 'credential.create', targetType: 'credential', targetId: created.id,
      identityId: req.identityId, credentialId: created.id, credentialName: created.name, reason: 'credential_request',
    })
    return created
  })
  answered.emit(input.requestId)
  await events.emit({ orgId: input.orgId, type: 'credential_request.answered', data: { requestId: input.requestId, identityId, credentialName: cred.name, credentialId: cred.id } })
  return cred
}

/**
 * Resolves true once the request is answered, false when it expires or the signal aborts.
 * This process's answers arrive at once; another replica's within a poll (2 s).
 */
export async function waitAnswered(db: Queryable, orgId: string, id: string, deadline: number, signal?: AbortSignal, now = Date.now): Promise<boolean> {
  const answeredHere = () => findRequest(db, orgId, id).then((r) => !!r?.completedAt)
  if (await answeredHere()) return true
  return new Promise<boolean>((resolve) => {
    let done = false
    const finish = (v: boolean) => {
      if (done) return
      done = true
      clearInterval(poll)
      clearTimeout(timer)
      answered.off(id, onAnswered)
      signal?.removeEventListener('abort', onAbort)
      resolve(v)
    }
    const onAnswered = () => finish(true)
    const onAbort = () => finish(false)
    answered.on(id, onAnswered)
    signal?.addEventListener('abort', onAbort)
    const poll = setInterval(() => { answeredHere().then((v) => { if (v) finish(true) }, () => {}) }, 2000)
    const timer = setTimeout(() => finish(false), Math.max(0, deadline - now()))
    poll.unref()
    timer.unref()
  })
}
