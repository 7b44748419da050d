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
import { registerRequestTracing } from './door-kit/tracing.ts'
import { errors } from '../contracts/errors.ts'
import { registerHealth } from './http/health.ts'
import { drainDeadline, registerDrainNotice } from './http/drain.ts'
import { registerOperationRoutes } from './http/operations.ts'
import { registerVideoRoute } from './http/video.ts'
import { registerOpenApi } from './http/openapi.ts'
import { registerMcp } from './mcp/server.ts'
import { registerConsole } from './console/routes.ts'
import type { SessionPlane } from './sessions/plane.ts'
import { LiveSessions, NO_SESSIONS, type PlaneFactory } from './sessions/runtime.ts'
import { LocalReach, daemonRegistry } from './networks/service.ts'
import { countDaemons, DaemonChanges, daemonCounts } from './networks/counts.ts'
import { DaemonCountPublisher } from './networks/count-publisher.ts'
import { ClusterNetworkResources, NO_NETWORK_RESOURCES } from './networks/resources.ts'
import { EgressRelay } from './networks/egress-relay.ts'
import { CdpRelay } from './cdp/relay.ts'
import { registerCdpDiscovery } from './cdp/discovery.ts'
import { LiveViewRelay } from './console/live-socket.ts'
import { TunnelBroker } from './tunnel-broker/broker.ts'
import { ReplicaRegistry } from './replicas/registry.ts'
import { ReplicaDialServer } from './replicas/channel.ts'
import { TunnelFanout } from './replicas/fanout.ts'
import { declaredHostsOf } from './networks/store.ts'
import { clientAddress, trustFunction } from './door-kit/client-address.ts'
import { joinGate, Limits, limitSettings, PgLimitStore } from './limits/index.ts'
import { Admission } from './sessions/admission.ts'
import { StartDrain } from './sessions/start-drain.ts'
import { registerSessionMetrics } from './sessions/metrics.ts'
import { registerProductMetrics } from './metrics/product.ts'
import { SessionActivity } from './sessions/expiry.ts'
import { corsOptions, registerOAuth, resolveAccessToken } from './oauth/index.ts'
import { createKmsProvider, PgDataKeyStore, Sealer } from './kms/index.ts'
import { PgAuthStateDirectory } from './authstate/index.ts'
import { Recordings, recordingSettings } from './recordings/service.ts'
import { Webhooks } from './webhooks/service.ts'

export interface BuildOptions<P extends SessionPlane = SessionPlane> {
  config: Config
  db: Db
  cookieKey: Uint8Array
  /** where logs go (tests capture them to prove no secret is ever logged) */
  logStream?: Writable
  operations?: readonly AnyOperation[]
  /** a controllable clock for tests (token expiry, device-flow intervals, leases) */
  now?: () => number
  /**
   * Starts the operator side, given the ports the app provides (daemon counts). The app
   * owns what it returns and stops it on close. Without it the process runs no sessions:
   * the session operations answer 503 (NO_SESSIONS) and networks are rows only.
   */
  plane?: PlaneFactory<P>
  /** check every REST and MCP result against its output schema (tests): a mismatch answers 500 */
  checkOutput?: boolean
}

export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
]

export interface Built<P> {
  app: FastifyInstance
  services: Services
  /** what opts.plane started (the app stops it on close) */
  plane: P
}

/** What build() makes before the session plane starts, and assemble() joins into the app. */
interface Foundation<P extends SessionPlane = SessionPlane> {
  opts: BuildOptions<P>
  app: FastifyInstance
  config: Config
  db: Db
  log: FastifyBaseLogger
  now: () => number
  trust: ReturnType<typeof trustFunction>
  bearer: BearerAuth
  sealer: Sealer
  changes: DaemonChanges
  limits: Limits
  replica: ReplicaRegistry
  broker: TunnelBroker
}

/**
 * The composition root. Builds every service whole, in dependency order — clock and
 * secrets; the daemon registry, the tunnel broker and the daemon counts; the session plane
 * (which needs those counts); Network resources and local reach; the session runtime — then
 * the routes over the finished Services. It either returns a complete app or refuses with
 * the reason (and stops whatever it had started).
 */
