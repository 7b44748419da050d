// Tracing for every Nightjar process (api-server, operator, browser pod): the OpenTelemetry
// JS SDK with OTLP export, off unless an OTLP endpoint is configured through the standard
// variables; off, nothing is installed and the API's no-op tracer answers every span call.
// Only W3C trace context crosses a process boundary (no baggage: it could carry anything).
// The variables, and what never enters a span: docs/observability.md#traces
import { context, propagation, trace, SpanKind, SpanStatusCode, type Attributes, type Context, type Span } from '@opentelemetry/api'

export { SpanKind }
export type { Attributes, Context, Span }

export interface Tracing {
  /** true when spans are exported */
  readonly enabled: boolean
  /** exports what is still buffered */
  flush(): Promise<void>
  /** flushes and stops exporting */
  shutdown(): Promise<void>
}

/**
 * The tracing settings a browser pod is given by the operator (both runtimes): where to
 * send spans and how to sample. Never OTEL_EXPORTER_OTLP_HEADERS: a collector's credential
 * stays out of the pod whose Chromium runs the pages; a collector the pods reach needs none
 * (or a sidecar/agent on the node adds it). OTEL_SERVICE_NAME neither: the pod names itself.
 */
export const POD_TRACING_ENV = [
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_SDK_DISABLED', 'OTEL_TRACES_EXPORTER', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_RESOURCE_ATTRIBUTES',
] as const

/** the pod's tracing settings out of an environment (POD_TRACING_ENV) */
export function podTracingEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of POD_TRACING_ENV) if (env[k] !== undefined && env[k] !== '') out[k] = env[k]
  return out
}

const off: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} }
let running: Tracing | undefined

/** Whether the environment asks for traces (an OTLP endpoint, not disabled). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return false
  return !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim())
}

/**
 * Starts exporting this process's spans when the environment asks for it (once per
 * process; a later call returns the first's handle). `service` names the process
 * (service.name) unless OTEL_SERVICE_NAME does. The SDK is loaded only then: a process
 * that does not trace never loads it.
 */
export async function startTracing(service: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  if (running) return running
  if (!tracingRequested(env)) return off
  const { startSdk } = await import('./sdk.ts')
  running ??= startSdk(service, env)
  return running
}

const tracer = () => trace.getTracer('nightjar')

/**
 * Runs `fn` in a span named `name`: its outcome is the span's status (an error records its
 * code, never its message — a message may quote input). `attributes` must be from the
 * allowed list in docs/observability.md.
 */
export async function inSpan<T>(name: string, opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context }, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, opts.parent ?? context.active(), async (span) => {
    try {
      const out = await fn(span)
      span.setAttribute('nightjar.outcome', 'ok')
      return out
    } catch (e) {
      failSpan(span, e)
      throw e
    } finally {
      span.end()
    }
  })
}

/** Starts a span that the caller ends (a request, a start that outlives its caller). */
export function startSpan(name: string, opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context; startTime?: number } = {}): Span {
  return tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, startTime: opts.startTime }, opts.parent ?? context.active())
}

/** Marks a span failed with the error's code (an ApiError's reason or code, an errno, or the class name). */
export function failSpan(span: Span, e: unknown): void {
  span.setAttribute('nightjar.outcome', 'error')
  span.setAttribute('nightjar.error', errorCode(e))
  span.setStatus({ code: SpanStatusCode.ERROR })
}

/** a fixed word naming an error, never its message */
export function errorCode(e: unknown): string {
  if (e && typeof e === 'object') {
    const o = e as { reason?: unknown; code?: unknown; name?: unknown }
    for (const v of [o.reason, o.code]) if (typeof v === 'string' && /^[\w.-]{1,64}$/.test(v)) return v
    if (typeof o.name === 'string' && /^\w{1,64}$/.test(o.name)) return o.name
  }
  return 'error'
}

/** Runs `fn` with `span` as the active span (so spans and outgoing calls inside join it). */
export function withSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn)
}

/** The active context when it holds a span (to carry it to work that starts later, elsewhere); undefined otherwise. */
export function tracedContext(): Context | undefined {
  const ctx = context.active()
  return trace.getSpan(ctx) ? ctx : undefined
}

/** Runs `fn` in a context captured earlier (tracedContext). */
export function inContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn)
}

/** The active context's `traceparent` (W3C), or undefined when no sampled span is active. */
export function currentTraceparent(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {}
  propagation.inject(ctx, carrier)
  return carrier.traceparent
}

/** The headers that carry the active trace on an outgoing request (none when not tracing). */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const traceparent = currentTraceparent(ctx)
  return traceparent ? { traceparent } : {}
}

/** The context a received `traceparent` (header or annotation) names; the active one when absent. */
export function contextFrom(traceparent: string | string[] | undefined, base: Context = context.active()): Context {
  const value = Array.isArray(traceparent) ? traceparent[0] : traceparent
  if (!value) return base
  return propagation.extract(base, { traceparent: value })
}
