// The app factory: builds the Fastify instance with every plugin, without
// listening. `cli/start.ts` listens; tests call build() with their own database.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import cors from '@fastify/cors'
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
import type { SessionPlane } from './sessions/plane.ts'
import { LocalReach } from './networks/service.ts'
import { EgressRelay } from './networks/egress-relay.ts'
import { TunnelBroker } from './control/broker.ts'
import { NodeClients } from './sessions/nodes.ts'
import { watchSessions, type SessionWatcher } from './sessions/watcher.ts'
import { Admission } from './sessions/admission.ts'
import { registerSessionMetrics } from './sessions/metrics.ts'
import { SessionActivity, startReaper, type Reaper } from './sessions/expiry.ts'
import { corsOptions, registerOAuth, resolveAccessToken } from './oauth/index.ts'
import { createKmsProvider, PgDataKeyStore, Sealer } from './kms/index.ts'
import { PgAuthStateDirectory } from './authstate/index.ts'

export interface BuildOptions {
  config: Config
  db: Db
  cookieKey: Uint8Array
  /** where logs go (tests capture them to prove no secret is ever logged) */
  logStream?: Writable
  operations?: readonly AnyOperation[]
  /** a controllable clock for tests (token expiry, device-flow intervals, leases) */
  now?: () => number
  /** the operator side; without it the session operations answer 503 */
  plane?: SessionPlane
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
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger, trustProxy: false, bodyLimit: 1024 * 1024, forceCloseConnections: true,
    // a path that is not valid percent-encoded UTF-8 gets the one error shape, never the URL back
    frameworkErrors: (_err, _req, reply) => void (reply as unknown as FastifyReply).code(400).send({ error: { code: 'bad_request', message: 'invalid request: path is not valid percent-encoded UTF-8' } }),
  }) as unknown as FastifyInstance
  const bearer = new BearerAuth()
  // provider 'none' gives a null provider: the Sealer then fails closed before touching the store
  const kms = createKmsProvider(opts.config.kms)
  const sealer = new Sealer(kms, new PgDataKeyStore(opts.db, kms?.name ?? 'local'))
  const services: Services = { config: opts.config, db: opts.db, log: app.log, bearer, cookieKey: opts.cookieKey, now: opts.now ?? Date.now, sealer }
  services.authStates = new PgAuthStateDirectory(opts.db) // warm resume: which captured version to restore
  services.admission = new Admission(opts.config.capacity)
  bearer.register('njk_', (token) => resolveApiKey(opts.db, token))
  // njo_ tokens are checked only against OAuth records (audience, expiry, grant)
  bearer.register('njo_', (token) => resolveAccessToken(services, token))

  const ops = opts.operations ?? defaultOperations
  // an empty JSON body (a DELETE sent with a content-type, say) reads as no body
  const jsonParser = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined)
    jsonParser(req, body as string, done)
  })
  await app.register(cookie)
  await app.register(formbody)
  // CORS for discovery, the OAuth endpoints and /mcp only (oauth/cors.ts)
  await app.register(cors, corsOptions())
  registerErrorHandling(app)
  registerSessionMetrics(registerHealth(app, services), services)
  registerOperationRoutes(app, services, ops)
  registerMcp(app, services, ops)
  registerOpenApi(app, ops, opts.config.baseUrl)
  registerConsole(app, services)
  registerOAuth(app, services)
  // local reach: networks, the daemon control channel and (with sessions) the pods' egress relay
  const localReach = new LocalReach({ db: opts.db, plane: opts.plane, hub: opts.plane?.daemonCounts })
  const broker = new TunnelBroker({
    authenticate: localReach.authenticate,
    onRegister: localReach.onRegister,
    onDisconnect: localReach.onDisconnect,
    loadDeclaredHosts: localReach.loadDeclaredHosts,
    log: (level, msg, fields) => app.log[level](fields ?? {}, msg),
  })
  localReach.broker = broker
  services.localReach = localReach
  services.networks = localReach
  if (opts.plane?.daemonCounts) opts.plane.daemonCounts.source = (id) => localReach.counts(id)
  const relay = opts.plane ? new EgressRelay({ plane: opts.plane, broker }) : undefined
  app.server.on('upgrade', (req, socket, head) => {
    if (broker.handleUpgrade(req, socket, head)) return
    if (relay?.handleUpgrade(req, socket, head)) return
    socket.destroy()
  })
  app.addHook('onClose', async () => {
    relay?.close()
    await broker.close()
  })
  if (opts.plane) {
    const plane = opts.plane
    const nodeClients = new NodeClients(plane.nodes)
    services.plane = plane
    services.nodeClients = nodeClients
    // a session may ask for an idle timeout down to 10 s: marks must come well within that
    const shortestIdleMs = Math.min(10, opts.config.lifetimes.idleTimeoutSecs) * 1000
    const activity = new SessionActivity(opts.db, app.log, Math.min(5000, shortestIdleMs / 4))
    services.activity = activity
    let watcher: SessionWatcher | undefined
    let reaper: Reaper | undefined
    app.addHook('onReady', async () => {
      watcher = await watchSessions({ db: opts.db, plane, nodeClients, log: app.log })
      services.sessionWatcher = watcher
      // a pass at a quarter of the shortest timeout, every 5 s at most
      const intervalMs = Math.min(5000, Math.max(250, (opts.config.lifetimes.idleTimeoutSecs * 1000) / 4))
      reaper = startReaper({ db: opts.db, plane, nodeClients, activity, log: app.log, intervalMs })
    })
    app.addHook('onClose', async () => {
      reaper?.stop()
      watcher?.stop()
      nodeClients.closeAll()
    })
  }
  return { app, services }
}
