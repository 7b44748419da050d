// POST /oauth/register — RFC 7591 dynamic client registration. On unless
// NIGHTJAR_OAUTH_DCR_ENABLED=false, in which case the route does not exist (404, the
// same body as any unknown route) and discovery drops registration_endpoint.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import { registerClient } from './clients.ts'
import { DCR_RATE_LIMIT, DCR_RATE_WINDOW_MS } from './constants.ts'
import { noStore, oauthErrorHandler, sendOAuthError } from './errors.ts'
import { oauthErrors } from '../../contracts/errors.ts'
import { addressKey, limitsFor, WindowLimit } from '../limits/index.ts'

export function registerRegistration(app: FastifyInstance, services: Services) {
  if (!services.config.oauthDcrEnabled) return
  // counted in the app's limit store with the other abuse limits (limits/)
  const limiter = new WindowLimit(limitsFor(services).store, 'register-address', { limit: DCR_RATE_LIMIT, windowMs: DCR_RATE_WINDOW_MS }, services.now)
  app.post('/oauth/register', {
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- fastify awaits the reply an errorHandler returns (lib/error-handler.js); the route option's type says void
    errorHandler: oauthErrorHandler('registration'),
    // counted before the body is read: malformed attempts cost the same as good ones
    onRequest: async (req, reply) => {
      const verdict = await limiter.hit(addressKey(req.ip))
      if (!verdict.allowed) {
        return sendOAuthError(reply, oauthErrors.registrationThrottled(verdict.retryAfterSecs))
      }
    },
  }, async (req, reply) => {
    const client = await registerClient(services.db, req.body, services.now())
    req.log.info({ clientId: client.client_id }, 'oauth client registered')
    return noStore(reply).code(201).send(client)
  })
}
