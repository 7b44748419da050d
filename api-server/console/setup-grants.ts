// The grants section of an identity's console page: who may assume or manage the
// identity (grant_list: identities:write, so owners and admins), a form for a new grant
// (agent, role, expiry, narrowed hosts, propagation, session cap, reason: grant_create),
// and per grant "Revoke" (grant_revoke: soft, the record stays) and "Delete" (grant_delete:
// hard, removing the grant and its audit trail — the form says so and asks to confirm).
import type { FastifyInstance } from 'fastify'
import type { z } from 'zod'
import { GRANT_ROLES, PROPAGATIONS, type GrantView } from '../../contracts/operations/personas.ts'
import { isApiError, type ApiError } from '../../contracts/errors.ts'
import { grantCreate, grantDelete, grantRevoke } from '../operations/personas/grants.ts'
import { Html, html, theirs } from '../door-kit/html.ts'
import { hostsView } from '../door-kit/host-view.ts'
import { revealHidden } from '../../contracts/person-text.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { csrfInput, disabledUnless, errorLine, field, formRoute, listField, may, param, roleNote, runOp, TEXTAREA_STYLE, type GrantFormState, type SetupKit, type ShowIdentity } from './setup-kit.ts'

export interface AgentRow { id: string; name: string; kind: string }

const DEFAULT_DAYS = 30

export function grantSection(
  kit: SetupKit, u: ConsoleUser, identityId: string, grants: readonly z.input<typeof GrantView>[] | ApiError, agents: readonly AgentRow[], form: GrantFormState = {},
) {
  const path = `${kit.base}/identities/${identityId}/grants`
  const agentName = new Map(agents.map((a) => [a.id, a.name]))
  const v = form.grantId ? {} : form.values ?? {}
  const expires = v.expiresAt ?? new Date(kit.services.now() + DEFAULT_DAYS * 86_400_000).toISOString()
  const sel = (a: string, b: string) => new Html(a === b ? 'selected' : '')
  const list = isApiError(grants)
    // grant_list needs identities:write: a member sees the API's refusal instead of the list
    ? html`<p class="muted" id="grants-refused">${grants.message}</p>`
    : grants.length
      ? html`<table><thead><tr><th>Agent</th><th>Role</th><th>State</th><th>Expires</th><th>Hosts</th><th>Reason</th><th></th></tr></thead><tbody>${grants.map((g) => html`<tr id="grant-${g.id}">
        <td>${theirs(agentName.get(g.principalAgentId) ?? g.principalAgentId)}<div class="muted"><code>${g.principalAgentId}</code></div><div class="muted"><code>${g.id}</code></div></td>
        <td>${g.role}</td>
        <td class="state">${g.state}</td>
        <td>${g.expiresAt}</td>
        <td>${g.allowedOrigins.length ? hostsView(g.allowedOrigins) : html`<span class="muted">the credential’s</span>`}</td>
        <td class="reason" dir="auto">${theirs(g.reason)}</td>
        <td>${form.grantId === g.id ? errorLine(form.error) : ''}${may(u, grantRevoke) ? html`
          ${g.state === 'live' ? html`<form method="post" action="${path}/${g.id}/revoke" class="revoke">${csrfInput(kit, u)}<button type="submit">Revoke</button></form>` : ''}
          <form method="post" action="${path}/${g.id}/delete" class="delete">${csrfInput(kit, u)}
            <p class="muted">Delete erases the grant <em>and its audit trail</em>; this cannot be undone. Revoke keeps the record.</p>
            <label style="font-weight:400"><input type="checkbox" name="confirm" value="yes" required> I understand the audit trail goes too</label>
            <button type="submit" style="background:#c92a2a">Delete for good</button>
          </form>` : ''}</td>
      </tr>`)}</tbody></table>`
      : html`<p id="no-grants">No grants: no agent may use this identity yet.</p>`
  return html`<div class="card" id="grants">
    <h2>Grants</h2>
    <p class="muted">A grant lets one agent bind this identity to its sessions (<code>assume</code>), or also manage it (<code>manage</code>), until it expires or is revoked.</p>
    ${form.grantId && !(Array.isArray(grants) && grants.some((g) => g.id === form.grantId)) ? errorLine(form.error) : ''}
    ${list}
    <h2 style="margin-top:20px">Grant an agent</h2>
    ${errorLine(form.grantId ? undefined : form.error)}
    ${roleNote(u, grantCreate)}
    <form method="post" action="${path}" id="grant-create">${csrfInput(kit, u)}
      <label for="grant-agent">Agent</label>
      <select id="grant-agent" name="principalAgentId">${agents.map((a) => html`<option value="${a.id}" ${sel(a.id, v.principalAgentId ?? '')}>${revealHidden(a.name)} (${a.kind}, ${a.id})</option>`)}</select>
      <label for="grant-role">Role</label>
      <select id="grant-role" name="role">${GRANT_ROLES.map((r) => html`<option value="${r}" ${sel(r, v.role ?? 'assume')}>${r}</option>`)}</select>
      <label for="grant-expires">Expires at <span class="muted">(RFC 3339, e.g. 2030-01-01T00:00:00Z)</span></label>
      <input id="grant-expires" name="expiresAt" type="text" value="${expires}" required>
      <label for="grant-hosts">Narrow to hosts <span class="muted">(optional, one per line; empty: the credentials’ own allowlists)</span></label>
      <textarea id="grant-hosts" name="allowedOrigins" rows="2" style="${TEXTAREA_STYLE}">${v.allowedOrigins ?? ''}</textarea>
      <label for="grant-propagation">Propagation</label>
      <select id="grant-propagation" name="propagation">${PROPAGATIONS.map((p) => html`<option value="${p}" ${sel(p, v.propagation ?? 'same_conversation')}>${p}</option>`)}</select>
      <label for="grant-max">Session cap in seconds <span class="muted">(optional)</span></label>
      <input id="grant-max" name="maxSessionDurationSecs" type="text" inputmode="numeric" value="${v.maxSessionDurationSecs ?? ''}">
      <label for="grant-reason">Reason</label>
      <input id="grant-reason" name="reason" type="text" maxlength="500" value="${v.reason ?? ''}" required>
      <button type="submit" ${disabledUnless(u, grantCreate)}>Create grant</button>
    </form>
  </div>`
}

