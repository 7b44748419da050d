// The console's Sessions pages: the org's live sessions, and one session's browser live (a
// screencast relayed by console/live-socket.ts, drawn in an <img>, with its state). "Take
// control" and "Hand back" are CSRF-protected forms; control lives on the session row, so
// every replica refuses the agent's driving tools (409 human_in_control) while a person
// holds it. Needs a role that may drive (sessions:drive).
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import { requireScopes, scopeRefusal } from '../auth/scopes.ts'
import { getSession, listSessions, readJournal, recentJournal, type SessionRow } from '../sessions/store.ts'
import { controlState, handBack, takeControl } from '../sessions/control.ts'
import { closeCdp } from '../sessions/cdp-connections.ts'
import { WATCH_SCOPE } from './live-socket.ts'
import { Html, html, page, theirs } from '../door-kit/html.ts'
import { checkCsrf, csrfToken, type ConsoleUser } from '../door-kit/console-session.ts'
import type { ConsolePageKit } from './reach.ts'
import { sendRefusalJson } from './page-kit.ts'
import { sharesCard, sharesFor } from './share.ts'

/** The live page runs one script of ours and opens one WebSocket to this origin; frames are data: URLs. */
const LIVE_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'"

/** How the live pages send a page and a refusal. */
function livePageKit(services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const list = `${base}/sessions`
  const sendLive = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
      .header('x-frame-options', 'DENY').header('content-security-policy', LIVE_CSP).send(body)
  const refusedPage = (reply: FastifyReply, u: ConsoleUser, e: unknown) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, page('Sessions', html`<p class="error" role="alert">${e.message}</p><p><a href="${list}">All live sessions</a></p>`, kit.chrome(u)))
  }
  const idOf = (params: unknown) => String((params as Record<string, unknown>).id ?? '')


  return { sendLive, refusedPage, idOf }
}

/** The list of live sessions. */
function registerLiveList(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const list = `${base}/sessions`
  const { refusedPage } = livePageKit(services, kit)

  app.get(list, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const refusal = scopeRefusal(u.scopes, [WATCH_SCOPE])
    if (refusal) return refusedPage(reply, u, refusal)
    const rows = await listSessions(services.db, u.orgId, { status: 'live', limit: 200 })
    const holders = await holderEmails(services, u.orgId, rows)
    const body = rows.map((r) => html`<tr id="session-${r.id}">
      <td><a href="${list}/${r.id}">${r.id}</a></td>
      <td>${theirs(r.openedBy.name)}<div class="muted"><code>${r.agentId}</code></div></td>
      <td>${r.browserKind}${r.identityId ? html`<div class="muted">persona <code>${r.identityId}</code></div>` : ''}</td>
      <td class="sandbox">${sandboxLabel(r.sandbox)}</td>
      <td class="control">${r.control === 'human' ? html`a person${r.controlHolder ? html` (${holders.get(r.controlHolder) ?? ''})` : ''}` : 'the agent'}</td>
      <td class="request">${r.humanRequest ? html`<strong>asks for a person:</strong> ${theirs(r.humanRequest.reason)}` : ''}</td>
      <td>${r.liveAt ?? ''}</td>
    </tr>`)
    return kit.send(reply, 200, page('Live sessions', html`
      <h1>Live sessions</h1>
      <div class="card"><p class="muted">Watch a session’s browser live; take control when the agent needs a person (a CAPTCHA, a second factor),
      then hand it back. While you hold control the agent’s driving tools answer <code>409 human_in_control</code>.</p>
        ${rows.length
          ? html`<table><thead><tr><th>Session</th><th>Opened by</th><th>Browser</th><th>Sandbox</th><th>Control</th><th></th><th>Live since</th></tr></thead><tbody>${body}</tbody></table>`
          : html`<p id="no-sessions">No live sessions in ${u.orgName}.</p>`}
      </div>
      <p><a href="${base}/recordings" id="recordings-link">Recordings</a> of sessions started with <code>record: true</code> · <a href="${base}/videos" id="videos-link">Videos</a> of sessions filmed</p>`, kit.chrome(u)))
  })
}

