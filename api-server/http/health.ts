// Liveness, readiness (the database answers) and Prometheus metrics. /metrics is open on
// the main port unless NIGHTJAR_METRICS_TOKEN requires a Bearer (else 401) or
// NIGHTJAR_METRICS_PORT moves it to a listener of its own (then 404 on the main port).
// Knobs: docs/configuration.md
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import client from 'prom-client'
import type { Services } from '../services.ts'
import { errors, type ApiError } from '../../contracts/errors.ts'
import { isDraining } from './drain.ts'

const METRICS_CHALLENGE = { 'www-authenticate': 'Bearer realm="metrics"' }
const json = (e: ApiError) => JSON.stringify(e.toBody())

/** Constant-time check of a scrape's Bearer token (compared as SHA-256 digests, so lengths never leak). */
export function metricsAuthorized(expected: string | undefined, header: string | undefined): boolean {
  if (!expected) return true
  const m = /^bearer +(\S+)$/i.exec((header ?? '').trim())
  if (!m) return false
  const digest = (v: string) => createHash('sha256').update(v).digest()
  return timingSafeEqual(digest(m[1]), digest(expected))
}

const READY_TIMEOUT_MS = 1000

/** Registers /healthz, /readyz and /metrics (on the main port or a listener of its own); returns the registry. */
export function registerHealth(app: FastifyInstance, services: Services) {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry })
  countRequests(app, registry)
  registerProbes(app, services)
  const metrics = services.config.metrics ?? { host: services.config.host }
  if (metrics.port === undefined) {
    app.get('/metrics', async (req, reply) => {
      if (!metricsAuthorized(metrics.token, req.headers.authorization)) {
        const e = errors.unauthorized().withHeaders(METRICS_CHALLENGE)
        return reply.code(e.status).headers(e.headers).type('application/json').send(json(e))
      }
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  } else {
    metricsListener(app, registry, { ...metrics, port: metrics.port })
  }
  return registry
}

/** every HTTP request, counted and timed by route template and status */
function countRequests(app: FastifyInstance, registry: client.Registry): void {
  const requests = new client.Counter({
    name: 'nightjar_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry],
  })
  const latency = new client.Histogram({
    name: 'nightjar_http_request_duration_seconds', help: 'HTTP request latency', labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry],
  })
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched'
    requests.inc({ method: req.method, route, status: String(reply.statusCode) })
    latency.observe({ method: req.method, route }, reply.elapsedTime / 1000)
  })
}

function registerProbes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', async () => ({ ok: true }))
  // readiness answers within a second whatever the database does: a load balancer must
  // learn of a stalled database before its own probe times out
  app.get('/readyz', async (_req, reply) => {
    if (isDraining(app)) {
      const e = errors.shuttingDown()
      return reply.code(e.status).headers(e.headers).send(e.toBody())
    }
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        services.db.query('select 1'),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('readiness probe timed out')), READY_TIMEOUT_MS) }),
      ])
      return { ok: true }
    } catch {
      const e = errors.databaseUnavailable()
      return reply.code(e.status).headers(e.headers).send(e.toBody())
    } finally {
      clearTimeout(timer)
    }
  })
}

/** /metrics on a listener of its own: started with the app (onReady, so a port clash fails start-up) and closed with it */
function metricsListener(app: FastifyInstance, registry: client.Registry, metrics: { host: string; port: number; token?: string }): void {
  let server: Server | undefined
  const serve = async (req: IncomingMessage) => {
    const path = (req.url ?? '/').split('?')[0]
    const refuse = (e: ApiError) => ({ status: e.status, type: 'application/json', body: json(e), headers: e.headers })
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) return refuse(errors.noSuchRoute())
    if (!metricsAuthorized(metrics.token, req.headers.authorization)) return refuse(errors.unauthorized().withHeaders(METRICS_CHALLENGE))
    return { status: 200, type: registry.contentType, body: await registry.metrics() }
  }
  app.addHook('onReady', async () => {
    server = createServer((req, res) => {
      serve(req).then((r) => {
        const headers: Record<string, string> = { 'content-type': r.type, 'cache-control': 'no-store' }
        if ('headers' in r) Object.assign(headers, r.headers)
        res.writeHead(r.status, headers).end(req.method === 'HEAD' ? undefined : r.body)
      }, () => {
        const e = errors.internal()
        res.writeHead(e.status, { 'content-type': 'application/json' }).end(json(e))
      })
    })
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject)
      server!.listen(metrics.port, metrics.host, () => {
        server!.off('error', reject)
        resolve()
      })
    })
    app.log.info({ host: metrics.host, port: metrics.port }, 'metrics listener started')
  })
  app.addHook('onClose', async () => {
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server!.close(() => resolve()))
  })
}
