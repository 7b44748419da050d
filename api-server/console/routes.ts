// The web console: sign in, sign out, the keys page with its create-key form, the Local
// reach page (reach.ts) and the Sessions pages with the live view (live.ts).
// The form accepts prefill query parameters (new, name, scopes, agent); prefill
// submits nothing, and scopes the signed-in human cannot grant are disabled.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.ts'
import { ALL_SCOPES } from '../auth/scopes.ts'
import { checkPassword, normaliseEmail } from '../auth/login.ts'
import { listKeys, mintKey } from '../auth/keys.ts'
import { errors, isApiError, pageErrors, type ErrorReply } from '../../contracts/errors.ts'
import { recordAudit } from '../audit/audit.ts'
import { Html, html, page, theirs } from '../door-kit/html.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { keyCreate } from '../../contracts/operations/foundation.ts'
import { revealHidden } from '../../contracts/person-text.ts'
import { checkCsrf, consoleUser, csrfToken, endConsoleSession, startConsoleSession, type ConsoleUser } from '../door-kit/console-session.ts'
import { accountKey, addressKey, limitsFor, strictest } from '../limits/index.ts'
import { checkLoginCsrf, issueLoginCsrf, knownBrowser, rememberBrowser, safeNext, sameOriginRequest, sendTooMany } from '../door-kit/console-guard.ts'
import { registerReachPage } from './reach.ts'
import { guardConsoleRoutes, type ConsolePageKit } from './page-kit.ts'
import { registerLivePages } from './live.ts'
import { registerRecordingPages } from './recordings.ts'
import { registerVideoPages } from './videos.ts'
import { registerInspectorPage } from './inspector.ts'
import { registerSetupPages } from './setup-pages.ts'
import { registerSharePages } from './share.ts'
import { registerCredentialRequestPages } from './credential-requests.ts'

export { safeNext } from '../door-kit/console-guard.ts'

/** The page kit every console page shares: sending a page, its chrome, sign-in, the form token's refusal. */
function consoleKit(services: Services): ConsolePageKit {
  const base = services.config.consolePath
  const loginUrl = (next: string) => `${base}/login?next=${encodeURIComponent(next)}`
  const send = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
      .header('x-frame-options', 'DENY').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'").send(body)
  const chrome = (u: ConsoleUser) => ({ user: { email: u.email, orgName: u.orgName }, logoutAction: `${base}/logout`, csrf: csrfToken(services, u), consoleBase: base })
  const formTokenInvalid = (reply: FastifyReply, u?: ConsoleUser) => {
    const e = pageErrors.formTokenInvalid()
    return send(reply, e.status, page('Forbidden', html`<p class="error">${e.message}</p>`, u && chrome(u)))
  }
  const requireUser = async (req: FastifyRequest, reply: FastifyReply): Promise<ConsoleUser | null> => {
    const u = await consoleUser(services, req)
    if (!u) {
      reply.redirect(loginUrl(req.url), 303)
      return null
    }
    return u
  }
  return { send, chrome, requireUser, formTokenInvalid }
}

function loginPage(base: string, csrf: string, next: string, error?: string) {
  return page('Sign in', html`
    <div class="card" style="max-width:420px;margin:40px auto">
      <h1>Sign in to Nightjar</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form method="post" action="${base}/login">
        <input type="hidden" name="csrf" value="${csrf}">
        <input type="hidden" name="next" value="${next}">
        <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
        <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in</button>
      </form>
    </div>`)
}

