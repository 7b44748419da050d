// Graceful shutdown of the HTTP server: stop accepting, let the requests in flight finish
// (Fastify answers new requests on open connections with 503 meanwhile), drop idle
// keep-alive connections at once, and only past the drain deadline cut what is left.
import type { FastifyInstance } from 'fastify'

export async function closeGracefully(app: FastifyInstance, drainMs: number): Promise<void> {
  const deadline = setTimeout(() => app.server.closeAllConnections(), drainMs)
  deadline.unref()
  try {
    await app.close()
  } finally {
    clearTimeout(deadline)
  }
}
