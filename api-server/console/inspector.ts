// The console's session inspector: one page per session, live or ended, with one timeline
// (calls from the journal, navigations, requests, console, dialogs, a person's take-over)
// beside its video or recording, in step: a click on an event moves the replay there, and
// the event the replay has reached is marked as it plays. Every line comes from reads that
// are already value-free and echo-guarded, drawn as text. Needs sessions:drive; another
// org's and unknown ids are the one 404. Design: docs/sessions.md#the-session-inspector
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { isApiError } from '../../contracts/errors.ts'
import { requireScopes } from '../auth/scopes.ts'
import { getSession, readJournal, type SessionRow } from '../sessions/store.ts'
import { WATCH_SCOPE } from './live-socket.ts'
import { getRecording } from '../recordings/service.ts'
import { getVideo } from '../recordings/video.ts'
import { sessionTimeline, TIMELINE_KINDS } from '../recordings/trail.ts'
import { Html, html, page } from '../door-kit/html.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { sendRefusalJson, type ConsolePageKit } from './page-kit.ts'

/** one script of ours, rrweb's, media and JSON from this origin; the replay's iframe draws without scripts */
const INSPECTOR_CSP = "default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'self'; img-src data:; media-src 'self'; connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'"
/** the most journal rows one timeline shows (a session's newest calls past this are in GET …/journal) */
const TIMELINE_CALLS = 5_000

const LABELS: Record<(typeof TIMELINE_KINDS)[number], string> = {
  call: 'Calls', navigation: 'Navigations', request: 'Requests', console: 'Console', dialog: 'Dialogs', person: 'A person',
}

const STYLE = `main{max-width:1280px}
.inspector{display:grid;grid-template-columns:minmax(0,1.1fr) minmax(0,1fr);gap:20px;align-items:start}
@media (max-width:900px){.inspector{grid-template-columns:minmax(0,1fr)}}
#replay-box{position:relative;overflow:hidden;background:#eef0f6;border:1px solid var(--line);min-height:120px}
#replay-box video{display:block;width:100%;background:#000}
#kinds{border:0;padding:0;margin:0 0 10px;display:flex;flex-wrap:wrap;gap:4px 14px}#kinds label{font-weight:400;margin:0;display:flex;gap:6px;align-items:center}
#timeline{list-style:none;margin:0;padding:0;max-height:70vh;overflow:auto;border-top:1px solid var(--line)}
#timeline li{border-bottom:1px solid var(--line)}
#timeline button{all:unset;box-sizing:border-box;display:grid;grid-template-columns:4.5em 6.5em minmax(0,1fr);gap:2px 8px;width:100%;padding:6px 4px;cursor:pointer;font-size:13px}
#timeline button:hover,#timeline button:focus-visible{background:#f1f3fa;outline:2px solid var(--accent);outline-offset:-2px}
#timeline li[aria-current=true] button{background:#e7ecff}
#timeline .when{color:var(--muted);font-variant-numeric:tabular-nums}#timeline .kind{font-weight:600}
#timeline .title{overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
#timeline .detail{grid-column:3;color:var(--muted);overflow-wrap:anywhere}
#timeline .error .title{color:var(--warn)}
.k-call{color:#3b5bdb}.k-navigation{color:#2b8a3e}.k-request{color:#5d6679}.k-console{color:#9c36b5}.k-dialog{color:#e8590c}.k-person{color:#c92a2a}`

