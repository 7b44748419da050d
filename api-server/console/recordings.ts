// The console's Recordings pages: the org's recorded sessions, and one
// recording replayed with rrweb's Replayer (its UMD bundle, served from node_modules as a
// static asset). The replay draws the recorded DOM into a sandboxed iframe without
// scripts; the page's CSP lets it fetch nothing but this origin (no recorded image, font
// or stylesheet is fetched from the sites the session visited). Reading recordings needs
// the same role as watching a session live (sessions:drive).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import { requireScopes, scopeRefusal } from '../auth/scopes.ts'
import { getSession } from '../sessions/store.ts'
import { WATCH_SCOPE } from './live-socket.ts'
import { getRecording, listRecordings } from '../recordings/service.ts'
import { html, page } from '../door-kit/html.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { sendRefusalJson, type ConsolePageKit } from './page-kit.ts'

const REPLAY_CSP = "default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'self'; img-src data:; connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'"

let assets: { js: string; css: string } | undefined
function rrwebAssets(): { js: string; css: string } {
  if (assets) return assets
  const dist = dirname(createRequire(import.meta.url).resolve('rrweb'))
  assets = { js: readFileSync(join(dist, 'rrweb.umd.min.cjs'), 'utf8'), css: readFileSync(join(dist, 'style.min.css'), 'utf8') }
  return assets
}

/** Who may watch which recording, and how a refusal reads. */
function recordingChecks(services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const refused = (reply: FastifyReply, u: ConsoleUser, e: unknown) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, page('Recordings', html`<p class="error" role="alert">${e.message}</p><p><a href="${base}/recordings">All recordings</a></p>`, kit.chrome(u)))
  }
  const idOf = (params: unknown) => String((params as Record<string, unknown>).id ?? '')
  /** A session this person may watch, named in the path: the role's scope, then the one 404 for unknown and foreign ids. */
  const watchableId = async (u: ConsoleUser, params: unknown): Promise<string> => {
    const id = idOf(params)
    requireScopes(u.scopes, [WATCH_SCOPE])
    await getSession(services.db, u.orgId, id)
    return id
  }
  return { refused, watchableId }
}

export function registerRecordingPages(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const sessions = `${base}/sessions`
  const recordings = services.recordings
  const { refused, watchableId } = recordingChecks(services, kit)

  app.get(`${base}/recordings`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const refusal = scopeRefusal(u.scopes, [WATCH_SCOPE])
    if (refusal) return refused(reply, u, refusal)
    const rows = await listRecordings(services.db, u.orgId)
    const body = rows.map((r) => html`<tr id="recording-${r.sessionId}">
      <td><a href="${sessions}/${r.sessionId}/recording">${r.sessionId}</a> · <a href="${sessions}/${r.sessionId}/inspect" class="inspect">inspect</a></td>
      <td>${r.startedAt}</td><td>${r.endedAt ?? 'recording'}</td>
      <td>${String(r.events)} events · ${String(Math.ceil(r.bytes / 1024))} KiB</td>
    </tr>`)
    return kit.send(reply, 200, page('Recordings', html`
      <h1>Recordings</h1>
      <div class="card"><p class="muted">Sessions started with <code>record: true</code>, replayed as their pages were: every typed value shows as asterisks.</p>
        ${rows.length
          ? html`<table><thead><tr><th>Session</th><th>Started</th><th>Ended</th><th>Size</th></tr></thead><tbody>${body}</tbody></table>`
          : html`<p id="no-recordings">No recordings in ${u.orgName}.</p>`}
      </div>
      <p><a href="${sessions}">Live sessions</a></p>`, kit.chrome(u)))
  })

  app.get(`${sessions}/:id/recording`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const id = await watchableId(u, req.params)
      const row = await getRecording(services.db, u.orgId, id)
      if (!row) throw errors.notFound('session')
      const speed = Math.min(64, Math.max(1, Number((req.query as Record<string, unknown>).speed) || 1))
      return reply.code(200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
        .header('x-frame-options', 'DENY').header('content-security-policy', REPLAY_CSP)
        .send(page(`Recording ${row.sessionId}`, html`
      <link rel="stylesheet" href="${base}/assets/rrweb.css">
      <h1>Recording of <code>${row.sessionId}</code></h1>
      <div class="card" id="replay" data-events="${sessions}/${row.sessionId}/recording/events.json" data-speed="${String(speed)}" data-state="loading">
        <p>State: <strong id="status">loading</strong> · <span class="muted">${row.startedAt} – ${row.endedAt ?? 'still recording'}</span>
          <button type="button" id="toggle" hidden>Pause</button></p>
        <div id="player" style="position:relative;overflow:auto;border:1px solid var(--line);background:#fff"></div>
      </div>
      <p><a href="${base}/recordings">All recordings</a></p>
      <script src="${base}/assets/rrweb.js"></script>
      <script src="${base}/assets/replay.js"></script>`, kit.chrome(u)))
    } catch (e) {
      return refused(reply, u, e)
    }
  })

  app.get(`${sessions}/:id/recording/events.json`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const id = await watchableId(u, req.params)
      const { events } = await recordings.timeline({ orgId: u.orgId, sessionId: id })
      return reply.code(200).header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store').send(JSON.stringify({ events }))
    } catch (e) {
      return sendRefusalJson(reply, e)
    }
  })

  const asset = (path: string, type: string, body: () => string) => app.get(`${base}/assets/${path}`, async (_req, reply) =>
    reply.code(200).header('content-type', `${type}; charset=utf-8`).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(body()))
  asset('rrweb.js', 'text/javascript', () => rrwebAssets().js)
  asset('rrweb.css', 'text/css', () => rrwebAssets().css)
  asset('replay.js', 'text/javascript', () => REPLAY_JS)
}

/** The replay page's script: fetch the timeline, play it, say when it finished. */
const REPLAY_JS = `(() => {
  'use strict'
  const root = document.getElementById('replay')
  const status = document.getElementById('status')
  const toggle = document.getElementById('toggle')
  const say = (state, text) => { root.dataset.state = state; status.textContent = text }
  fetch(root.dataset.events, { credentials: 'same-origin' }).then((r) => r.ok ? r.json() : Promise.reject(new Error(String(r.status)))).then(({ events }) => {
    if (!Array.isArray(events) || events.length < 2) return say('empty', 'nothing was recorded')
    root.dataset.count = String(events.length)
    const replayer = new rrweb.Replayer(events, { root: document.getElementById('player'), speed: Number(root.dataset.speed) || 1, mouseTail: false, showWarning: false })
    let playing = true
    replayer.on('finish', () => { playing = false; toggle.hidden = true; say('finished', 'finished') })
    toggle.hidden = false
    toggle.addEventListener('click', () => {
      if (playing) { replayer.pause(); toggle.textContent = 'Play'; say('paused', 'paused') }
      else { replayer.play(replayer.getCurrentTime()); toggle.textContent = 'Pause'; say('playing', 'playing') }
      playing = !playing
    })
    say('playing', 'playing')
    replayer.play()
  }).catch(() => say('error', 'could not load the recording'))
})()
`
