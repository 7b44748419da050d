// CORS for what browser-based MCP clients call cross-origin: discovery, the token,
// device, registration and revocation endpoints, and /mcp. None of them uses cookies
// (Bearer tokens and public clients only), so any origin may call them and no
// credentials are allowed. /oauth/authorize and the console are deliberately absent:
// they run on the console cookie and are navigated to, never fetched.
import type { FastifyRequest } from 'fastify'
import type { FastifyCorsOptions } from '@fastify/cors'

const CORS_PATHS = new Set([
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-authorization-server',
  '/oauth/token',
  '/oauth/device',
  '/oauth/register',
  '/oauth/revoke',
  '/mcp',
])

export function corsOptions(): FastifyCorsOptions {
  return {
    delegator: (req: FastifyRequest, cb: (err: Error | null, options: FastifyCorsOptions) => void) => {
      const path = req.url.split('?')[0]
      if (!CORS_PATHS.has(path)) return cb(null, { origin: false })
      cb(null, {
        origin: '*',
        methods: ['GET', 'POST', 'DELETE'],
        // allowedHeaders unset: the preflight's Access-Control-Request-Headers is reflected
        // (Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID)
        exposedHeaders: ['WWW-Authenticate', 'Mcp-Session-Id'],
        credentials: false,
        maxAge: 600,
      })
    },
  }
}