/** One session's live page, and its journal card's refresh. */
function registerLiveSession(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const list = `${base}/sessions`
  const { sendLive, refusedPage, idOf } = livePageKit(services, kit)

  app.get(`${list}/:id`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    let row: SessionRow
    try {
      requireScopes(u.scopes, [WATCH_SCOPE])
      row = await getSession(services.db, u.orgId, idOf(req.params))
    } catch (e) {
      return refusedPage(reply, u, e)
    }
    const state = await controlState(services.db, u.orgId, row.id)
    const csrf = csrfToken(services, u)
    const human = row.control === 'human'
    const mine = human && row.controlHolder === u.userId
    const holder = state?.holderEmail ?? ''
    const shared = row.status === 'live' ? await sharesFor(services, u, row.id) : undefined
    const journal = await recentJournal(services.db, u.orgId, row.id, JOURNAL_ROWS)
    return sendLive(reply, 200, page(`Session ${row.id}`, html`
      <h1>Session <code>${row.id}</code></h1>
      <p><a href="${list}/${row.id}/inspect" id="inspect-link">Inspect it</a>: its calls, network, console and dialogs on one timeline</p>
      <div class="card" id="live" data-ws="${list}/${row.id}/live" data-frames="0" data-state="connecting" data-control="${mine ? 'mine' : row.control}">
        <p>State: <strong id="state">${row.status === 'live' ? 'connecting' : 'ended'}</strong> · <span id="url" class="muted"></span></p>
        ${row.sandbox ? html`<p class="muted" id="sandbox">Sandbox: ${sandboxLabel(row.sandbox)}</p>` : ''}
        <p>Control: <strong id="control">${human ? `a person (${holder})` : 'the agent'}</strong></p>
        ${row.humanRequest ? html`<p class="ok" id="request" role="status">The agent asks for a person: ${theirs(row.humanRequest.reason)}</p>` : ''}
        <form method="post" action="${list}/${row.id}/take" id="take-form" ${new Html(human ? 'hidden' : '')}>
          <input type="hidden" name="csrf" value="${csrf}"><button type="submit" id="take">Take control</button>
        </form>
        <form method="post" action="${list}/${row.id}/hand-back" id="hand-back-form" ${new Html(human ? '' : 'hidden')}>
          <input type="hidden" name="csrf" value="${csrf}"><button type="submit" id="hand-back">Hand back to the agent</button>
        </form>
        <p class="muted">While you hold control, clicks, wheel and keys on the picture go to the browser. Nothing is shown while a credential is being filled.</p>
        <img id="screen" alt="the session’s browser" tabindex="0" draggable="false" style="display:block;width:100%;margin-top:12px;border:1px solid var(--line);background:#eef0f6;min-height:120px;outline:none">
      </div>
      <div class="card"><h2>Tabs</h2><ul id="tabs"><li class="muted">shown once the view is connected</li></ul></div>
      <div class="card" id="journal-card" data-journal="${list}/${row.id}/journal" data-after="${journal.at(-1)?.id ?? '0'}">
        <h2>Journal</h2>
        <p class="muted">What the agent did, newest last (values are never journalled).</p>
        <table><thead><tr><th>When</th><th>Call</th><th>Outcome</th></tr></thead>
          <tbody id="journal">${journal.map(journalRow)}</tbody></table>
      </div>
      ${shared ? sharesCard(base, row.id, shared.csrf, shared.shares) : ''}
      <p><a href="${list}">All live sessions</a></p>
      <script src="${base}/assets/live.js"></script>`, kit.chrome(u)))
  })

  // the journal card's refresh: rows after the newest one the page shows (JSON; the same
  // scope and org checks as the page, and the API's 404 for another org's session)
  app.get(`${list}/:id/journal`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const after = Number((req.query as Record<string, unknown>).after ?? 0)
    try {
      requireScopes(u.scopes, [WATCH_SCOPE])
      if (!Number.isSafeInteger(after) || after < 0) throw errors.invalidRequest('after: a journal row id')
      const row = await getSession(services.db, u.orgId, idOf(req.params))
      const rows = await readJournal(services.db, u.orgId, row.id, { after, limit: JOURNAL_ROWS })
      return reply.code(200).header('cache-control', 'no-store')
        .send({ status: row.status, rows: rows.map((r) => ({ id: r.id, at: r.at, op: r.op, outcome: r.outcome, errorCode: r.errorCode ?? null })) })
    } catch (e) {
      return sendRefusalJson(reply, e)
    }
  })
}