export async function build<P extends SessionPlane>(opts: BuildOptions<P> & { plane: PlaneFactory<P> }): Promise<Built<P>>
export async function build<P extends SessionPlane = SessionPlane>(opts: BuildOptions<P>): Promise<Built<P | undefined>>
export async function build<P extends SessionPlane = SessionPlane>(opts: BuildOptions<P>): Promise<Built<P | undefined>> {
  // the one trust rule for client addresses, HTTP requests and WebSocket upgrades alike (door-kit/client-address.ts)
  const trust = trustFunction(opts.config.trustedProxies)
  const f = foundation(opts, createFastify(opts, trust), trust)
  // the operator side, started with the daemon counts it reads (the broker exists by now)
  const { db, broker, changes, replica, log } = f
  const plane = opts.plane
    ? await opts.plane({ daemonCounts: daemonCounts({ db, broker, changes, replica }), log: log.child({ component: 'operator' }) }).catch(async (e: Error) => {
      await broker.close()
      throw new Error(`the session plane did not start: ${e.message}`, { cause: e })
    })
    : undefined
  try {
    return { app: f.app, services: await assemble(f, plane), plane }
  } catch (e) {
    // refuse to start whole: nothing this build started keeps running
    await broker.close()
    await plane?.stop()
    throw e
  }
}

function createFastify(opts: BuildOptions, trust: ReturnType<typeof trustFunction>): FastifyInstance {
  const logger = pino({ level: opts.config.logLevel, redact: { paths: REDACT, censor: '[redacted]' } }, opts.logStream ?? process.stdout)
  return Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // req.ip is the TCP peer unless it is one of the configured proxies
    trustProxy: opts.config.trustedProxies.length ? trust : false,
    bodyLimit: 1024 * 1024,
    // on close, idle keep-alive connections go at once; requests in flight finish (http/drain.ts bounds the wait)
    forceCloseConnections: 'idle',
    // a request on a kept-alive connection once close() began is served as usual (its answer
    // closes the connection, http/drain.ts), not refused with Fastify's 503
    return503OnClosing: false,
    // a path that is not valid percent-encoded UTF-8 gets the one error shape, never the URL back
    frameworkErrors: (_err, _req, reply) => {
      const e = errors.invalidRequest('path is not valid percent-encoded UTF-8')
      void (reply as unknown as FastifyReply).code(e.status).send(e.toBody())
    },
  }) as unknown as FastifyInstance
}

/** clock and secrets, the abuse limits, this replica, and local reach's first part (the broker) */
function foundation<P extends SessionPlane>(opts: BuildOptions<P>, app: FastifyInstance, trust: ReturnType<typeof trustFunction>): Foundation<P> {
  const { config, db } = opts
  const log = app.log
  const now = opts.now ?? Date.now
  // provider 'none' gives a null provider: the Sealer then fails closed before touching the store
  const kms = createKmsProvider(config.kms)
  const sealer = new Sealer(kms, new PgDataKeyStore(db, kms?.name ?? 'local'))
  // local reach, part one: the registry hooks need only the database, the broker only its hooks
  const changes = new DaemonChanges()
  // the abuse limits count in Postgres, so every replica shares one budget per key
  const limits = new Limits(limitSettings(config), now, new PgLimitStore(db))
  const logTo = (level: 'info' | 'warn' | 'error' | 'debug', msg: string, fields?: Record<string, unknown>) => log[level](fields ?? {}, msg)
  // this process as one replica among many: daemon rows name it, dials for its daemons are forwarded to it
  const replica = new ReplicaRegistry({ db, address: config.replica.address, heartbeatMs: config.replica.heartbeatMs, log: logTo })
  const broker = new TunnelBroker({ ...daemonRegistry({ db, changes, replicaId: replica.id }), joinGate: joinGate(limits), clientAddress: (req) => clientAddress(req, trust), log: logTo })
  return { opts, app, config, db, log, now, trust, bearer: new BearerAuth(), sealer, changes, limits, replica, broker }
}

/** the services and the parts of them the app starts and stops */
interface Assembled {
  services: Services
  networkResources: ClusterNetworkResources | typeof NO_NETWORK_RESOURCES
  countPublisher?: DaemonCountPublisher
  fanout: TunnelFanout
  live?: LiveSessions
  recordings: Recordings
  webhooks: Webhooks
}

