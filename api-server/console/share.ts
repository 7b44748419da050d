// Share links for one session's live view: made and revoked on the session's
// console page by a person who may watch; opened by anyone holding the link, view only.
// The link is `<console>/share#njs_…` — the token in the fragment, so it is never sent in a
// request line a server or proxy logs; the page's script hands it to the viewer WebSocket
// (api-server/console/live-socket.ts) as its first message. The link is shown once, when it is made.
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { errors, isApiError } from '../../contracts/errors.ts'
import { requireScopes } from '../auth/scopes.ts'
import { getSession } from '../sessions/store.ts'
import { activeShares, createShare, revokeShare, SHARE_TTL_MINUTES, type ShareRow } from '../sessions/shares.ts'
import { WATCH_SCOPE } from './live-socket.ts'
import { Html, html, page } from '../door-kit/html.ts'
import { checkCsrf, csrfToken, type ConsoleUser } from '../door-kit/console-session.ts'
import type { ConsolePageKit } from './page-kit.ts'

/** the share viewer runs our one script and opens one WebSocket to this origin */
const SHARE_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; img-src data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'"

const ttlLabel = (m: number) => (m < 60 ? `${m} minutes` : m === 60 ? '1 hour' : `${m / 60} hours`)

/** The session page's card: make a link, and the links that still work with their revoke buttons. */
export function sharesCard(base: string, sessionId: string, csrf: string, shares: ShareRow[]): Html {
  const action = `${base}/sessions/${sessionId}/shares`
  return html`<div class="card" id="shares">
    <h2>Share a view-only link</h2>
    <p class="muted">Anyone with the link can watch this session — never take control — until it expires or you revoke it. The link is shown once.</p>
    <form method="post" action="${action}" id="share-form">
      <input type="hidden" name="csrf" value="${csrf}">
      <label>Expires after <select name="ttl" id="share-ttl">${SHARE_TTL_MINUTES.map((m) => html`<option value="${m}"${new Html(m === 60 ? ' selected' : '')}>${ttlLabel(m)}</option>`)}</select></label>
      <button type="submit" id="share-create">Make a link</button>
    </form>
    ${shares.length
      ? html`<table><thead><tr><th>Link</th><th>Made by</th><th>Expires</th><th></th></tr></thead><tbody>${shares.map((s) => html`<tr id="share-${s.id}">
          <td><code>${s.id}</code></td><td>${s.createdBy}</td><td>${s.expiresAt}</td>
          <td><form method="post" action="${action}/${s.id}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="revoke">Revoke</button></form></td>
        </tr>`)}</tbody></table>`
      : html`<p class="muted" id="no-shares">No working links.</p>`}
  </div>`
}

export function registerSharePages(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const list = `${base}/sessions`
  const idOf = (params: unknown, key = 'id') => String((params as Record<string, unknown>)[key] ?? '')
  const refused = (reply: FastifyReply, u: ConsoleUser, e: unknown) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, page('Share a session', html`<p class="error" role="alert">${e.message}</p><p><a href="${list}">All live sessions</a></p>`, kit.chrome(u)))
  }

  app.post(`${list}/:id/shares`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!checkCsrf(services, u, body.csrf)) return kit.formTokenInvalid(reply, u)
    let made: { id: string; token: string; expiresAt: string }
    let sessionId: string
    try {
      requireScopes(u.scopes, [WATCH_SCOPE])
      const ttl = Number(body.ttl)
      if (!(SHARE_TTL_MINUTES as readonly number[]).includes(ttl)) throw errors.invalidRequest(`ttl: one of ${SHARE_TTL_MINUTES.join(', ')} minutes`)
      const row = await getSession(services.db, u.orgId, idOf(req.params))
      if (row.status !== 'live') throw errors.invalidRequest('only a live session can be shared')
      sessionId = row.id
      made = await createShare(services.db, { orgId: u.orgId, sessionId: row.id, userId: u.userId, ttlMinutes: ttl, now: services.now() })
    } catch (e) {
      return refused(reply, u, e)
    }
    const link = `${services.config.baseUrl}${base}/share#${made.token}`
    return kit.send(reply, 201, page('Share link made', html`
      <h1>Share link made</h1>
      <div class="card">
        <p>Anyone with this link can watch session <code>${sessionId}</code> until ${made.expiresAt}. Copy it now: it is not shown again.</p>
        <p><input id="share-link" readonly value="${link}" style="width:100%"></p>
        <p><a href="${list}/${sessionId}">Back to the session</a></p>
      </div>`, kit.chrome(u)))
  })

  app.post(`${list}/:id/shares/:shareId/revoke`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!checkCsrf(services, u, body.csrf)) return kit.formTokenInvalid(reply, u)
    const sessionId = idOf(req.params)
    try {
      requireScopes(u.scopes, [WATCH_SCOPE])
      await getSession(services.db, u.orgId, sessionId)
      const revoked = await revokeShare(services.db, { orgId: u.orgId, sessionId, shareId: idOf(req.params, 'shareId'), userId: u.userId, now: services.now() })
      if (!revoked) throw errors.notFound('share link')
    } catch (e) {
      return refused(reply, u, e)
    }
    return reply.redirect(`${list}/${encodeURIComponent(sessionId)}`, 303)
  })

  // the viewer: no sign-in, no chrome, view only; the token stays in the fragment
  app.get(`${base}/share`, async (_req, reply) =>
    reply.code(200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store')
      .header('x-frame-options', 'DENY').header('referrer-policy', 'no-referrer').header('content-security-policy', SHARE_CSP)
      .send(page('A shared session', html`
        <h1>A shared session</h1>
        <div class="card" id="live" data-ws="${base}/share/live" data-share="1" data-frames="0" data-state="connecting" data-control="agent">
          <p>State: <strong id="state">connecting</strong> · <span id="url" class="muted"></span></p>
          <p class="muted">View only. Nothing is shown while a credential is being filled.</p>
          <img id="screen" alt="the session’s browser" draggable="false" style="display:block;width:100%;margin-top:12px;border:1px solid var(--line);background:#eef0f6;min-height:120px">
        </div>
        <script src="${base}/assets/live.js"></script>`)))
}

/** the share links card's data for the session page */
export async function sharesFor(services: Services, u: ConsoleUser, sessionId: string): Promise<{ csrf: string; shares: ShareRow[] }> {
  return { csrf: csrfToken(services, u), shares: await activeShares(services.db, u.orgId, sessionId, services.now()) }
}
