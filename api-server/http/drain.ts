// Graceful shutdown of the HTTP server. First, for the shutdown delay, it goes on serving
// while load balancers and kube-proxy stop sending it traffic: /readyz answers 503, every
// answer says `connection: close`, so clients open new connections (which go elsewhere). Then
// it stops accepting, lets the requests in flight finish (a request arriving on an open
// connection meanwhile is still served) and only past the drain deadline cuts what is left. Why the delay: docs/upgrades.md#no-error-during-a-rollout
import type { FastifyInstance } from 'fastify'

const draining = new WeakSet<FastifyInstance>()
const deadlines = new WeakMap<FastifyInstance, number>()

/** when a graceful close cuts what is left (epoch ms); undefined for a plain app.close() */
export function drainDeadline(app: FastifyInstance): number | undefined {
  return deadlines.get(app)
}

/** true once a shutdown began: /readyz answers 503 */
export function isDraining(app: FastifyInstance): boolean {
  return draining.has(app)
}

/**
 * Answers sent once a shutdown began close their connection, so the client's next request
 * is routed anew — those of requests that arrived before it too (hence onSend, not onRequest).
 */
export function registerDrainNotice(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    if (draining.has(app)) reply.header('connection', 'close')
    return payload
  })
}

export async function closeGracefully(app: FastifyInstance, drainMs: number, delayMs = 0): Promise<void> {
  draining.add(app)
  // idle keep-alive connections are not closed here: a client may be sending on one at that
  // instant and would see it cut; its next request gets an answer that closes it instead
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
  deadlines.set(app, Date.now() + drainMs)
  const deadline = setTimeout(() => app.server.closeAllConnections(), drainMs)
  deadline.unref()
  try {
    await app.close()
  } finally {
    clearTimeout(deadline)
  }
}
