// GET/POST /oauth/authorize — the authorization code flow with PKCE (S256) and the
// consent page. client_id and redirect_uri are validated before anything could be
// redirected: until both check out, every problem is an HTML error page, so this
// endpoint can never be turned into an open redirector. With user_code (or with no
// client_id at all) the same path is the device verification page (device.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.ts'
import { consoleUser, checkCsrf, type ConsoleUser } from '../door-kit/console-session.ts'
import { sameOriginRequest } from '../door-kit/console-guard.ts'
import { recordAudit } from '../audit/audit.ts'
import { findClient, redirectUriMatches, type OAuthClient } from './clients.ts'
import { DEFAULT_WORKSPACE, GRANT_AUTHORIZATION_CODE, OOB_REDIRECT_URI, WORKSPACE_PATTERN } from './constants.ts'
import { consentScopes, grantedScopes } from './consent-scopes.ts'
import { isOAuthError, type OAuthError, param } from './errors.ts'
import { oauthErrors, pageErrors, type ErrorReply } from '../../contracts/errors.ts'
import { CHALLENGE_PATTERN } from './pkce.ts'
import { checkResource, issuer } from './resource.ts'
import { createCode } from './codes.ts'
import { upsertGrant } from './grants.ts'
import { consentPage, errorPage, oobCodePage, sendPage } from './pages.ts'
import { cimdFetcher, isMetadataUrl, MetadataRefused, type CimdFetcher } from './cimd.ts'
import { deviceVerificationGet, deviceVerificationPost, isDeviceVerification } from './device.ts'

/** A validated authorization request. */
interface AuthzRequest {
  client: OAuthClient
  redirectUri: string
  state?: string
  codeChallenge: string
  resource: string
  workspace: string
}

type Parsed =
  | { kind: 'ok'; req: AuthzRequest }
  /** client or redirect_uri is not trustworthy: show a page, redirect nowhere */
  | { kind: 'page'; error: ErrorReply }
  /** the redirect_uri is trusted: report the error to the client there */
  | { kind: 'redirect'; client: OAuthClient; redirectUri: string; state?: string; error: OAuthError }

async function parseRequest(services: Services, cimd: CimdFetcher, source: unknown): Promise<Parsed> {
  let client: OAuthClient | null
  let redirectUri: string | undefined
  try {
    const clientId = param(source, 'client_id')
    if (!clientId) return { kind: 'page', error: pageErrors.authorizeNoClientId() }
    if (isMetadataUrl(clientId)) {
      // a client metadata document: fetched (fenced, cached) and validated; any problem is a page
      try {
        client = await cimd.resolve(clientId)
      } catch (e) {
        if (e instanceof MetadataRefused) return { kind: 'page', error: e.reply }
        throw e
      }
    } else client = await findClient(services.db, clientId)
    if (!client) return { kind: 'page', error: pageErrors.authorizeUnknownClient() }
    redirectUri = param(source, 'redirect_uri')
    if (!redirectUri) return { kind: 'page', error: pageErrors.authorizeNoRedirectUri() }
    if (!redirectUriMatches(client, redirectUri)) return { kind: 'page', error: pageErrors.authorizeRedirectMismatch() }
  } catch (e) {
    if (isOAuthError(e)) return { kind: 'page', error: pageErrors.authorizeRequestInvalid(e.message) }
    throw e
  }
  let state: string | undefined
  try {
    state = param(source, 'state')
    if (state !== undefined && state.length > 1024) {
      state = undefined
      throw oauthErrors.oauthStateTooLong()
    }
    if (param(source, 'response_type') !== 'code') throw oauthErrors.oauthResponseType()
    if (!client.grantTypes.includes(GRANT_AUTHORIZATION_CODE)) throw oauthErrors.clientNoCodeGrant()
    const codeChallenge = param(source, 'code_challenge')
    if (!codeChallenge || !CHALLENGE_PATTERN.test(codeChallenge)) throw oauthErrors.oauthPkceRequired()
    if (param(source, 'code_challenge_method') !== 'S256') throw oauthErrors.oauthPkceMethod()
    const resource = checkResource(services.config, param(source, 'resource'))
    const workspace = param(source, 'workspace') ?? DEFAULT_WORKSPACE
    if (!WORKSPACE_PATTERN.test(workspace)) throw oauthErrors.oauthWorkspaceInvalid()
    return { kind: 'ok', req: { client, redirectUri, state, codeChallenge, resource, workspace } }
  } catch (e) {
    if (isOAuthError(e)) return { kind: 'redirect', client, redirectUri, state, error: e }
    throw e
  }
}

/** Appends the response parameters to the client's own redirect URI (RFC 6749 §4.1.2, RFC 9207 iss). */
function redirectTo(services: Services, redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri)
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v)
  u.searchParams.set('iss', issuer(services.config))
  return u.toString()
}

