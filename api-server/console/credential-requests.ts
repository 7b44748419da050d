// The page where a person answers an agent's credential_request: a signed-in person of the
// request's org with identities:write sees what was asked (the agent's reason isolated as
// the agent's words) and types the secret. The POST is checked like every console form,
// then like a REST body, and sealed in the transaction that closes the request; the value
// never goes back into a page, a redirect or a log line. Unknown and foreign are one 404.
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import { credentialCreate } from '../../contracts/operations/personas.ts'
import { CredentialRequestAnswer } from '../../contracts/operations/credential-requests.ts'
import { requireScopes } from '../auth/scopes.ts'
import { answerCredentialRequest, requireOpenRequest, type CredentialRequest } from '../personas/credential-requests.ts'
import { html, page, theirs } from '../door-kit/html.ts'
import { hostsView } from '../door-kit/host-view.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { checkCsrf, csrfToken, type ConsoleUser } from '../door-kit/console-session.ts'
import { sameOriginRequest } from '../door-kit/console-guard.ts'
import type { ConsolePageKit } from './page-kit.ts'

/** One text field of a form ('' when absent or sent twice: then the field's own rule refuses it). */
const formField = (body: Record<string, unknown>, name: string): string => (typeof body[name] === 'string' ? (body[name] as string) : '')

export function registerCredentialRequestPages(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const path = `${base}/credential-requests/:id`
  const idOf = (params: unknown) => String((params as Record<string, unknown>).id ?? '')
  const title = 'Credential requested'

  const refused = (reply: FastifyReply, u: ConsoleUser, e: unknown) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, page(title, html`<p class="error" role="alert">${e.message}</p>`, kit.chrome(u)))
  }

  const form = (u: ConsoleUser, r: CredentialRequest, error?: string) => page(title, html`
    <h1>An agent asks for a credential</h1>
    <div class="card" id="credential-request">
      <p>Identity <strong id="request-identity">${theirs(r.identityName)}</strong> · credential <code id="request-name">${theirs(r.credentialName)}</code></p>
      <p>Asked by the agent <strong id="request-agent">${theirs(r.requestedByName ?? r.requestedBy)}</strong> <code>${r.requestedBy}</code></p>
      <p>May be filled on ${r.originAllowlist.length === 1 ? 'this host' : html`these ${r.originAllowlist.length} hosts`} — the bold name above each is the site that receives the password:</p>
      ${hostsView(r.originAllowlist, 'request-hosts')}
      <p class="muted">The agent’s reason (its words, not Nightjar’s):</p>
      <blockquote id="request-reason" dir="auto">${theirs(r.reason)}</blockquote>
      <p class="muted">The secret is sealed when you save it and is never shown again — not here, not to the agent.
      Open this page only if you expected it; it expires at ${r.expiresAt}.</p>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form method="post" id="credential-request-form">
        <input type="hidden" name="csrf" value="${csrfToken(services, u)}">
        <label for="credential-kind">Kind</label>
        <select id="credential-kind" name="kind">
          <option value="password">Password — typed as saved</option>
          <option value="totp">One-time code (TOTP) — paste the otpauth:// URI or the base32 seed</option>
        </select>
        <label for="credential-value">Secret</label>
        <input id="credential-value" name="value" type="password" autocomplete="off" required>
        <button type="submit">Save credential</button>
      </form>
    </div>`, kit.chrome(u))

  app.get(path, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const r = await requireOpenRequest(services.db, u.orgId, idOf(req.params), services.now())
      requireScopes(u.scopes, credentialCreate.scopes)
      return kit.send(reply, 200, form(u, r))
    } catch (e) {
      return refused(reply, u, e)
    }
  })

  app.post(path, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!sameOriginRequest(services, req) || !checkCsrf(services, u, body.csrf)) return kit.formTokenInvalid(reply, u)
    const id = idOf(req.params)
    let r: CredentialRequest
    try {
      r = await requireOpenRequest(services.db, u.orgId, id, services.now())
      requireScopes(u.scopes, credentialCreate.scopes)
    } catch (e) {
      return refused(reply, u, e)
    }
    try {
      // the REST door's two checks, in its order and with its words (credential_create takes the same
      // kind and value): no NUL or lone surrogate, then the fields' own rules — so nothing reaches the database it cannot store
      const input = { kind: formField(body, 'kind'), value: formField(body, 'value') }
      assertWellFormed(input, 'body')
      const { kind, value } = parseInput(CredentialRequestAnswer, input)
      const cred = await answerCredentialRequest(services, { orgId: u.orgId, requestId: id, userId: u.userId, kind, value, now: services.now() })
      return kit.send(reply, 201, page(title, html`<div class="card" role="status" id="credential-saved">
        <p class="ok">Saved: <code>${theirs(cred.name)}</code> (${cred.kind === 'totp' ? 'TOTP ' : ''}${cred.maskedValue}) on ${theirs(r.identityName)}.</p>
        <p>The agent is told it exists; you can close this page.</p></div>`, kit.chrome(u)))
    } catch (e) {
      if (!isApiError(e)) throw e
      // the request is gone (answered meanwhile, expired): the one 404; else the form again, the secret field empty
      if (e.status === 404) return refused(reply, u, e)
      return kit.send(reply, e.status, form(u, r, e.message))
    }
  })
}
