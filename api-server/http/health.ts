// Liveness, readiness (the database answers) and Prometheus metrics.
import type { FastifyInstance } from 'fastify'
import client from 'prom-client'
import type { Services } from '../services.ts'

export function registerHealth(app: FastifyInstance, services: Services) {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry })
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
  app.get('/healthz', async () => ({ ok: true }))
  app.get('/readyz', async (_req, reply) => {
    try {
      await services.db.query('select 1')
      return { ok: true }
    } catch {
      return reply.code(503).send({ error: { code: 'unavailable', message: 'database unavailable' } })
    }
  })
  app.get('/metrics', async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()))
  return registry
}
