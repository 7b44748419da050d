// GET /v1/sessions/:sessionId/video: a session's video, as stored when the session ended,
// with single byte ranges (RFC 9110 §14) so a player can seek. Bytes, not JSON, so a route of
// its own beside the operations; the same credential, scope and one 404 as the recording's.
// Design: docs/sessions.md#video
import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.ts'
import { errors } from '../../contracts/errors.ts'
import { requireAuth } from '../door-kit/auth-hook.ts'
import { requireScopes } from '../auth/scopes.ts'
import { getSession } from '../sessions/store.ts'
import { getVideo } from '../recordings/video.ts'
import { sendVideoFile } from '../door-kit/video-file.ts'

export const VIDEO_PATH = '/v1/sessions/:sessionId/video'
const VIDEO_SCOPES = ['sessions:write'] as const

export function registerVideoRoute(app: FastifyInstance, services: Services): void {
  app.route({
    method: 'GET',
    url: VIDEO_PATH,
    schema: { params: { type: 'object', properties: { sessionId: { type: 'string', maxLength: 100 } }, required: ['sessionId'] } },
    handler: async (req, reply) => {
      const auth = await requireAuth(services, req)
      requireScopes(auth.scopes, VIDEO_SCOPES)
      const { sessionId } = req.params as { sessionId: string }
      // the session in the caller's org first: another org's, an unknown one and one without a stored video are one 404
      await getSession(services.db, auth.orgId, sessionId)
      const row = await getVideo(services.db, auth.orgId, sessionId)
      const file = row?.stored ? await services.recordings.store.get(row.storageKey) : null
      if (!row || !file) throw errors.notFound('session')
      return sendVideoFile(req, reply, row.format, file)
    },
  })
}