/** Sign-in, sign-out and the console's root. */
function registerSignIn(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const { send, formTokenInvalid } = kit
  app.get(base, async (req, reply) => reply.redirect(`${base}/keys`))
  app.get(`${base}/login`, async (req, reply) => {
    const next = safeNext((req.query as Record<string, unknown>).next, `${base}/keys`)
    return send(reply, 200, loginPage(base, issueLoginCsrf(services, req, reply), next))
  })
  // Sign-in. Order: same-origin and CSRF checks (login CSRF), then the limits (the
  // client address, then the account — or the account on this known browser), then
  // exactly one password verification whether or not the account exists. Unknown
  // e-mails are counted and locked like known ones, so neither the answer, the lockout
  // nor the work done tells them apart.
  const limits = limitsFor(services)
  app.post(`${base}/login`, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>
    const next = safeNext(body.next, `${base}/keys`)
    const again = (e: Pick<ErrorReply, 'status' | 'message' | 'headers'>) => send(reply.headers(e.headers), e.status, loginPage(base, issueLoginCsrf(services, req, reply), next, e.message))
    if (!sameOriginRequest(services, req) || !checkLoginCsrf(services, req, body.csrf)) {
      return again(pageErrors.signInFormExpired())
    }
    // the REST door's first check on what the form looks up (next is made safe by safeNext instead)
    try {
      assertWellFormed({ email: body.email, password: body.password }, 'body')
    } catch (e) {
      if (!isApiError(e)) throw e
      return again(e)
    }
    const email = normaliseEmail(body.email)
    const password = typeof body.password === 'string' ? body.password : ''
    const address = addressKey(req.ip)
    const account = accountKey(email)
    const browser = await knownBrowser(services, req, account)
    const lockKey = browser ? `${account}:${browser}` : account
    const verdict = strictest(await limits.loginAddress.check(address), await limits.loginAccount.check(lockKey))
    if (!verdict.allowed) {
      return sendTooMany(req, reply, errors.signInThrottled(verdict.retryAfterSecs), () => again(pageErrors.signInThrottledPage(verdict.retryAfterSecs)))
    }
    const userId = await checkPassword(services.db, email, password)
    if (!userId) {
      await limits.loginAddress.hit(address)
      await limits.loginAccount.fail(lockKey)
      return again(pageErrors.signInFailed())
    }
    await limits.loginAccount.reset(lockKey)
    await rememberBrowser(services, reply, account, browser)
    await startConsoleSession(services, reply, userId)
    return reply.redirect(next, 303)
  })
  app.post(`${base}/logout`, async (req, reply) => {
    const u = await consoleUser(services, req)
    if (u && !checkCsrf(services, u, (req.body as Record<string, unknown> | undefined)?.csrf)) return formTokenInvalid(reply)
    await endConsoleSession(services, reply, u)
    return reply.redirect(`${base}/login`, 303)
  })
}

interface KeyPrefill {
  open: boolean
  name: string
  scopes: Set<string>
  agent: string
}

