// One error body everywhere. Unknown routes and framework errors use the same shape.
import type { FastifyInstance } from 'fastify'
import { isApiError } from '../../contracts/errors.ts'

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err, req, reply) => {
    if (isApiError(err)) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
      return reply.code(err.status).send(err.toBody())
    }
    const e = err as { statusCode?: number; code?: string; message?: string }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      // body parse errors and the like; the message names the problem, never the content
      const message = e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported content type'
        : e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'invalid request: body: empty JSON body'
        : e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'request body too large'
        : e.statusCode === 429 ? 'too many requests'
        : 'invalid request: body is not valid JSON'
      const code = e.statusCode === 429 ? 'rate_limited' : e.statusCode === 415 ? 'unsupported_media_type' : 'bad_request'
      return reply.code(e.statusCode).send({ error: { code, message } })
    }
    req.log.error({ err }, 'unhandled error')
    return reply.code(500).send({ error: { code: 'internal', message: 'internal error' } })
  })
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: { code: 'not_found', message: 'no such route' } }))
}
