// What every console page and form shares: the page kit (send, chrome, sign-in, the form
// token's refusal), runOp — an operation run as the signed-in person with the REST door's
// checks in its order — and the guard that holds every console route to the REST door's
// first check, so no page or form reaches the database with text it cannot store.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { z } from 'zod'
import type { Services } from '../services.ts'
import type { AnyContract } from '../../contracts/operations/types.ts'
import type { Operation } from '../operations/types.ts'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { requireScopes } from '../auth/scopes.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { html, page } from '../door-kit/html.ts'
import { checkCsrf, consoleAuthContext, consoleUser, type ConsoleUser } from '../door-kit/console-session.ts'

export interface ConsolePageKit {
  send: (reply: FastifyReply, status: number, body: string) => FastifyReply
  chrome: (u: ConsoleUser) => { user: { email: string; orgName: string }; logoutAction: string; csrf: string; consoleBase?: string }
  requireUser: (req: FastifyRequest, reply: FastifyReply) => Promise<ConsoleUser | null>
  formTokenInvalid: (reply: FastifyReply, u?: ConsoleUser) => FastifyReply
}

/**
 * A console page's own fetch (a journal refresh, a timeline, a file) refused: the API's JSON
 * error with its headers, never cached. Anything not an ApiError is a bug and goes up.
 */
export function sendRefusalJson(reply: FastifyReply, e: unknown): FastifyReply {
  if (!isApiError(e)) throw e
  return reply.code(e.status).headers(e.headers ?? {}).header('cache-control', 'no-store').send(e.toBody())
}

/** Runs one operation as the signed-in person, exactly as the REST door would. */
export async function runOp<C extends AnyContract>(
  services: Services, req: FastifyRequest, u: ConsoleUser, op: Operation<C>, input: Record<string, unknown>,
): Promise<z.input<C['output']>> {
  requireScopes(u.scopes, op.scopes)
  assertWellFormed(input, 'body')
  const parsed = parseInput(op.input, input)
  return op.handler({ auth: consoleAuthContext(u), services, log: req.log, via: 'rest', ip: req.ip }, parsed)
}

/** The first check's refusal, or null: a NUL or lone surrogate in `value` (REST's 400 and words). */
function malformed(value: unknown, root: string): ApiError | null {
  try {
    assertWellFormed(value, root)
    return null
  } catch (e) {
    if (!isApiError(e)) throw e
    return e
  }
}

/**
 * Holds every console route registered after this call (except `exempt`, which check their
 * own input) to the REST door's first check: a NUL or lone surrogate in a path segment or,
 * for a form, in any field is refused with REST's 400 and words before the route runs. The
 * route's own gates come first: without a sign-in (or, for a form, the right form token)
 * it answers as it always does (the sign-in redirect, the form-token page).
 */
export function guardConsoleRoutes(app: FastifyInstance, services: Services, kit: ConsolePageKit, exempt: readonly string[]) {
  const base = services.config.consolePath
  const card = (u: ConsoleUser, e: ApiError, note: string) => page('Refused', html`<div class="card" id="refused">
      <p class="error" role="alert">${e.message}</p><p class="muted">${note}</p></div>`, kit.chrome(u))
  const form = async (req: FastifyRequest, reply: FastifyReply) => {
    const e = malformed(req.params, 'path') ?? malformed(req.body ?? {}, 'body')
    if (!e) return
    const u = await consoleUser(services, req)
    if (!u || !checkCsrf(services, u, (req.body as Record<string, unknown> | undefined)?.csrf)) return
    return kit.send(reply, e.status, card(u, e, 'Nothing was saved. Go back, correct the field and send the form again.'))
  }
  const read = async (req: FastifyRequest, reply: FastifyReply) => {
    const e = malformed(req.params, 'path')
    if (!e) return
    const u = await consoleUser(services, req)
    if (!u) return
    // a page's own fetches (the journal, a recording's events) read the API's JSON body
    if (!(req.headers.accept ?? '').includes('text/html')) return sendRefusalJson(reply, e)
    return kit.send(reply, e.status, card(u, e, 'Check the address.'))
  }
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith(`${base}/`) || exempt.includes(route.url)) return
    const methods = [route.method].flat()
    const check = methods.includes('POST') ? form : route.url.includes(':') && (methods.includes('GET') || methods.includes('HEAD')) ? read : null
    if (check) route.preHandler = [...[route.preHandler ?? []].flat(), check]
  })
}
