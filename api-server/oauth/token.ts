// POST /oauth/token — form-encoded (RFC 6749 §3.2). Three grants: authorization_code
// (with PKCE), refresh_token (single-use rotation) and the device code (RFC 8628).
// Clients are public: client_id identifies, PKCE / possession of the device code or
// refresh token authenticates. Responses are never cacheable.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import { requireClient } from './clients.ts'
import { GRANT_AUTHORIZATION_CODE, GRANT_DEVICE_CODE, GRANT_REFRESH_TOKEN } from './constants.ts'
import { noStore, oauthErrorHandler, param, requiredParam } from './errors.ts'
import { oauthErrors } from '../../contracts/errors.ts'
import { checkResource } from './resource.ts'
import { redeemCode } from './codes.ts'
import { rotateRefreshToken, type TokenResponse } from './tokens.ts'
import { pollDevice } from './device-store.ts'
import { oauthTokens } from '../metrics/product.ts'

const GRANT_LABELS: Record<string, string> = {
  [GRANT_AUTHORIZATION_CODE]: 'authorization_code',
  [GRANT_REFRESH_TOKEN]: 'refresh_token',
  [GRANT_DEVICE_CODE]: 'device_code',
}

export function registerToken(app: FastifyInstance, services: Services) {
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- fastify awaits the reply an errorHandler returns (lib/error-handler.js); the route option's type says void
  app.post('/oauth/token', { errorHandler: oauthErrorHandler() }, async (req, reply) => {
    // counted by grant type (one of three, or other) and outcome; a device poll that is told
    // authorization_pending counts as refused, as the client is
    const grant = GRANT_LABELS[param(req.body ?? {}, 'grant_type') ?? ''] ?? 'other'
    try {
      const tokens = await issue(req.body ?? {})
      oauthTokens.inc({ grant_type: grant, outcome: 'issued' })
      return noStore(reply).send(tokens)
    } catch (e) {
      oauthTokens.inc({ grant_type: grant, outcome: 'refused' })
      throw e
    }
  })

  async function issue(body: unknown): Promise<TokenResponse> {
    const grantType = param(body, 'grant_type')
    if (!grantType) throw oauthErrors.oauthParamMissing('grant_type')
    if (grantType !== GRANT_AUTHORIZATION_CODE && grantType !== GRANT_REFRESH_TOKEN && grantType !== GRANT_DEVICE_CODE) {
      throw oauthErrors.unsupportedGrantType()
    }
    const client = await requireClient(services.db, param(body, 'client_id'))
    const now = services.now()
    let tokens: TokenResponse
    if (grantType === GRANT_AUTHORIZATION_CODE) {
      tokens = await redeemCode(services.db, {
        code: requiredParam(body, 'code'),
        codeVerifier: requiredParam(body, 'code_verifier'),
        redirectUri: param(body, 'redirect_uri'),
        clientId: client.id,
        resource: checkResource(services.config, param(body, 'resource')),
        now,
      })
    } else if (grantType === GRANT_REFRESH_TOKEN) {
      tokens = await rotateRefreshToken(services.db, {
        refreshToken: requiredParam(body, 'refresh_token'),
        clientId: client.id,
        resource: checkResource(services.config, param(body, 'resource')),
        now,
      })
    } else {
      tokens = await pollDevice(services.db, { deviceCode: requiredParam(body, 'device_code'), clientId: client.id, now })
    }
    return tokens
  }
}