export function registerInspectorPage(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const sessions = `${base}/sessions`
  const refused = (reply: FastifyReply, u: ConsoleUser, e: unknown) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, page('Inspector', html`<p class="error" role="alert">${e.message}</p><p><a href="${sessions}">Live sessions</a></p>`, kit.chrome(u)))
  }
  /** a session this person may inspect: the role's scope, then the one 404 for unknown and foreign ids */
  const inspectable = async (u: ConsoleUser, params: unknown): Promise<SessionRow> => {
    requireScopes(u.scopes, [WATCH_SCOPE])
    return getSession(services.db, u.orgId, String((params as Record<string, unknown>).id ?? ''))
  }

  app.get(`${sessions}/:id/inspect`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const row = await inspectable(u, req.params)
      const live = row.status === 'live'
      return reply.code(200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
        .header('x-frame-options', 'DENY').header('content-security-policy', INSPECTOR_CSP)
        .send(page(`Inspector ${row.id}`, html`
      <style>${new Html(STYLE)}</style>
      <link rel="stylesheet" href="${base}/assets/rrweb.css">
      <h1>Inspector · <code>${row.id}</code></h1>
      <p class="muted">${row.status} · opened ${row.createdAt}${row.endedAt ? ` · ended ${row.endedAt}` : ''}
        ${live ? html` · <a href="${sessions}/${row.id}">watch it live</a>` : ''}</p>
      <div class="inspector" id="inspector" data-timeline="${sessions}/${row.id}/inspect/timeline.json" data-live="${live ? 'yes' : 'no'}" data-state="loading">
        <section class="card" aria-labelledby="replay-h"><h2 id="replay-h">Replay</h2>
          <div id="replay-box"></div>
          <p id="replay-note" class="muted">loading…</p>
        </section>
        <section class="card" aria-labelledby="timeline-h"><h2 id="timeline-h">Timeline</h2>
          <p class="muted" id="trail-note"></p>
          <fieldset id="kinds"><legend class="muted" style="padding:0;margin-bottom:4px">Show</legend>
            ${TIMELINE_KINDS.map((k) => html`<label><input type="checkbox" name="kind" value="${k}" checked> <span class="k-${k}">${LABELS[k]}</span> <span class="muted" id="count-${k}"></span></label>`)}
          </fieldset>
          <ol id="timeline"></ol>
        </section>
      </div>
      <p><a href="${sessions}">Live sessions</a> · <a href="${base}/recordings">Recordings</a> · <a href="${base}/videos">Videos</a></p>
      <script src="${base}/assets/rrweb.js"></script>
      <script src="${base}/assets/inspector.js"></script>`, kit.chrome(u)))
    } catch (e) {
      return refused(reply, u, e)
    }
  })

  app.get(`${sessions}/:id/inspect/timeline.json`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    try {
      const row = await inspectable(u, req.params)
      const live = row.status === 'live'
      const [journal, trail, video, recording] = await Promise.all([
        readJournal(services.db, u.orgId, row.id, { limit: TIMELINE_CALLS }),
        services.recordings.trail({ orgId: u.orgId, sessionId: row.id, live }),
        getVideo(services.db, u.orgId, row.id),
        getRecording(services.db, u.orgId, row.id),
      ])
      // the video when one was stored (what the person saw), else the recording (the pages' DOM)
      const replay = video?.stored
        ? { kind: 'video', src: `${sessions}/${row.id}/video/file`, startedAt: trail?.videoStartedAt ?? Date.parse(video.startedAt) }
        : recording
          ? { kind: 'recording', src: `${sessions}/${row.id}/recording/events.json`, startedAt: null }
          : null
      const trailState = trail ? (live ? 'live' : 'kept') : live ? 'unavailable' : 'none'
      return reply.code(200).header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store').send(JSON.stringify({
        id: row.id,
        status: row.status,
        origin: Date.parse(row.createdAt),
        replay,
        filming: Boolean(video && !video.stored && !video.lost),
        trail: trailState,
        networkDropped: trail?.networkDropped ?? 0,
        // a session with more calls shows its first TIMELINE_CALLS; GET /v1/sessions/:id/journal pages through all
        callsCut: journal.length === TIMELINE_CALLS ? TIMELINE_CALLS : 0,
        events: sessionTimeline(journal, trail),
      }))
    } catch (e) {
      return sendRefusalJson(reply, e)
    }
  })

  app.get(`${base}/assets/inspector.js`, async (_req, reply) =>
    reply.code(200).header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(INSPECTOR_JS))
}

