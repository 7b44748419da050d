// JSON routes read JSON only. Fastify parses a body by its content type before any route
// code runs, and the app registers more parsers than JSON: @fastify/formbody for the
// console's forms and the OAuth endpoints, Fastify's own text/plain. On a JSON route
// (REST /v1, MCP) a body in any other type is refused with 415 before it is parsed, so a
// form post or a plain-text body can never act as a request (a cross-site form can send
// both without a CORS preflight).
import type { FastifyRequest } from 'fastify'
import { errors } from '../../contracts/errors.ts'

/** `application/json`, any case, with or without parameters (`; charset=utf-8`). */
export function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && /^\s*application\/json\s*(;|$)/i.test(header)
}

/** Whether the request carries a body (a length above zero, or a chunked one). */
function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length']
  if (length !== undefined) return Number(length) > 0
  return req.headers['transfer-encoding'] !== undefined
}

/** onRequest hook for JSON routes: 415 for a body that is not JSON (no body is fine). */
export async function requireJsonBody(req: FastifyRequest): Promise<void> {
  if (hasBody(req) && !isJsonContentType(req.headers['content-type'])) throw errors.unsupportedMediaType()
}
