// The app factory: builds the Fastify instance with every plugin, without
// listening. `cli/start.ts` listens; tests call build() with their own database.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import pino from 'pino'
import type { Writable } from 'node:stream'
import type { Config } from './config.ts'
import type { Db } from './store/db.ts'
import type { Services } from './services.ts'
import { BearerAuth } from './auth/bearer.ts'
import { resolveApiKey } from './auth/keys.ts'
import { operations as defaultOperations } from './operations/registry.ts'
import type { AnyOperation } from './operations/types.ts'
import { registerErrorHandling } from './http/errors.ts'
import { registerHealth } from './http/health.ts'
import { registerOperationRoutes } from './http/operations.ts'
import { registerOpenApi } from './http/openapi.ts'
import { registerMcp } from './mcp/server.ts'
import { registerConsole } from './console/routes.ts'

export interface BuildOptions {
  config: Config
  db: Db
  cookieKey: Uint8Array
  /** where logs go (tests capture them to prove no secret is ever logged) */
  logStream?: Writable
  operations?: readonly AnyOperation[]
  /** a controllable clock for tests (token expiry, device-flow intervals, leases) */
  now?: () => number
}

export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
]

export async function build(opts: BuildOptions): Promise<{ app: FastifyInstance; services: Services }> {
  const logger = pino({ level: opts.config.logLevel, redact: { paths: REDACT, censor: '[redacted]' } }, opts.logStream ?? process.stdout)
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, trustProxy: false, bodyLimit: 1024 * 1024, forceCloseConnections: true }) as unknown as FastifyInstance
  const bearer = new BearerAuth()
  const services: Services = { config: opts.config, db: opts.db, log: app.log, bearer, cookieKey: opts.cookieKey, now: opts.now ?? Date.now }
  bearer.register('njk_', (token) => resolveApiKey(opts.db, token))

  const ops = opts.operations ?? defaultOperations
  await app.register(cookie)
  await app.register(formbody)
  registerErrorHandling(app)
  registerHealth(app, services)
  registerOperationRoutes(app, services, ops)
  registerMcp(app, services, ops)
  registerOpenApi(app, ops, opts.config.baseUrl)
  registerConsole(app, services)
  return { app, services }
}