/** Take control, hand back, and the live view script. */
function registerLiveControl(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const list = `${base}/sessions`
  const { refusedPage, idOf } = livePageKit(services, kit)

  const control = (path: 'take' | 'hand-back') => app.post(`${list}/:id/${path}`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!checkCsrf(services, u, body.csrf)) return kit.formTokenInvalid(reply, u)
    const id = idOf(req.params)
    try {
      requireScopes(u.scopes, [WATCH_SCOPE])
      const actor = { orgId: u.orgId, userId: u.userId }
      if (path === 'take') {
        const row = await takeControl(services.db, actor, id)
        // CDP clients this replica relays go now: a script must not drive under the person's hands
        if (row.control === 'human' && row.controlHolder === u.userId) closeCdp(row.id)
      } else {
        await handBack(services.db, actor, id)
      }
    } catch (e) {
      return refusedPage(reply, u, e)
    }
    return reply.redirect(`${list}/${encodeURIComponent(id)}`, 303)
  })
  control('take')
  control('hand-back')

  app.get(`${base}/assets/live.js`, async (_req, reply) =>
    reply.code(200).header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(LIVE_JS))
}

export function registerLivePages(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  registerLiveList(app, services, kit)
  registerLiveSession(app, services, kit)
  registerLiveControl(app, services, kit)
}

/** how many journal rows the live page shows at first, and fetches at most per refresh */
const JOURNAL_ROWS = 50

function journalRow(r: { at: string; op: string; outcome: string; errorCode?: string }): Html {
  return html`<tr><td>${r.at.slice(11, 19)}</td><td><code>${r.op}</code></td><td>${r.outcome}${r.errorCode ? html` <code>${r.errorCode}</code>` : ''}</td></tr>`
}

async function holderEmails(services: Services, orgId: string, rows: SessionRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.map((r) => r.controlHolder).filter((x): x is string => !!x))]
  if (!ids.length) return new Map()
  const r = await services.db.query('select id, email from users where org_id = $1 and id = any($2)', [orgId, ids])
  return new Map(r.rows.map((x) => [x.id as string, x.email as string]))
}

/**
 * The live page's script: draws frames, shows the state, and — only while this person
 * holds control — sends mouse, wheel and key events in viewport coordinates (the picture
 * is scaled to the page; events are scaled back by the frame's size).
 */
