// Spans at the doors (telemetry/tracing.ts; off unless an OTLP endpoint is configured): one
// server span per HTTP request, named by its route template, and one per operation (REST or
// MCP), named by the operation. A caller's W3C `traceparent` is honoured, so an agent's own
// trace continues into Nightjar.
//
// Attributes are the method, the route template, the status, the operation's name and the
// door — never the URL (its path holds ids, its query may hold anything), a header or a body.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { context, trace } from '@opentelemetry/api'
import { contextFrom, inSpan, SpanKind, startSpan, type Span } from '../../telemetry/tracing.ts'

const requestSpans = new WeakMap<FastifyRequest, Span>()

export function registerRequestTracing(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched'
    const parent = contextFrom(req.headers.traceparent)
    const span = startSpan(`${req.method} ${route}`, { kind: SpanKind.SERVER, parent, attributes: { 'http.request.method': req.method, 'http.route': route } })
    requestSpans.set(req, span)
    context.with(trace.setSpan(parent, span), done)
  })
  // the body is read in the socket's own async context: the span is made active again for the handler
  app.addHook('preHandler', (req, _reply, done) => {
    const span = requestSpans.get(req)
    if (!span) return done()
    context.with(trace.setSpan(context.active(), span), done)
  })
  app.addHook('onResponse', (req, reply, done) => {
    const span = requestSpans.get(req)
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode)
      span.setAttribute('nightjar.outcome', reply.statusCode < 400 ? 'ok' : 'error')
      span.end()
      requestSpans.delete(req)
    }
    done()
  })
}

/** Runs one operation's handler in a span named after the operation. */
export function tracedOperation<T>(name: string, via: 'rest' | 'mcp', run: () => Promise<T>): Promise<T> {
  return inSpan(`operation ${name}`, { attributes: { 'nightjar.operation': name, 'nightjar.via': via } }, run)
}
