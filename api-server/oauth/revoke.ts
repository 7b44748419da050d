// POST /oauth/revoke (RFC 7009) — token=<njo_… or njr_…>. Always 200 with an empty
// body, whatever the token is (unknown, already revoked, not ours): no existence
// oracle. A known token soft-revokes its whole grant, so every token derived from
// it stops at once — the access token a client forgot about included.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import { noStore, sendOAuthError } from './errors.ts'
import { oauthErrors } from '../../contracts/errors.ts'
import { grantOfToken } from './tokens.ts'
import { revokeGrantById } from './grants.ts'

export function registerRevoke(app: FastifyInstance, services: Services) {
  app.post('/oauth/revoke', {
    // an unreadable body is just another token we do not know: 200. A failure of ours
    // is not hidden behind a 200, since the caller would believe the token is dead.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- fastify awaits the reply an errorHandler returns (lib/error-handler.js); the route option's type says void
    errorHandler: (err, req, reply) => {
      const status = (err as { statusCode?: number }).statusCode
      if (status && status >= 400 && status < 500) return noStore(reply).code(200).send()
      req.log.error({ err }, 'oauth revocation failed')
      return sendOAuthError(reply, oauthErrors.revocationFailed())
    },
  }, async (req, reply) => {
    const token = (req.body as Record<string, unknown> | undefined)?.token
    // routed by prefix like Bearer credentials: only OAuth tokens are looked up here
    if (typeof token === 'string' && /^nj[or]_[A-Za-z0-9]{1,100}$/.test(token)) {
      const g = await grantOfToken(services.db, token)
      if (g) await revokeGrantById(services.db, g.grantId, 'oauth:revoke-endpoint', services.now())
    }
    return noStore(reply).code(200).send()
  })
}