/** An error shown on the authorization page (no redirect is safe, or the client is out-of-band). */
function showError(services: Services, reply: FastifyReply, e: ErrorReply, u?: ConsoleUser) {
  return sendPage(reply.headers(e.headers), e.status, errorPage(services, e.message, u))
}

function sendRedirectError(services: Services, reply: FastifyReply, p: Extract<Parsed, { kind: 'redirect' }>, u?: ConsoleUser) {
  if (p.redirectUri === OOB_REDIRECT_URI) return showError(services, reply, pageErrors.authorizeRequestInvalid(p.error.message), u)
  return reply.redirect(redirectTo(services, p.redirectUri, { error: p.error.error, error_description: p.error.message, state: p.state }), 302)
}

function loginRedirect(services: Services, reply: FastifyReply, back: string) {
  return reply.redirect(`${services.config.consolePath}/login?next=${encodeURIComponent(back)}`, 302)
}

/** The fields the consent form posts back; the POST validates them all again. */
function hiddenFields(r: AuthzRequest): Record<string, string> {
  const h: Record<string, string> = {
    response_type: 'code', client_id: r.client.id, redirect_uri: r.redirectUri, code_challenge: r.codeChallenge,
    code_challenge_method: 'S256', resource: r.resource, workspace: r.workspace,
  }
  if (r.state !== undefined) h.state = r.state
  return h
}

const originOf = (uri: string) => (uri === OOB_REDIRECT_URI ? undefined : new URL(uri).origin)

export function registerAuthorize(app: FastifyInstance, services: Services) {
  const cimd = cimdFetcher(services)
  app.get('/oauth/authorize', async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Record<string, unknown>
    if (isDeviceVerification(q)) return deviceVerificationGet(services, req, reply)
    const p = await parseRequest(services, cimd, q)
    if (p.kind === 'page') return showError(services, reply, p.error)
    if (p.kind === 'redirect') return sendRedirectError(services, reply, p)
    const u = await consoleUser(services, req)
    if (!u) return loginRedirect(services, reply, req.url)
    const asked = consentScopes(q.scope, u.scopes, u.role)
    return sendPage(reply, 200, consentPage(services, u, {
      clientName: p.req.client.name, builtin: p.req.client.builtin, metadataHost: p.req.client.metadataHost, workspace: p.req.workspace,
      scopes: asked.granted, refused: asked.refused, unknownScopes: asked.unknown,
      returnTo: p.req.redirectUri === OOB_REDIRECT_URI ? 'this page (the code is shown here)' : originOf(p.req.redirectUri)!, hidden: hiddenFields(p.req),
    }), originOf(p.req.redirectUri))
  })

  app.post('/oauth/authorize', async (req: FastifyRequest, reply: FastifyReply) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    // A consent (or device approval) posted from another site's page is refused before
    // anything is read, as console sign-in refuses it: the form token alone would be the
    // only defence if a page of ours ever leaked it.
    if (!sameOriginRequest(services, req)) return showError(services, reply, pageErrors.authorizeFormExpired())
    if (isDeviceVerification(body)) return deviceVerificationPost(services, req, reply)
    const p = await parseRequest(services, cimd, body)
    if (p.kind === 'page') return showError(services, reply, p.error)
    if (p.kind === 'redirect') return sendRedirectError(services, reply, p)
    const r = p.req
    const u = await consoleUser(services, req)
    // signed out between showing and posting the form: sign in, then see the consent again
    if (!u) return loginRedirect(services, reply, `/oauth/authorize?${new URLSearchParams(hiddenFields(r))}`)
    if (!checkCsrf(services, u, body.csrf)) return showError(services, reply, pageErrors.authorizeFormExpired(), u)

    if (body.decision !== 'approve') {
      await recordAudit(services.db, { orgId: u.orgId, actor: u.userId, action: 'oauth.consent.deny', targetType: 'oauth_client', targetId: r.client.id })
      return sendRedirectError(services, reply, { kind: 'redirect', client: r.client, redirectUri: r.redirectUri, state: r.state, error: oauthErrors.consentDenied() }, u)
    }
    const now = services.now()
    const scopes = grantedScopes(u.scopes)
    const grant = await upsertGrant(services.db, {
      orgId: u.orgId, userId: u.userId, userEmail: u.email, clientId: r.client.id, clientName: r.client.name, workspace: r.workspace, scopes, now,
    })
    const code = await createCode(services.db, {
      grantId: grant.grantId, clientId: r.client.id, redirectUri: r.redirectUri, codeChallenge: r.codeChallenge, resource: r.resource, scopes, now,
    })
    if (r.redirectUri === OOB_REDIRECT_URI) return sendPage(reply, 200, oobCodePage(services, u, code))
    return reply.redirect(redirectTo(services, r.redirectUri, { code, state: r.state }), 302)
  })
}
