// credential_request: the agent asks for a credential, a person enters
// it on the console page (api-server/console/credential-requests.ts). Over MCP, a client
// that declared URL elicitation is sent that page and the call returns once the
// credential is saved; every other caller gets the URL and watches credential_list.
import { implement } from '../types.ts'
import { credentialRequest } from '../../../contracts/operations/credential-requests.ts'
import { errors } from '../../../contracts/errors.ts'
import { recordAudit } from '../../audit/audit.ts'
import { findIdentity, identityNotFound } from '../../personas/identities.ts'
import { createCredentialRequest, waitAnswered } from '../../personas/credential-requests.ts'
import { elicitUntil } from '../elicit.ts'
import { actorOf } from './common.ts'

/** How long a credential request stays open (and a URL elicitation waits) unless configured. */
export const DEFAULT_ELICITATION_TTL_SECS = 600

/** The console page where a person answers a request. */
export function credentialRequestUrl(config: { baseUrl: string; consolePath: string }, requestId: string): string {
  return `${config.baseUrl}${config.consolePath}/credential-requests/${encodeURIComponent(requestId)}`
}

export const credentialRequestOperation = implement(credentialRequest, {
  handler: async (ctx, input) => {
    const { db, config } = ctx.services
    if (input.originAllowlist.length === 0) throw errors.emptyOriginAllowlist()
    const identity = await findIdentity(db, ctx.auth.orgId, input.identity)
    if (!identity) throw identityNotFound()
    const req = await createCredentialRequest(db, {
      orgId: ctx.auth.orgId, identityId: identity.id, credentialName: input.credentialName, originAllowlist: input.originAllowlist,
      reason: input.reason, requestedBy: actorOf(ctx), ttlSecs: config.elicitationTtlSecs ?? DEFAULT_ELICITATION_TTL_SECS, now: ctx.services.now(),
    })
    await recordAudit(db, {
      orgId: ctx.auth.orgId, actor: actorOf(ctx), action: 'credential.requested', targetType: 'credential_request', targetId: req.id,
      identityId: identity.id, credentialName: req.credentialName,
    })
    const url = credentialRequestUrl(config, req.id)
    // value-free, and without the agent's reason (its own words): the console page shows it
    await ctx.services.events.emit({
      orgId: ctx.auth.orgId, type: 'credential_request.created',
      data: { requestId: req.id, identityId: identity.id, credentialName: req.credentialName, originAllowlist: req.originAllowlist, url, expiresAt: req.expiresAt },
    })
    const result = { id: req.id, identityId: identity.id, credentialName: req.credentialName, url, expiresAt: req.expiresAt }
    const el = ctx.elicitation
    if (!el) return { ...result, status: 'pending' as const, elicited: false }
    const message = `A credential “${req.credentialName}” for the identity “${identity.name}” is needed: ${input.reason}`
    const outcome = await elicitUntil(el, { elicitationId: req.id, url, message },
      (signal) => waitAnswered(db, ctx.auth.orgId, req.id, Date.parse(req.expiresAt), signal, ctx.services.now))
    return { ...result, status: outcome === 'completed' ? 'completed' as const : outcome === 'expired' && Date.parse(req.expiresAt) > ctx.services.now() ? 'pending' as const : outcome, elicited: true }
  },
})

export const credentialRequestOperations = [credentialRequestOperation]
