// Nightjar's OAuth 2.1 authorization server for agent clients. app.ts registers the
// routes here, CORS (cors.ts) and the njo_ resolver (tokens.ts) with BearerAuth.
// One module per concern: discovery, registration (clients), authorize + consent,
// token, device, revoke; grants, codes and tokens are the stores behind them.
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import { registerDiscovery } from './discovery.ts'
import { registerRegistration } from './registration.ts'
import { registerAuthorize } from './authorize.ts'
import { registerToken } from './token.ts'
import { registerDevice } from './device.ts'
import { registerRevoke } from './revoke.ts'

export { corsOptions } from './cors.ts'
export { resolveAccessToken } from './tokens.ts'
export { BUILTIN_CLIENT_ID } from './constants.ts'

export function registerOAuth(app: FastifyInstance, services: Services) {
  registerDiscovery(app, services)
  registerRegistration(app, services)
  registerAuthorize(app, services)
  registerToken(app, services)
  registerDevice(app, services)
  registerRevoke(app, services)
  // the /ws/control join throttle shares the limit store; wired here because app.ts
  // builds the broker later (see limits/index.ts)
}
