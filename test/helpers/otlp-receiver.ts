// An OpenTelemetry collector stand-in: an OTLP/HTTP receiver on loopback (JSON encoding,
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json) that keeps every body as received — for canary
// searches over the exported bytes — and the spans decoded from them.
import { createServer } from 'node:http'

export interface ExportedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes: Record<string, unknown>
}

export async function otlpReceiver(t: { teardown(fn: () => unknown): void }) {
  const bodies: Buffer[] = []
  const spans: ExportedSpan[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      bodies.push(body)
      if (req.url === '/v1/traces') {
        const request = JSON.parse(body.toString('utf8')) as { resourceSpans: any[] }
        for (const rs of request.resourceSpans) {
          const service = rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue
          for (const ss of rs.scopeSpans) for (const s of ss.spans) {
            const attributes: Record<string, unknown> = {}
            for (const a of s.attributes ?? []) attributes[a.key] = Object.values(a.value)[0]
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, attributes })
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bodies, spans }
}
