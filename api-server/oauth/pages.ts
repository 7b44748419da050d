// The HTML the human sees during an OAuth login: consent (authorization code and
// device flows), the device-code entry form, outcomes and errors. Server-rendered
// with the console layout; every value goes through the escaping html`` tag.
import type { FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { type Html, html, page, theirs } from '../door-kit/html.ts'
import { hostView } from '../door-kit/host-view.ts'
import { csrfToken, type ConsoleUser } from '../door-kit/console-session.ts'
import { formatUserCode } from './device-store.ts'
import type { RefusedScope } from './consent-scopes.ts'

const SCOPE_TEXT: Record<string, string> = {
  'sessions:write': 'open and end hosted browser sessions',
  'sessions:drive': 'drive those sessions: navigate, read pages, click and type, fill a persona credential by name (never seeing it)',
  'identities:read': 'list the personas it may assume (names and slots, never secrets)',
}

/**
 * Sends a page that must never be cached or framed (clickjacking a consent button).
 * `formTarget` is the one extra origin a form on the page may end up at: Chromium
 * applies CSP form-action to the redirect after the POST, and consent redirects to
 * the client's loopback URI. Referrer-Policy is same-origin, not no-referrer: no URL of
 * ours reaches another site either way, but under no-referrer a browser sends
 * `Origin: null` on the form POST, which the consent's same-origin check must refuse.
 */
export function sendPage(reply: FastifyReply, status: number, body: string, formTarget?: string): FastifyReply {
  const formAction = ["'self'", formTarget].filter(Boolean).join(' ')
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY').header('referrer-policy', 'same-origin')
    .header('content-security-policy', `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'`)
    .send(body)
}

function chrome(services: Services, u?: ConsoleUser) {
  return u ? { user: { email: u.email, orgName: u.orgName }, logoutAction: `${services.config.consolePath}/logout`, csrf: csrfToken(services, u) } : {}
}

export function errorPage(services: Services, message: string, u?: ConsoleUser): string {
  return page('Authorization error', html`
    <div class="card" style="max-width:560px;margin:40px auto">
      <h1>This sign-in request cannot continue</h1>
      <p class="error" role="alert" id="oauth-error">${message}</p>
      <p class="muted">Nothing was shared with the application. Start the connection again from the application.</p>
    </div>`, chrome(services, u))
}

export function outcomePage(services: Services, u: ConsoleUser, title: string, message: string | Html, ok: boolean): string {
  return page(title, html`
    <div class="card" style="max-width:560px;margin:40px auto">
      <h1>${title}</h1>
      <p class="${ok ? 'ok' : 'error'}" role="status" id="oauth-outcome">${message}</p>
      <p class="muted">You can close this window.</p>
    </div>`, chrome(services, u))
}

function scopeList(scopes: string[]): Html {
  return html`<ul id="scopes">${scopes.map((s) => html`<li><code>${s}</code> — ${SCOPE_TEXT[s] ?? ''}</li>`)}</ul>`
}

// Everything another party chose (the client's name, its metadata host) and the person's
// own org and e-mail are isolated (<bdi>, via theirs()): a name can never reorder the
// sentence around it, so the warning after it always reads as written.
function clientLine(name: string, builtin: boolean, metadataHost?: string): Html {
  if (builtin) return html`<strong id="client-name">${theirs(name)}</strong>`
  // a client metadata document: the host that serves it is the one thing known about the client
  if (metadataHost) return html`<strong id="client-name">${theirs(name)}</strong> <span class="muted" id="client-warning">(its metadata is published by <span id="client-host">${hostView(metadataHost)}</span>; the name is that site's claim)</span>`
  return html`<strong id="client-name">${theirs(name)}</strong> <span class="muted" id="client-warning">(a self-registered application; its name is not verified)</span>`
}

/** What was asked for and will not be granted, with why: a client asking again gets the same. */
function notGranted(refused: readonly RefusedScope[], unknown: number): Html | '' {
  if (!refused.length && !unknown) return ''
  const unknownLine = unknown ? html`<li>${String(unknown)} requested name${unknown === 1 ? ' is' : 's are'} not a Nightjar scope</li>` : ''
  return html`
      <div id="not-granted">
        <p>It also asked for the following, which will not be granted whatever you choose:</p>
        <ul>${refused.map((r) => html`<li><code>${r.scope}</code> — ${r.why}</li>`)}${unknownLine}</ul>
      </div>`
}

const buttons = html`
  <div style="display:flex;gap:12px">
    <button type="submit" name="decision" value="approve" id="approve">Approve</button>
    <button type="submit" name="decision" value="deny" id="deny" style="background:#868e96">Deny</button>
  </div>`

export interface ConsentView {
  clientName: string
  builtin: boolean
  /** the host of the client's metadata document, when its client_id is that document's URL */
  metadataHost?: string
  scopes: string[]
  /** asked for, not granted (with why), and how many asked-for names are no scope */
  refused: readonly RefusedScope[]
  unknownScopes: number
  workspace: string
  /** where the browser goes next (shown so the human can spot a surprise) */
  returnTo: string
  /** every field of the validated authorization request, posted back as-is */
  hidden: Record<string, string>
}

export function consentPage(services: Services, u: ConsoleUser, v: ConsentView): string {
  const hidden = Object.entries(v.hidden).map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`)
  return page('Authorize application', html`
    <div class="card" style="max-width:560px;margin:40px auto">
      <h1>Connect an agent to Nightjar</h1>
      <p>${clientLine(v.clientName, v.builtin, v.metadataHost)} asks to act as an agent of <strong id="org-name">${theirs(u.orgName)}</strong> for ${theirs(u.email)}, workspace <code id="workspace">${theirs(v.workspace)}</code>. It will be allowed to:</p>
      ${scopeList(v.scopes)}
      ${notGranted(v.refused, v.unknownScopes)}
      <p class="muted">It cannot create personas or credentials, mint keys, change the org or manage networks. You can revoke access at any time. After you choose you return to <code>${v.returnTo}</code>.</p>
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="csrf" value="${csrfToken(services, u)}">
        ${hidden}
        ${buttons}
      </form>
    </div>`, chrome(services, u))
}

export function deviceEntryPage(services: Services, u: ConsoleUser, error?: string): string {
  return page('Connect a device', html`
    <div class="card" style="max-width:480px;margin:40px auto">
      <h1>Connect a device</h1>
      <p>Enter the code shown by the application (for example in your terminal).</p>
      ${error ? html`<p class="error" role="alert" id="oauth-error">${error}</p>` : ''}
      <form method="get" action="/oauth/authorize">
        <label for="user_code">Code</label>
        <input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" maxlength="12" required>
        <button type="submit" id="continue">Continue</button>
      </form>
    </div>`, chrome(services, u))
}

export function deviceConsentPage(services: Services, u: ConsoleUser, v: { userCode: string; clientName: string; builtin: boolean; scopes: string[]; workspace: string }): string {
  return page('Authorize device', html`
    <div class="card" style="max-width:560px;margin:40px auto">
      <h1>Connect a device to Nightjar</h1>
      <p>Check that the application shows this code: <code id="user-code" style="font-size:18px">${formatUserCode(v.userCode)}</code></p>
      <p>${clientLine(v.clientName, v.builtin)} asks to act as an agent of <strong id="org-name">${theirs(u.orgName)}</strong> for ${theirs(u.email)}, workspace <code id="workspace">${theirs(v.workspace)}</code>. It will be allowed to:</p>
      ${scopeList(v.scopes)}
      <p class="muted">It cannot create personas or credentials, mint keys, change the org or manage networks. If you did not start this, choose Deny.</p>
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="csrf" value="${csrfToken(services, u)}">
        <input type="hidden" name="user_code" value="${v.userCode}">
        ${buttons}
      </form>
    </div>`, chrome(services, u))
}

/** For the out-of-band redirect URI: the human copies the code into the application. */
export function oobCodePage(services: Services, u: ConsoleUser, code: string): string {
  return page('Authorization code', html`
    <div class="card" style="max-width:560px;margin:40px auto">
      <h1>Copy this code into the application</h1>
      <code class="secret" id="authorization-code">${code}</code>
      <p class="muted">It works once, within a minute.</p>
    </div>`, chrome(services, u))
}
