// The device flow (RFC 8628): POST /oauth/device starts it; the verification page
// (GET/POST /oauth/authorize with user_code, or with no client_id at all) is where a
// signed-in human enters or confirms the code and approves or denies; the client
// polls /oauth/token (device-store.ts has the state machine).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.ts'
import { checkCsrf, consoleUser, type ConsoleUser } from '../door-kit/console-session.ts'
import { recordAudit } from '../audit/audit.ts'
import { requireClient } from './clients.ts'
import { clampScopes, DEFAULT_WORKSPACE, GRANT_DEVICE_CODE, WORKSPACE_PATTERN } from './constants.ts'
import { noStore, oauthErrorHandler, param, sendOAuthError } from './errors.ts'
import { errors, oauthErrors, pageErrors, type ErrorReply } from '../../contracts/errors.ts'
import { checkResource } from './resource.ts'
import { createDeviceAuthorization, decideDevice, findPendingDevice, formatUserCode, normaliseUserCode } from './device-store.ts'
import { upsertGrant } from './grants.ts'
import { deviceConsentPage, deviceEntryPage, outcomePage, sendPage } from './pages.ts'
import { addressKey, limitsFor, strictest } from '../limits/index.ts'
import { sendTooMany } from '../door-kit/console-guard.ts'
import { html, theirs } from '../door-kit/html.ts'

export function verificationUri(services: Services): string {
  return `${services.config.baseUrl}/oauth/authorize`
}

/** Is this /oauth/authorize request the device verification page rather than a code-flow request? */
export function isDeviceVerification(source: Record<string, unknown>): boolean {
  return source.user_code !== undefined || (source.client_id === undefined && source.response_type === undefined)
}

/** the device entry page again, showing a catalogue page error */
function entryError(services: Services, reply: FastifyReply, u: ConsoleUser, e: ErrorReply) {
  return sendPage(reply.headers(e.headers), e.status, deviceEntryPage(services, u, e.message))
}

/**
 * User codes have 40 bits and live 15 minutes, so guessing is throttled: wrong codes
 * are counted per signed-in account and per client address, and past the limit every
 * entry (right or wrong) is refused with 429 until the window ends, without a lookup.
 */
async function userCodeGate(services: Services, req: FastifyRequest, u: ConsoleUser) {
  const limits = limitsFor(services)
  const address = addressKey(req.ip)
  return {
    verdict: strictest(await limits.userCodeAccount.check(u.userId), await limits.userCodeAddress.check(address)),
    failed: async () => {
      await limits.userCodeAccount.hit(u.userId)
      await limits.userCodeAddress.hit(address)
    },
  }
}

function tooManyCodes(services: Services, req: FastifyRequest, reply: FastifyReply, u: ConsoleUser, retryAfterSecs: number) {
  return sendTooMany(req, reply, errors.userCodeThrottled(retryAfterSecs), () => entryError(services, reply, u, pageErrors.userCodeThrottledPage(retryAfterSecs)))
}

export async function deviceVerificationGet(services: Services, req: FastifyRequest, reply: FastifyReply) {
  const u = await consoleUser(services, req)
  if (!u) return reply.redirect(`${services.config.consolePath}/login?next=${encodeURIComponent(req.url)}`, 302)
  const raw = (req.query as Record<string, unknown>).user_code
  if (raw === undefined) return sendPage(reply, 200, deviceEntryPage(services, u))
  const gate = await userCodeGate(services, req, u)
  if (!gate.verdict.allowed) return tooManyCodes(services, req, reply, u, gate.verdict.retryAfterSecs)
  const userCode = normaliseUserCode(raw)
  const pending = userCode ? await findPendingDevice(services.db, userCode, services.now()) : null
  if (!pending) {
    await gate.failed()
    return entryError(services, reply, u, pageErrors.invalidUserCode())
  }
  return sendPage(reply, 200, deviceConsentPage(services, u, {
    userCode: pending.userCode, clientName: pending.clientName, builtin: pending.builtin,
    scopes: pending.scopes.filter((s) => u.scopes.has(s)), workspace: pending.workspace,
  }))
}

