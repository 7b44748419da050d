// The console's Local reach page: the org's reach grants, a form to grant an agent reach
// (to one network, or the right to create its own with local_reach_ensure) and a revoke
// button per live grant. Every form carries the session's CSRF token; granting and
// revoking run the REST operations themselves (POST /v1/local-reach/grants …) as the
// signed-in person: networks:write (owners and admins; members see the list only), and
// the same checks, in the same order and words.
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Services } from '../services.ts'
import { isApiError } from '../../contracts/errors.ts'
import { networkReachGrantCreate, networkReachGrantRevoke } from '../operations/networks/index.ts'
import { listReach } from '../networks/reach.ts'
import { listNetworks } from '../networks/store.ts'
import { Html, html, page, theirs } from '../door-kit/html.ts'
import { revealHidden } from '../../contracts/person-text.ts'
import { checkCsrf, csrfToken, type ConsoleUser } from '../door-kit/console-session.ts'
import { runOp, type ConsolePageKit } from './page-kit.ts'

export type { ConsolePageKit } from './page-kit.ts'

const GRANTING_SCOPE = 'networks:write'

/** The Local reach page and how it shows a refusal. */
function reachViews(services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const path = `${base}/reach`

  const reachPage = async (u: ConsoleUser, o: { notice?: string; error?: string; agent?: string } = {}) => {
    const { db } = services
    const agents = (await db.query('select id, name, kind from agents where org_id = $1 order by is_default desc, created_at, name', [u.orgId])).rows as { id: string; name: string; kind: string }[]
    const nets = await listNetworks(db, u.orgId)
    const grants = await listReach(services, { orgId: u.orgId })
    const agentName = new Map(agents.map((a) => [a.id, a.name]))
    const netName = new Map(nets.map((n) => [n.id, n.name]))
    const csrf = csrfToken(services, u)
    const canGrant = u.scopes.has(GRANTING_SCOPE)
    const rows = grants.map((g) => html`<tr id="grant-${g.id}">
      <td>${theirs(agentName.get(g.agentId) ?? g.agentId)}<div class="muted"><code>${g.agentId}</code></div></td>
      <td>${g.kind === 'seed' ? 'may create its own network' : 'one network'}</td>
      <td>${g.networkId ? html`${theirs(netName.get(g.networkId) ?? '')} <div class="muted"><code>${g.networkId}</code></div>` : '—'}</td>
      <td class="state">${g.state}</td>
      <td>${g.state === 'live' && canGrant
        ? html`<form method="post" action="${path}/${g.id}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="revoke">Revoke</button></form>`
        : ''}</td>
    </tr>`)
    return page('Local reach', html`
      <h1>Local reach</h1>
      ${o.notice ? html`<div class="card" role="status"><p class="ok">${o.notice}</p></div>` : ''}
      <div class="card" id="grant">
        <h2>Grant an agent local reach</h2>
        <p class="muted">An agent signed in with OAuth never holds <code>networks:write</code>. A reach grant lets it call
        <code>local_reach_ensure</code> anyway: on one network of the org, or on a network it creates for itself (once).
        Revoking stops that; the network, its hosts and its daemons stay.</p>
        ${o.error ? html`<p class="error" role="alert">${o.error}</p>` : ''}
        ${canGrant ? '' : html`<p class="muted">Your role (${u.role}) cannot grant reach: it needs <code>${GRANTING_SCOPE}</code>.</p>`}
        <form method="post" action="${path}">
          <input type="hidden" name="csrf" value="${csrf}">
          <label for="agent">Agent</label>
          <select id="agent" name="agentId">${agents.map((a) => html`<option value="${a.id}" ${new Html(a.id === o.agent ? 'selected' : '')}>${revealHidden(a.name)} (${a.kind}, ${a.id})</option>`)}</select>
          <label for="network">Network</label>
          <select id="network" name="networkId"><option value="">(let the agent create its own network)</option>${nets.map((n) => html`<option value="${n.id}">${revealHidden(n.name)} (${n.id})</option>`)}</select>
          <button type="submit" id="grant-submit" ${new Html(canGrant ? '' : 'disabled')}>Grant reach</button>
        </form>
      </div>
      <div class="card"><h2>Reach grants in ${u.orgName}</h2>
        <table><thead><tr><th>Agent</th><th>Kind</th><th>Network</th><th>State</th><th></th></tr></thead><tbody>${rows}</tbody></table>
      </div>`, kit.chrome(u))
  }

  /** an error as the page shows it: a catalogued error's status and message, else rethrown */
  const refused = async (reply: FastifyReply, u: ConsoleUser, e: unknown, agent?: string) => {
    if (!isApiError(e)) throw e
    return kit.send(reply, e.status, await reachPage(u, { error: e.message, agent }))
  }
  return { reachPage, refused }
}

export function registerReachPage(app: FastifyInstance, services: Services, kit: ConsolePageKit) {
  const base = services.config.consolePath
  const path = `${base}/reach`
  const { reachPage, refused } = reachViews(services, kit)

  app.get(path, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const notice = (req.query as Record<string, unknown>).done
    return kit.send(reply, 200, await reachPage(u, { notice: notice === 'granted' ? 'Reach granted.' : notice === 'revoked' ? 'Reach grant revoked.' : undefined }))
  })

  app.post(path, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!checkCsrf(services, u, body.csrf)) return kit.formTokenInvalid(reply, u)
    const agentId = typeof body.agentId === 'string' ? body.agentId : ''
    // the select's empty choice: no network, the agent creates its own
    const networkId = typeof body.networkId === 'string' && body.networkId ? body.networkId : undefined
    try {
      await runOp(services, req, u, networkReachGrantCreate, { agentId, ...(networkId ? { networkId } : {}) })
    } catch (e) {
      return refused(reply, u, e, agentId)
    }
    return reply.redirect(`${path}?done=granted`, 303)
  })

  app.post(`${path}/:grantId/revoke`, async (req, reply) => {
    const u = await kit.requireUser(req, reply)
    if (!u) return reply
    const body = (req.body ?? {}) as Record<string, unknown>
    if (!checkCsrf(services, u, body.csrf)) return kit.formTokenInvalid(reply, u)
    try {
      await runOp(services, req, u, networkReachGrantRevoke, { grantId: String((req.params as Record<string, unknown>).grantId) })
    } catch (e) {
      return refused(reply, u, e)
    }
    return reply.redirect(`${path}?done=revoked`, 303)
  })
}
