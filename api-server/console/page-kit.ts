// What every console page and form shares: the page kit (send, chrome, sign-in, the form
// token's refusal), runOp — an operation run as the signed-in person with the REST door's
// checks in its order — and the guard that holds every console form to the REST door's
// first check, so no form reaches the database with text it cannot store.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { z } from 'zod'
import type { Services } from '../services.ts'
import type { AnyContract } from '../../contracts/operations/types.ts'
import type { Operation } from '../operations/types.ts'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { hasScopes } from '../auth/scopes.ts'
import { assertWellFormed, parseInput } from '../door-kit/validate.ts'
import { html, page } from '../door-kit/html.ts'
import { checkCsrf, consoleAuthContext, consoleUser, type ConsoleUser } from '../door-kit/console-session.ts'

export interface ConsolePageKit {
  send: (reply: FastifyReply, status: number, body: string) => FastifyReply
  chrome: (u: ConsoleUser) => { user: { email: string; orgName: string }; logoutAction: string; csrf: string; consoleBase?: string }
  requireUser: (req: FastifyRequest, reply: FastifyReply) => Promise<ConsoleUser | null>
  formTokenInvalid: (reply: FastifyReply, u?: ConsoleUser) => FastifyReply
}

/** Runs one operation as the signed-in person, exactly as the REST door would. */
export async function runOp<C extends AnyContract>(
  services: Services, req: FastifyRequest, u: ConsoleUser, op: Operation<C>, input: Record<string, unknown>,
): Promise<z.input<C['output']>> {
  if (!hasScopes(u.scopes, op.scopes)) throw errors.missingScope(op.scopes.filter((s: string) => !u.scopes.has(s)).join(' '))
  assertWellFormed(input, 'body')
  const parsed = parseInput(op.input, input)
  return op.handler({ auth: consoleAuthContext(u), services, log: req.log, via: 'rest', ip: req.ip }, parsed)
}

/**
 * Holds every console POST route registered after this call (except `exempt`, which check
 * their own fields) to the REST door's first check: a NUL or lone surrogate in a path
 * segment or any form field is refused with REST's 400 and words, on a page of its own,
 * before the form runs. Sign-in and the form token come first: without either the
 * route answers as it always does (the sign-in redirect, the form-token page).
 */
export function guardConsoleForms(app: FastifyInstance, services: Services, kit: ConsolePageKit, exempt: readonly string[]) {
  const base = services.config.consolePath
  const wellFormed = async (req: FastifyRequest, reply: FastifyReply) => {
    let refusal: ApiError
    try {
      assertWellFormed(req.params, 'path')
      assertWellFormed(req.body ?? {}, 'body')
      return
    } catch (e) {
      if (!isApiError(e)) throw e
      refusal = e
    }
    const u = await consoleUser(services, req)
    if (!u || !checkCsrf(services, u, (req.body as Record<string, unknown> | undefined)?.csrf)) return
    return kit.send(reply, refusal.status, page('Form refused', html`<div class="card" id="form-refused">
      <p class="error" role="alert">${refusal.message}</p>
      <p class="muted">Nothing was saved. Go back, correct the field and send the form again.</p></div>`, kit.chrome(u)))
  }
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat()
    if (!methods.includes('POST') || !route.url.startsWith(`${base}/`) || exempt.includes(route.url)) return
    route.preHandler = [...[route.preHandler ?? []].flat(), wellFormed]
  })
}
