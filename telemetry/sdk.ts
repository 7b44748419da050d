// The OpenTelemetry SDK, set up from the standard OTEL_* variables (telemetry/tracing.ts
// says which). Loaded by startTracing only when tracing is on.
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'

// what it returns is tracing.ts's Tracing, by shape: importing the type back would make the two a circle
export function startSdk(service: string, env: NodeJS.ProcessEnv): { enabled: true; flush(): Promise<void>; shutdown(): Promise<void> } {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim()
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL: ${protocol} is not supported (http/protobuf or http/json)`)
  }
  // the exporters read the endpoint, headers and timeout from OTEL_EXPORTER_OTLP_* themselves
  const exporter = protocol === 'http/json' ? new JsonExporter() : new ProtoExporter()
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector), when set, win over the process's own name
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': service })).merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  })
  // W3C trace context only: no baggage, which could carry anything across
  provider.register({ propagator: new W3CTraceContextPropagator() })
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  }
}