/** The keys page and its create-key form. */
function registerKeyPages(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const { send, chrome, requireUser, formTokenInvalid } = kit
  const keysPage = async (u: ConsoleUser, prefill: KeyPrefill, notice?: Html, error?: string) => {
    const keys = await listKeys(services.db, u.orgId)
    const agents = (await services.db.query('select id, name from agents where org_id = $1 order by is_default desc, name', [u.orgId])).rows
    const scopeBoxes = ALL_SCOPES.map((s) => {
      const allowed = u.scopes.has(s)
      return html`<label class="${allowed ? '' : 'disabled'}" title="${allowed ? '' : 'your role cannot grant this scope'}"><input type="checkbox" name="scopes" value="${s}" ${new Html(prefill.scopes.has(s) && allowed ? 'checked' : '')} ${new Html(allowed ? '' : 'disabled')}> <code>${s}</code></label>`
    })
    const rows = keys.map((k) => html`<tr><td>${theirs(k.name)}<div class="muted"><code>${k.id}</code></div></td><td>${k.scopes.map((s) => html`<code>${s}</code> `)}</td><td>${k.agentId ?? '—'}</td><td>${k.revokedAt ? 'revoked' : 'active'}</td></tr>`)
    return page('API keys', html`
      <h1>API keys</h1>
      ${notice ?? ''}
      <div class="card" id="create">
        <h2>Create a key</h2>
        ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
        <p class="muted">A key carries exactly the scopes ticked here, never more than your role (${u.role}) holds.</p>
        <form method="post" action="${base}/keys" ${new Html(prefill.open ? 'data-prefilled="true"' : '')}>
          <input type="hidden" name="csrf" value="${csrfToken(services, u)}">
          <label for="name">Name</label><input id="name" name="name" type="text" value="${prefill.name}" maxlength="80" required>
          <label>Scopes</label><div class="scopes">${scopeBoxes}</div>
          <label for="agent">Agent</label>
          <select id="agent" name="agent"><option value="">(org default agent)</option>${agents.map((a) => html`<option value="${a.id}" ${new Html(a.id === prefill.agent || a.name === prefill.agent ? 'selected' : '')}>${revealHidden(a.name)} (${a.id})</option>`)}</select>
          <button type="submit">Create key</button>
        </form>
      </div>
      <div class="card"><h2>Keys in ${u.orgName}</h2>
        <table><thead><tr><th>Name</th><th>Scopes</th><th>Agent</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>
      </div>`, chrome(u))
  }

  app.get(`${base}/keys`, async (req, reply) => {
    const u = await requireUser(req, reply)
    if (!u) return reply
    const q = req.query as Record<string, unknown>
    const str = (v: unknown) => (typeof v === 'string' ? v : '')
    const prefill = {
      open: 'new' in q,
      name: str(q.name).slice(0, 80),
      scopes: new Set(str(q.scopes).split(',').map((s) => s.trim()).filter(Boolean)),
      agent: str(q.agent),
    }
    return send(reply, 200, await keysPage(u, prefill))
  })

  app.post(`${base}/keys`, async (req, reply) => {
    const u = await requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!checkCsrf(services, u, body.csrf)) return formTokenInvalid(reply, u)
    const scopes = ([] as unknown[]).concat(body.scopes ?? []).filter((s): s is string => typeof s === 'string')
    const name = typeof body.name === 'string' ? body.name : ''
    const agent = typeof body.agent === 'string' && body.agent ? body.agent : null
    const prefill = { open: true, name, scopes: new Set(scopes), agent: agent ?? '' }
    try {
      // key_create's own rules, in the REST door's order and words (no NUL, then the fields' schema)
      const input = { name, scopes, ...(agent ? { agent } : {}) }
      assertWellFormed(input, 'body')
      parseInput(keyCreate.input, input)
      const key = await mintKey(services.db, { orgId: u.orgId, name, scopes, agentId: agent, createdByUserId: u.userId, minterScopes: u.scopes })
      await recordAudit(services.db, { orgId: u.orgId, actor: u.userId, action: 'key.create', targetType: 'key', targetId: key.id })
      const notice = html`<div class="card" role="status"><p class="ok">Key created: ${theirs(key.name)}</p>
        <p>Copy the secret now; it is shown only this once.</p><code class="secret" id="new-key-secret">${key.secret}</code></div>`
      return send(reply, 201, await keysPage(u, { open: false, name: '', scopes: new Set(), agent: '' }, notice))
    } catch (e) {
      if (!isApiError(e)) throw e
      return send(reply, e.status, await keysPage(u, prefill, undefined, e.message))
    }
  })
}

export function registerConsole(app: FastifyInstance, services: Services) {
  const base = services.config.consolePath
  const kit = consoleKit(services)
  // every console page and form from here on is held to REST's first check; sign-in checks its own fields
  guardConsoleRoutes(app, services, kit, [`${base}/login`])
  registerSignIn(app, services, kit)
  registerKeyPages(app, services, kit)
  // the Local reach page: reach grants for agents (api-server/console/reach.ts)
  registerReachPage(app, services, kit)
  // the Sessions pages: live view, take control, hand back (api-server/console/live.ts)
  registerLivePages(app, services, kit)
  // recorded sessions, replayed (api-server/console/recordings.ts)
  registerRecordingPages(app, services, kit)
  // session videos, played and downloaded (api-server/console/videos.ts)
  registerVideoPages(app, services, kit)
  // one session's calls, network, console and a person's take-over on one timeline beside its replay (api-server/console/inspector.ts)
  registerInspectorPage(app, services, kit)
  // setting up without curl: identities, credentials, grants, networks, governance (api-server/console/setup-*.ts)
  registerSetupPages(app, services, kit)
  registerSharePages(app, services, kit)
  // an agent's credential_request, answered by a person (api-server/console/credential-requests.ts)
  registerCredentialRequestPages(app, services, kit)
}

