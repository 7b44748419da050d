// What the console's setup pages share. A page never reimplements an operation: runOp calls
// the very operation the REST door calls, with the door's checks in the door's order, so
// every refusal is the API's own catalogue error (and a foreign id the same 404). Secrets
// travel only in POST bodies, which nothing logs; redirects carry ids, never a value.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.ts'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { hasScopes, scopeRefusal } from '../auth/scopes.ts'
import { Html, html, page } from '../door-kit/html.ts'
import { checkCsrf, csrfToken, type ConsoleUser } from '../door-kit/console-session.ts'
import type { ConsolePageKit } from './page-kit.ts'

export { runOp } from './page-kit.ts'

export interface SetupKit extends ConsolePageKit {
  services: Services
  /** the console's base path (/console) */
  base: string
}

/** May this person run the operation (its scopes are all theirs)? */
export const may = (u: ConsoleUser, op: { scopes: readonly string[] }) => hasScopes(u.scopes, op.scopes)

/** The form body as a record; checks the form token. Null (and the 403 page sent) when the token is wrong. */
export function formBody(kit: SetupKit, req: FastifyRequest, reply: FastifyReply, u: ConsoleUser): Record<string, unknown> | null {
  const body = (req.body ?? {}) as Record<string, unknown>
  if (typeof body !== 'object' || !checkCsrf(kit.services, u, body.csrf)) {
    kit.formTokenInvalid(reply, u)
    return null
  }
  return body
}

/** What a setup route's handler is given once the person is signed in (and, for a form, its token checked). */
export interface FormCall {
  req: FastifyRequest
  reply: FastifyReply
  u: ConsoleUser
  body: Record<string, unknown>
}

/** A page for a signed-in person (anyone else gets the sign-in page). */
export function pageRoute(app: FastifyInstance, kit: SetupKit, path: string, render: (req: FastifyRequest, reply: FastifyReply, u: ConsoleUser) => Promise<FastifyReply>) {
  app.get(path, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    return render(req, reply, u)
  })
}

/**
 * Every setup form's POST route, one way: sign-in, then the form token (403 page when
 * wrong), then `run` — which calls the operation and answers a path to redirect to (303,
 * the usual answer) or a reply of its own. A catalogue refusal (ApiError) anywhere in
 * `run` goes to `refused`, which sends the page back with the error and the form as typed
 * (never a secret); any other error propagates.
 */
export function formRoute(
  app: FastifyInstance, kit: SetupKit, path: string,
  run: (c: FormCall) => Promise<string | FastifyReply>,
  refused: (c: FormCall, e: ApiError) => Promise<FastifyReply> | FastifyReply,
) {
  app.post(path, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = formBody(kit, req, reply, u)
    if (!body) return reply
    const c = { req, reply, u, body }
    let out: string | FastifyReply
    try {
      out = await run(c)
    } catch (e) {
      if (!isApiError(e)) throw e
      return refused(c, e)
    }
    return typeof out === 'string' ? reply.redirect(out, 303) : out
  })
}

/** One text field of a form ('' when absent or repeated). */
export const field = (body: Record<string, unknown>, name: string): string => (typeof body[name] === 'string' ? (body[name] as string) : '')

/** A list typed into a textarea: one entry per line, or separated by commas or spaces. */
export const listField = (body: Record<string, unknown>, name: string): string[] =>
  field(body, name).split(/[\s,]+/).map((s) => s.trim()).filter(Boolean)

/** The id in a route's params. */
export const param = (req: FastifyRequest, name: string): string => String((req.params as Record<string, unknown>)[name] ?? '')

/** A fixed notice word from ?done=, as words; anything else shows nothing. */
export function notice(req: FastifyRequest, words: Record<string, string>): string | undefined {
  const done = (req.query as Record<string, unknown> | undefined)?.done
  return typeof done === 'string' && Object.hasOwn(words, done) ? words[done] : undefined
}

/** The hidden form-token input every setup form carries. */
export const csrfInput = (kit: SetupKit, u: ConsoleUser) => html`<input type="hidden" name="csrf" value="${csrfToken(kit.services, u)}">`

/** The links between the setup pages. */
export const setupNav = (kit: SetupKit) => html`<p class="muted" id="setup-nav">
  <a href="${kit.base}/identities">Identities</a> · <a href="${kit.base}/networks">Networks</a> · <a href="${kit.base}/governance">Governance</a> · <a href="${kit.base}/webhooks">Webhooks</a> ·
  <a href="${kit.base}/keys">API keys</a> · <a href="${kit.base}/reach">Local reach</a> · <a href="${kit.base}/sessions">Sessions</a></p>`