const LIVE_JS = `(() => {
  'use strict'
  const root = document.getElementById('live')
  const img = document.getElementById('screen')
  const stateEl = document.getElementById('state')
  const urlEl = document.getElementById('url')
  const controlEl = document.getElementById('control')
  const tabsEl = document.getElementById('tabs')
  const takeForm = document.getElementById('take-form')
  const backForm = document.getElementById('hand-back-form')
  let size = { width: 1280, height: 720 }
  let frames = 0, mine = root.dataset.control === 'mine', acting = false, paused = false, ended = false, open = false, invalid = false
  const show = () => {
    const s = invalid ? 'link not working' : ended ? 'ended' : !open ? 'connecting' : paused ? 'paused' : mine ? 'you have control' : acting ? 'agent acting' : 'live'
    stateEl.textContent = s === 'paused' ? 'paused (a credential is being filled)' : s
    root.dataset.state = s
  }
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + root.dataset.ws)
  // a share link's token lives in the fragment (never sent in a request line): it goes as the first message
  ws.onopen = () => { open = true; if (root.dataset.share) ws.send(JSON.stringify({ type: 'auth', token: location.hash.slice(1) })); show() }
  ws.onclose = (ev) => { ended = true; if (ev.code === 4404) { invalid = true; stateEl.title = ev.reason } show() }
  ws.onmessage = (m) => {
    let e
    try { e = JSON.parse(m.data) } catch { return }
    if (e.type === 'frame') {
      img.src = 'data:image/jpeg;base64,' + e.jpeg
      size = { width: e.width, height: e.height }
      root.dataset.frames = String(++frames)
    } else if (e.type === 'page') {
      urlEl.textContent = e.url
      acting = e.acting
      if (tabsEl && Array.isArray(e.tabs)) {
        tabsEl.replaceChildren(...e.tabs.map((t) => {
          const li = document.createElement('li')
          li.dataset.tab = t.id
          li.textContent = t.url || 'about:blank'
          if (t.active) { li.className = 'active'; li.append(' (active)') }
          return li
        }))
      }
    } else if (e.type === 'paused') paused = true
    else if (e.type === 'resumed') paused = false
    else if (e.type === 'control') {
      mine = e.mine
      controlEl.textContent = e.control === 'human' ? 'a person' + (e.holder ? ' (' + e.holder + ')' : '') + (e.mine ? ' — you' : '') : 'the agent'
      takeForm.hidden = e.control === 'human'
      backForm.hidden = e.control !== 'human'
      root.dataset.control = e.mine ? 'mine' : e.control
    } else if (e.type === 'ended') ended = true
    show()
  }
  // the journal card (not on a share link's page): new rows every two seconds while the view is open
  const journalCard = document.getElementById('journal-card')
  if (journalCard) {
    const body = document.getElementById('journal')
    const refresh = async () => {
      try {
        const res = await fetch(journalCard.dataset.journal + '?after=' + encodeURIComponent(journalCard.dataset.after), { credentials: 'same-origin', headers: { accept: 'application/json' } })
        if (!res.ok) return
        const { rows } = await res.json()
        for (const r of rows) {
          const tr = document.createElement('tr')
          const cells = [r.at.slice(11, 19), r.op, r.outcome + (r.errorCode ? ' ' + r.errorCode : '')]
          for (const c of cells) { const td = document.createElement('td'); td.textContent = c; tr.append(td) }
          body.append(tr)
          journalCard.dataset.after = r.id
        }
      } catch { /* the next refresh tries again */ }
    }
    const timer = setInterval(() => { if (ended) clearInterval(timer); void refresh() }, 2000)
  }
  const send = (o) => { if (mine && ws.readyState === 1) ws.send(JSON.stringify(o)) }
  const point = (ev) => {
    const r = img.getBoundingClientRect()
    const x = (ev.clientX - r.left) * size.width / Math.max(1, r.width)
    const y = (ev.clientY - r.top) * size.height / Math.max(1, r.height)
    return { x: Math.max(0, Math.round(x)), y: Math.max(0, Math.round(y)) }
  }
  const mods = (ev) => (ev.altKey ? 1 : 0) | (ev.ctrlKey ? 2 : 0) | (ev.metaKey ? 4 : 0) | (ev.shiftKey ? 8 : 0)
  const buttons = ['left', 'middle', 'right']
  img.addEventListener('mousedown', (ev) => {
    if (!mine) return
    ev.preventDefault()
    const at = point(ev)
    // keys go where the picture has focus; focusing must not scroll the picture under the pointer
    img.focus({ preventScroll: true })
    send({ type: 'mouse', event: 'mousePressed', ...at, button: buttons[ev.button] || 'left', clickCount: Math.min(3, ev.detail || 1), modifiers: mods(ev) })
  })
  img.addEventListener('mouseup', (ev) => {
    if (!mine) return
    send({ type: 'mouse', event: 'mouseReleased', ...point(ev), button: buttons[ev.button] || 'left', clickCount: Math.min(3, ev.detail || 1), modifiers: mods(ev) })
  })
  let moved = 0
  img.addEventListener('mousemove', (ev) => {
    const now = Date.now()
    if (!mine || now - moved < 30) return
    moved = now
    send({ type: 'mouse', event: 'mouseMoved', ...point(ev), modifiers: mods(ev) })
  })
  img.addEventListener('wheel', (ev) => {
    if (!mine) return
    ev.preventDefault()
    send({ type: 'wheel', ...point(ev), deltaX: ev.deltaX, deltaY: ev.deltaY, modifiers: mods(ev) })
  }, { passive: false })
  img.addEventListener('contextmenu', (ev) => { if (mine) ev.preventDefault() })
  const key = (event) => (ev) => {
    if (!mine) return
    ev.preventDefault()
    const plain = !ev.ctrlKey && !ev.metaKey && !ev.altKey
    const text = event === 'keyDown' && plain ? (ev.key.length <= 2 && ev.key.length > 0 && ev.key !== 'Dead' ? ev.key : ev.key === 'Enter' ? '\\r' : undefined) : undefined
    send({ type: 'key', event, key: ev.key.slice(0, 32), code: ev.code.slice(0, 32), text, keyCode: ev.keyCode & 255, modifiers: mods(ev) })
  }
  img.addEventListener('keydown', key('keyDown'))
  img.addEventListener('keyup', key('keyUp'))
  show()
})()
`

/** what a person reads for a session's sandbox: "none" stands out, since it means an operator turned it off */
function sandboxLabel(sandbox: SessionRow['sandbox']): ReturnType<typeof html> | string {
  if (!sandbox) return ''
  return sandbox === 'none' ? html`<strong title="Chromium's sandbox is turned off for these browsers">none</strong>` : sandbox
}