/**
 * The inspector's script. Draws the timeline (text only), loads the replay, and keeps the two
 * in step: a click on an event seeks the replay to it; while the replay plays, the event it
 * has reached is marked (aria-current). A live session's timeline is read again every 5 s.
 * root.dataset.replayAt is the replay's position in ms after a seek (the tests read it).
 */
const INSPECTOR_JS = `(() => {
  'use strict'
  const root = document.getElementById('inspector')
  const box = document.getElementById('replay-box')
  const note = document.getElementById('replay-note')
  const list = document.getElementById('timeline')
  const trailNote = document.getElementById('trail-note')
  const kinds = Array.from(document.querySelectorAll('#kinds input'))
  let data = null
  let player = null // { seek(ms since its start), now() → ms since its start, start: epoch ms, playing() }
  const clock = (ms) => { const s = Math.max(0, ms) / 1000; const m = Math.floor(s / 60); return m + ':' + (s - m * 60).toFixed(1).padStart(4, '0') }
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e }
  const shown = () => new Set(kinds.filter((k) => k.checked).map((k) => k.value))

  function draw() {
    const keep = shown()
    const counts = {}
    list.replaceChildren(...data.events.map((e, i) => {
      counts[e.kind] = (counts[e.kind] || 0) + 1
      const li = el('li', 'k-' + e.kind + (e.outcome === 'error' ? ' error' : ''))
      li.dataset.kind = e.kind
      li.dataset.at = String(e.at)
      li.dataset.index = String(i)
      li.hidden = !keep.has(e.kind)
      const b = el('button')
      b.type = 'button'
      b.title = new Date(e.at).toISOString()
      const tail = [e.detail, e.durationMs === null ? '' : e.durationMs + ' ms', e.outcome === 'error' ? 'failed' : ''].filter(Boolean).join(' · ')
      b.append(el('span', 'when', '+' + clock(e.at - data.origin)), el('span', 'kind k-' + e.kind, e.kind), el('span', 'title', e.title), el('span', 'detail', tail))
      b.addEventListener('click', () => jump(li, e))
      li.append(b)
      return li
    }))
    for (const k of kinds) document.getElementById('count-' + k.value).textContent = '(' + (counts[k.value] || 0) + ')'
    const notes = { live: 'Network and console read from the live browser.', kept: 'Network and console as kept when the session ended.',
      none: 'Only the calls: network and console are kept for sessions recorded or filmed.', unavailable: 'Only the calls: the browser did not answer for its network and console.' }
    trailNote.textContent = notes[data.trail] + (data.networkDropped ? ' The oldest ' + data.networkDropped + ' requests were dropped by the browser’s log.' : '')
      + (data.callsCut ? ' Only the first ' + data.callsCut + ' calls are shown (the journal, GET /v1/sessions/:id/journal, has them all).' : '')
    root.dataset.events = String(data.events.length)
    // a live timeline read again keeps the event a person chose
    if (root.dataset.selected) mark(list.children[Number(root.dataset.selected)] || null)
  }

  function mark(li) {
    for (const c of list.querySelectorAll('li[aria-current]')) c.removeAttribute('aria-current')
    if (!li) return
    li.setAttribute('aria-current', 'true')
    // keep it in view inside the list only: the page itself does not jump
    const top = li.offsetTop - list.offsetTop
    if (top < list.scrollTop || top + li.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = Math.max(0, top - list.clientHeight / 3)
  }

  function jump(li, e) {
    mark(li)
    root.dataset.selected = li.dataset.index
    if (!player) return
    const at = Math.max(0, e.at - player.start)
    player.seek(at)
    root.dataset.replayAt = String(Math.round(at))
  }

  // while the replay plays, mark the newest shown event it has reached
  function follow() {
    if (!player || !player.playing() || !data) return
    const now = player.start + player.now()
    let last = null
    for (const li of list.children) { if (li.hidden) continue; if (Number(li.dataset.at) <= now) last = li; else break }
    if (last && last.getAttribute('aria-current') !== 'true') mark(last)
  }
  setInterval(follow, 250)

  function videoPlayer(r) {
    const v = document.createElement('video')
    v.id = 'replay-video'
    v.controls = true
    v.preload = 'auto'
    v.src = r.src
    box.replaceChildren(v)
    note.textContent = 'The session’s video. Click an event to go there.'
    return { start: r.startedAt, seek: (ms) => { v.currentTime = ms / 1000 }, now: () => v.currentTime * 1000, playing: () => !v.paused }
  }

  async function recordingPlayer(r) {
    const res = await fetch(r.src, { credentials: 'same-origin' })
    if (!res.ok) throw new Error(String(res.status))
    const { events } = await res.json()
    if (!Array.isArray(events) || events.length < 2) { note.textContent = 'Nothing was recorded yet.'; return null }
    const holder = el('div')
    holder.id = 'replay-player'
    box.replaceChildren(holder)
    const replayer = new rrweb.Replayer(events, { root: holder, mouseTail: false, showWarning: false })
    // the recorded page is drawn at its own size: scale it to the column
    const fit = () => {
      const frame = holder.querySelector('iframe')
      const wrap = holder.querySelector('.replayer-wrapper')
      if (!frame || !wrap || !frame.width) return
      const s = Math.min(1, box.clientWidth / Number(frame.width))
      wrap.style.transformOrigin = '0 0'
      wrap.style.transform = 'scale(' + s + ')'
      box.style.height = Math.ceil(Number(frame.height) * s) + 'px'
    }
    replayer.on('resize', fit)
    window.addEventListener('resize', fit)
    let playing = false
    replayer.on('finish', () => { playing = false })
    replayer.pause(0)
    fit()
    const toggle = el('button', '', 'Play')
    toggle.type = 'button'
    toggle.id = 'replay-toggle'
    toggle.addEventListener('click', () => {
      if (playing) { replayer.pause(); toggle.textContent = 'Play' } else { replayer.play(replayer.getCurrentTime()); toggle.textContent = 'Pause' }
      playing = !playing
    })
    note.replaceChildren(toggle, document.createTextNode(' The session’s recording (its pages’ DOM; typed values as asterisks). Click an event to go there.'))
    return {
      start: events[0].timestamp,
      seek: (ms) => { if (playing) replayer.play(ms); else replayer.pause(ms) },
      now: () => replayer.getCurrentTime(),
      playing: () => playing,
    }
  }

  async function load(first) {
    const res = await fetch(root.dataset.timeline, { credentials: 'same-origin' })
    if (!res.ok) throw new Error(String(res.status))
    data = await res.json()
    draw()
    if (first) {
      const r = data.replay
      if (r && r.kind === 'video') player = videoPlayer(r)
      else if (r && r.kind === 'recording') player = await recordingPlayer(r)
      else note.textContent = data.filming ? 'Its video is being filmed: it plays here once the session ends.' : 'This session was neither recorded nor filmed: the timeline is all there is.'
      root.dataset.replay = player ? r.kind : 'none'
    }
    root.dataset.state = 'ready'
  }

  for (const k of kinds) k.addEventListener('change', () => { const keep = shown(); for (const li of list.children) li.hidden = !keep.has(li.dataset.kind) })
  load(true).catch(() => { root.dataset.state = 'error'; note.textContent = 'Could not load the session’s timeline.' })
  // a refresh that fails leaves the timeline as it was read; the next one, 5 s on, tries again
  if (root.dataset.live === 'yes') setInterval(() => { if (root.dataset.state === 'ready') load(false).catch(() => {}) }, 5000)
})()
`