async function assemble(f: Foundation, plane: SessionPlane | undefined): Promise<Services> {
  const parts = makeServices(f, plane)
  f.bearer.register('njk_', (token) => resolveApiKey(f.db, token))
  // njo_ tokens are checked only against OAuth records (audience, expiry, grant)
  f.bearer.register('njo_', (token) => resolveAccessToken(parts.services, token))
  await registerRoutes(f, parts.services, plane)
  const sockets = registerSockets(f, parts.services, plane)
  registerLifecycle(f, parts, sockets)
  return parts.services
}

/** local reach's second part, the session runtime, recordings and webhooks, as one Services */
function makeServices(f: Foundation, plane: SessionPlane | undefined): Assembled {
  const { config, db, log, now, broker, replica, changes } = f
  // local reach, part two: the operator's copy of each network, then the service itself
  const networkResources = plane ? new ClusterNetworkResources({ db, networks: plane.networks, log }) : NO_NETWORK_RESOURCES
  // in a cluster the operator is another process: it reads the daemon counts we publish on each Network
  const countPublisher = plane && config.runtime === 'kubernetes'
    ? new DaemonCountPublisher({
      networks: plane.networks, changes, counts: (networkId) => countDaemons({ db, broker, replica }, { networkId }), log,
      // a replica that died publishes nothing: the others' refresh shows its daemons offline soon after it counts as dead
      refreshMs: Math.max(15_000, replica.deadAfterMs),
    })
    : undefined
  const fanout = new TunnelFanout({ db, broker, replicaId: replica.id, loadDeclaredHosts: (id) => declaredHostsOf(db, id), log: (level, msg, fields) => log[level](fields ?? {}, msg) })
  const localReach = new LocalReach({ db, broker, resources: networkResources, replica, fanout })
  // a session may ask for an idle timeout down to 10 s: marks must come well within that
  const shortestIdleMs = Math.min(10, config.lifetimes.idleTimeoutSecs) * 1000
  const activity = new SessionActivity(db, log, Math.min(5000, shortestIdleMs / 4), now)
  // the reaper passes at a quarter of the shortest timeout, every 5 s at most
  const reaperIntervalMs = Math.min(5000, Math.max(250, (config.lifetimes.idleTimeoutSecs * 1000) / 4))
  // the events port's listener: every replica stores events and runs a delivery worker
  const webhooks = new Webhooks({ db, sealer: f.sealer, log, now, settings: { denyCidrs: config.denyCidrs, ...config.webhooks } })
  // a session ended by a timeout keeps its video and recording, as one ended by DELETE does
  const finishing = (sessionId: string): Promise<void> => recordings.finish(sessionId)
  const live = plane ? new LiveSessions({ db, plane, activity, log, reaperIntervalMs, events: webhooks, replica, finishing }) : undefined
  const sessions = live ?? NO_SESSIONS
  const recordings = new Recordings({ db, log, now, pod: (id) => sessions.pods.get(id), settings: recordingSettings(config) })
  const services: Services = {
    config, db, log, bearer: f.bearer, cookieKey: f.opts.cookieKey, now, sealer: f.sealer,
    sessions,
    recordings,
    localReach,
    networks: localReach,
    authStates: new PgAuthStateDirectory(db), // warm resume: which captured version to restore
    admission: new Admission(config.capacity),
    startDrain: new StartDrain(),
    limits: f.limits,
    activity,
    events: webhooks,
    webhooks,
  }
  return { services, networkResources, countPublisher, fanout, live, recordings, webhooks }
}

/** the body parsers, the doors and every route, over the finished Services */
async function registerRoutes(f: Foundation, services: Services, plane: SessionPlane | undefined): Promise<void> {
  const { app, opts } = f
  const ops = opts.operations ?? defaultOperations
  // an empty JSON body (a DELETE sent with a content-type, say) reads as no body
  const jsonParser = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined)
    return jsonParser(req, body as string, done)
  })
  await app.register(cookie)
  await app.register(formbody)
  // CORS for discovery, the OAuth endpoints and /mcp only (oauth/cors.ts)
  await app.register(cors, corsOptions())
  registerErrorHandling(app)
  registerRequestTracing(app)
  registerDrainNotice(app)
  const metrics = registerHealth(app, services)
  registerSessionMetrics(metrics, services)
  registerProductMetrics(metrics, { db: f.db, tunnel: f.broker })
  // the embedded plane's operator series (warm pool, pod failures) are this process's too
  plane?.registerMetrics?.(metrics)
  registerOperationRoutes(app, services, ops, opts)
  // a session's video: bytes with ranges, beside the operations (http/video.ts)
  registerVideoRoute(app, services)
  registerMcp(app, services, ops, opts)
  registerOpenApi(app, ops, f.config.baseUrl)
  registerConsole(app, services)
  registerOAuth(app, services)
  // CDP discovery as Chrome serves it (/v1/sessions/:sessionId/cdp/json/…)
  registerCdpDiscovery(app, services, plane?.pods)
}