export const okNotice = (text: string | undefined) => (text ? html`<div class="card" role="status"><p class="ok">${text}</p></div>` : '')
export const errorLine = (text: string | undefined) => (text ? html`<p class="error" role="alert">${text}</p>` : '')

/** Why a form is disabled for this person: the API's own 403 words. */
export function roleNote(u: ConsoleUser, op: { scopes: readonly string[] }): Html | '' {
  const refusal = scopeRefusal(u.scopes, op.scopes)
  return refusal ? html`<p class="muted role-note">Your role (${u.role}) cannot do this: ${refusal.message}.</p>` : ''
}

export const disabledUnless = (u: ConsoleUser, op: { scopes: readonly string[] }) => new Html(may(u, op) ? '' : 'disabled')

/** One of the two forms of a rotate-and-delete card: the operation it runs and the words around its button. */
export interface ManageForm {
  op: { scopes: readonly string[] }
  note: string
  button: string
}

/**
 * The card that rotates a resource's secret and deletes the resource (a network's join token,
 * a webhook's signing secret): two forms posting to `<action>/rotate` and `<action>/delete`,
 * each disabled, with the API's 403 words, for a role that may not run its operation.
 */
export function rotateDeleteCard(kit: SetupKit, u: ConsoleUser, c: { id: string; action: string; heading: string; rotate: ManageForm; remove: ManageForm }): Html {
  return html`<div class="card" id="${c.id}-manage">
        <h2>${c.heading}</h2>
        <p class="muted">${c.rotate.note}</p>
        ${roleNote(u, c.rotate.op)}
        <form method="post" action="${c.action}/rotate" id="${c.id}-rotate">${csrfInput(kit, u)}
          <button type="submit" ${disabledUnless(u, c.rotate.op)}>${c.rotate.button}</button>
        </form>
        <h2 style="margin-top:20px">Delete</h2>
        <p class="muted">${c.remove.note}</p>
        <form method="post" action="${c.action}/delete" id="${c.id}-delete">${csrfInput(kit, u)}
          <button type="submit" style="background:#c92a2a" ${disabledUnless(u, c.remove.op)}>${c.remove.button}</button>
        </form>
      </div>`
}

/** A page holding only a refusal: the catalogue error's status and message (value-free, id-free, so byte-identical across orgs). */
export function refusalPage(kit: SetupKit, reply: FastifyReply, u: ConsoleUser, title: string, e: unknown, back: { href: string; text: string }) {
  if (!isApiError(e)) throw e
  return kit.send(reply.headers(e.headers), e.status, page(title, html`${setupNav(kit)}
    <div class="card"><p class="error" role="alert">${e.message}</p><p><a href="${back.href}">${back.text}</a></p></div>`, kit.chrome(u)))
}

/** A textarea style that fits the console's form look (the shared stylesheet has none). */
export const TEXTAREA_STYLE = 'width:100%;padding:8px 10px;border:1px solid #e2e5ee;border-radius:6px;font:13px ui-monospace,monospace'

/** Quotes a word for a POSIX shell when it needs it. */
export const shellWord = (s: string) => (/^[A-Za-z0-9._\/:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

// --- the identity page's form state (setup-identities.ts renders it; the credential and grant routes fill it) ---

export interface CredentialForm {
  error?: string
  /** the credential the error is about (a rotate form), else the create form */
  credentialId?: string
  name?: string
  hosts?: string
  /** the kind chosen on the create form (a TOTP credential stays TOTP after an error) */
  kind?: string
}

export interface GrantFormState {
  error?: string
  /** the grant the error is about (revoke, delete), else the create form */
  grantId?: string
  values?: Record<string, string>
}

/** Sends an identity's page (or its refusal) with the given status and the form state. */
export type ShowIdentity = (req: FastifyRequest, reply: FastifyReply, u: ConsoleUser, identityId: string, o: IdentityPageState) => Promise<FastifyReply>

export interface IdentityPageState {
  /** the catalogue error that sends the page back, if any */
  error?: ApiError
  credential?: CredentialForm
  grant?: GrantFormState
  /** words beside the identity's delete button */
  deleteError?: string
}