const FIELDS = ['principalAgentId', 'role', 'expiresAt', 'allowedOrigins', 'propagation', 'maxSessionDurationSecs', 'reason'] as const

export function registerGrantRoutes(app: FastifyInstance, kit: SetupKit, show: ShowIdentity) {
  const path = `${kit.base}/identities/:identityId/grants`
  const back = (identityId: string, done: string) => `${kit.base}/identities/${identityId}?done=${done}#grants`

  formRoute(app, kit, path,
    async ({ req, u, body }) => {
      const identityId = param(req, 'identityId')
      const max = field(body, 'maxSessionDurationSecs').trim()
      await runOp(kit.services, req, u, grantCreate, {
        identityId,
        principalAgentId: field(body, 'principalAgentId'),
        role: field(body, 'role'),
        expiresAt: field(body, 'expiresAt').trim(),
        allowedOrigins: listField(body, 'allowedOrigins'),
        propagation: field(body, 'propagation'),
        // empty: no cap (null); digits: a number; anything else goes to the schema as typed, which refuses it in its words
        maxSessionDurationSecs: max === '' ? null : /^\d+$/.test(max) ? Number(max) : max,
        reason: field(body, 'reason'),
      })
      return back(identityId, 'grant-created')
    },
    ({ req, reply, u, body }, e) => {
      const values = Object.fromEntries(FIELDS.map((f) => [f, field(body, f)]))
      return show(req, reply, u, param(req, 'identityId'), { error: e, grant: { error: e.message, values } })
    })

  for (const [action, op] of [['revoke', grantRevoke], ['delete', grantDelete]] as const) {
    formRoute(app, kit, `${path}/:grantId/${action}`,
      async ({ req, u }) => {
        const identityId = param(req, 'identityId')
        const grantId = param(req, 'grantId')
        if (op === grantRevoke) await runOp(kit.services, req, u, grantRevoke, { identityId, grantId })
        else await runOp(kit.services, req, u, grantDelete, { identityId, grantId })
        return back(identityId, action === 'revoke' ? 'grant-revoked' : 'grant-deleted')
      },
      ({ req, reply, u }, e) => show(req, reply, u, param(req, 'identityId'), { error: e, grant: { error: e.message, grantId: param(req, 'grantId') } }))
  }
}
