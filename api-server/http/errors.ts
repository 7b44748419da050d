// One error body everywhere. Unknown routes and framework errors use the same shape,
// and come from the catalogue like every other error (contracts/errors.ts).
import type { FastifyInstance, FastifyReply } from 'fastify'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'

function send(reply: FastifyReply, e: ApiError) {
  return reply.code(e.status).headers(e.headers).send(e.toBody())
}

/** A framework error (body parsing and the like) as its catalogue entry; the message names the problem, never the content. */
function frameworkError(e: { statusCode?: number; code?: string }): ApiError {
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e.statusCode === 415) return errors.unsupportedMediaType()
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413) return errors.payloadTooLarge()
  if (e.statusCode === 429) return errors.tooManyRequests()
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return errors.invalidRequest('body: empty JSON body')
  return errors.invalidRequest('body: not valid JSON')
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err, req, reply) => {
    if (isApiError(err)) return send(reply, err)
    const e = err as { statusCode?: number; code?: string }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return send(reply, frameworkError(e))
    req.log.error({ err }, 'unhandled error')
    return send(reply, errors.internal())
  })
  app.setNotFoundHandler((req, reply) => send(reply, errors.noSuchRoute()))
}
