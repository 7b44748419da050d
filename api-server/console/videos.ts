// The console's Videos pages: the org's session videos, and one played in the browser's own
// <video> element with a download link. The file is answered with byte ranges (door-kit's
// video-file.ts), so the player seeks without fetching the whole file; the page's CSP lets
// it load media from this origin only. Watching a video needs the same role as watching a
// session live or its recording (sessions:drive); an unknown session, another org's and one
// without a stored video are the one 404. Design: docs/sessions.md#video
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import { requireScopes, scopeRefusal } from '../auth/scopes.ts'
import { getSession } from '../sessions/store.ts'
import { WATCH_SCOPE } from './live-socket.ts'
import { getVideo, listVideos, type VideoRow } from '../recordings/video.ts'
import { sendVideoFile } from '../door-kit/video-file.ts'
import { html, page } from '../door-kit/html.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { sendRefusalJson, type ConsolePageKit } from './page-kit.ts'

const PLAYER_CSP = "default-src 'none'; style-src 'unsafe-inline'; media-src 'self'; form-action 'self'; frame-ancestors 'none'"

/** what became of a video, in a word a person reads */
function videoState(v: VideoRow): string {
  if (v.lost) return 'lost (its pod was gone before the file was read)'
  if (!v.stored) return v.endedAt ? 'being stored' : 'filming'
  return v.truncated ? 'stored, cut at its bound' : 'stored'
}

export function registerVideoPages(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const sessions = `${base}/sessions`
  const refused = (reply: FastifyReply, u: ConsoleUser, e: unknown) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, page('Videos', html`<p class="error" role="alert">${e.message}</p><p><a href="${base}/videos">All videos</a></p>`, kit.chrome(u)))
  }
  /** a stored video this person may watch: the role's scope, then the one 404 for unknown, foreign and unfilmed ids */
  const watchableVideo = async (u: ConsoleUser, params: unknown): Promise<VideoRow> => {
    const id = String((params as Record<string, unknown>).id ?? '')
    requireScopes(u.scopes, [WATCH_SCOPE])
    await getSession(services.db, u.orgId, id)
    const row = await getVideo(services.db, u.orgId, id)
    if (!row?.stored) throw errors.notFound('session')
    return row
  }

  app.get(`${base}/videos`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const refusal = scopeRefusal(u.scopes, [WATCH_SCOPE])
    if (refusal) return refused(reply, u, refusal)
    const rows = await listVideos(services.db, u.orgId)
    const body = rows.map((v) => html`<tr id="video-${v.sessionId}">
      <td>${v.stored ? html`<a href="${sessions}/${v.sessionId}/video">${v.sessionId}</a>` : v.sessionId} · <a href="${sessions}/${v.sessionId}/inspect" class="inspect">inspect</a></td>
      <td>${v.startedAt}</td><td>${videoState(v)}</td>
      <td>${v.stored ? `${v.format}, ${(v.durationMs / 1000).toFixed(1)} s, ${String(Math.ceil(v.bytes / 1024))} KiB` : ''}</td>
    </tr>`)
    return kit.send(reply, 200, page('Videos', html`
      <h1>Videos</h1>
      <div class="card"><p class="muted">Sessions filmed as video (<code>video: true</code>, or the org's default): what the active tab showed; a filled credential shows as bullets.</p>
        ${rows.length
          ? html`<table><thead><tr><th>Session</th><th>Started</th><th>State</th><th>File</th></tr></thead><tbody>${body}</tbody></table>`
          : html`<p id="no-videos">No videos in ${u.orgName}.</p>`}
      </div>
      <p><a href="${base}/recordings">Recordings</a> · <a href="${sessions}">Live sessions</a></p>`, kit.chrome(u)))
  })

  app.get(`${sessions}/:id/video`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const v = await watchableVideo(u, req.params)
      const file = `${sessions}/${v.sessionId}/video/file`
      return reply.code(200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
        .header('x-frame-options', 'DENY').header('content-security-policy', PLAYER_CSP)
        .send(page(`Video ${v.sessionId}`, html`
      <h1>Video of <code>${v.sessionId}</code></h1>
      <div class="card" id="video-card">
        <video id="video" controls preload="metadata" src="${file}" style="max-width:100%;background:#000" width="${String(v.width)}"></video>
        <p class="muted">${v.format}, ${String(v.fps)} frames a second, ${(v.durationMs / 1000).toFixed(1)} s, ${String(Math.ceil(v.bytes / 1024))} KiB · ${videoState(v)} · ${v.startedAt} – ${v.endedAt ?? ''}</p>
        <p><a href="${file}" download="${v.sessionId}.${v.format}" id="download">Download</a></p>
      </div>
      <p><a href="${base}/videos">All videos</a></p>`, kit.chrome(u)))
    } catch (e) {
      return refused(reply, u, e)
    }
  })

  app.get(`${sessions}/:id/video/file`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const v = await watchableVideo(u, req.params)
      const file = await services.recordings.store.get(v.storageKey)
      if (!file) throw errors.notFound('session')
      return sendVideoFile(req, reply, v.format, file)
    } catch (e) {
      return sendRefusalJson(reply, e)
    }
  })
}