export async function deviceVerificationPost(services: Services, req: FastifyRequest, reply: FastifyReply) {
  const body = (req.body ?? {}) as Record<string, unknown>
  const userCode = normaliseUserCode(body.user_code)
  const u = await consoleUser(services, req)
  if (!u) return reply.redirect(`${services.config.consolePath}/login?next=${encodeURIComponent(`/oauth/authorize?user_code=${userCode ?? ''}`)}`, 302)
  if (!checkCsrf(services, u, body.csrf)) return entryError(services, reply, u, pageErrors.deviceFormExpired())
  const gate = await userCodeGate(services, req, u)
  if (!gate.verdict.allowed) return tooManyCodes(services, req, reply, u, gate.verdict.retryAfterSecs)
  const now = services.now()
  const pending = userCode ? await findPendingDevice(services.db, userCode, now) : null
  if (!pending || !userCode) {
    await gate.failed()
    return entryError(services, reply, u, pageErrors.invalidUserCode())
  }

  if (body.decision !== 'approve') {
    await decideDevice(services.db, userCode, { approve: false }, now)
    await recordAudit(services.db, { orgId: u.orgId, actor: u.userId, action: 'oauth.consent.deny', targetType: 'oauth_client', targetId: pending.clientId })
    return sendPage(reply, 200, outcomePage(services, u, 'Request denied', `The device that showed ${formatUserCode(userCode)} was not connected.`, false))
  }
  const scopes = pending.scopes.filter((s) => u.scopes.has(s))
  const grant = await upsertGrant(services.db, {
    orgId: u.orgId, userId: u.userId, userEmail: u.email, clientId: pending.clientId, clientName: pending.clientName, workspace: pending.workspace, scopes, now,
  })
  const ok = await decideDevice(services.db, userCode, { approve: true, grantId: grant.grantId }, now)
  if (!ok) return entryError(services, reply, u, pageErrors.invalidUserCode())
  return sendPage(reply, 200, outcomePage(services, u, 'Device connected', html`${theirs(pending.clientName)} is connected. Return to the application: it picks up its credentials by itself.`, true))
}

export function registerDevice(app: FastifyInstance, services: Services) {
  const limits = limitsFor(services)
  app.post('/oauth/device', {
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- fastify awaits the reply an errorHandler returns (lib/error-handler.js); the route option's type says void
    errorHandler: oauthErrorHandler(),
    // every request counts (each success is a database row), before the body is read
    onRequest: async (req, reply) => {
      const verdict = await limits.device.hit(addressKey(req.ip))
      if (!verdict.allowed) {
        return sendOAuthError(reply, oauthErrors.deviceThrottled(verdict.retryAfterSecs))
      }
    },
  }, async (req, reply) => {
    const body = req.body ?? {}
    const client = await requireClient(services.db, param(body, 'client_id'))
    if (!client.grantTypes.includes(GRANT_DEVICE_CODE)) throw oauthErrors.clientNoDeviceGrant()
    const workspace = param(body, 'workspace') ?? DEFAULT_WORKSPACE
    if (!WORKSPACE_PATTERN.test(workspace)) throw oauthErrors.oauthWorkspaceInvalid()
    const resource = checkResource(services.config, param(body, 'resource'))
    const d = await createDeviceAuthorization(services.db, { clientId: client.id, workspace, resource, scopes: clampScopes(param(body, 'scope')), now: services.now() })
    const uri = verificationUri(services)
    const shown = formatUserCode(d.userCode)
    return noStore(reply).send({
      device_code: d.deviceCode,
      user_code: shown,
      verification_uri: uri,
      verification_uri_complete: `${uri}?user_code=${shown}`,
      expires_in: d.expiresIn,
      interval: d.interval,
    })
  })
}