/** the WebSocket doors, tried in order on each upgrade; what they hold is closed before the server */
function registerSockets(f: Foundation, services: Services, plane: SessionPlane | undefined): { close: () => Promise<void> } {
  const { broker, replica, config } = f
  // the tunnel broker daemons join, and (with sessions) the pods' egress relay
  const forwarding = config.replica.secret ? { secret: config.replica.secret, ownerOf: (networkId: string) => replica.ownerOf(networkId) } : undefined
  const relay = plane ? new EgressRelay({ plane, broker, forwarding }) : undefined
  // dials other replicas forward to this one (refused without the replica secret)
  const replicaDials = new ReplicaDialServer({ secret: config.replica.secret, broker })
  // CDP connect: GET /v1/sessions/:sessionId/cdp with Upgrade (cdp/relay.ts)
  const cdp = new CdpRelay(services, plane?.pods)
  // the console's live view: a person watching (and taking control of) a session
  const liveView = new LiveViewRelay(services, plane?.pods)
  f.app.server.on('upgrade', (req, socket, head) => {
    if (broker.handleUpgrade(req, socket, head)) return
    if (relay?.handleUpgrade(req, socket, head)) return
    if (replicaDials.handleUpgrade(req, socket, head)) return
    if (liveView.handleUpgrade(req, socket, head)) return
    if (cdp.handleUpgrade(req, socket, head)) return
    socket.destroy()
  })
  return {
    close: async () => {
      relay?.close()
      replicaDials.close()
      liveView.close()
      cdp.close()
      await broker.close()
    },
  }
}

/** what starts once the app is ready, and stops, in order, when it closes */
function registerLifecycle(f: Foundation, parts: Assembled, sockets: { close: () => Promise<void> }): void {
  const { replica, broker } = f
  const { fanout, live, recordings, webhooks, networkResources, countPublisher } = parts
  f.app.addHook('onReady', async () => {
    // registered and listening before any daemon can join through this replica
    await replica.start()
    await fanout.start()
    await live?.start()
    // retention runs in every replica (deleting twice is harmless)
    recordings.startSweeper()
    // deliveries a stopped process left pending go out now (any replica may claim them)
    webhooks.start()
    // the operator's copy of the networks catches up with the table (never throws: repaired later)
    await networkResources.start()
    // every network's counts once (a restarted api-server has no daemons until they rejoin), then on each change
    countPublisher?.start()
    void countPublisher?.refresh()
  })
  // WebSockets are not HTTP requests: the server's close would wait for them forever. They go
  // first — daemons are told to rejoin (they find another replica), streams end — while the
  // requests in flight drain.
  f.app.addHook('preClose', sockets.close)
  // callers waiting on a start are answered now (202 pending); the starts get the drain's time
  // (none on a plain app.close(): they fail as the watch stops, as before)
  f.app.addHook('preClose', async () => { parts.services.startDrain.close(drainDeadline(f.app) ?? Date.now()) })
  f.app.addHook('onClose', async () => {
    // a start lives in this process: it settles before the watch it waits on stops
    const left = await parts.services.startDrain.settled()
    if (left) f.log.warn({ starts: left }, 'session starts still in flight at the drain deadline: another replica fails them as Orphaned')
    await broker.close() // a build that never became ready skips preClose
    // then this replica's row goes: the daemons it held read offline until they rejoin
    await fanout.stop()
    await replica.stop()
    networkResources.stop()
    countPublisher?.stop()
    await recordings.stop()
    await live?.stop()
    // after the sessions: their last events are stored; attempts in flight are recorded
    await webhooks.stop()
  })
}
