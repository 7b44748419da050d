// The credentials section of an identity's console page: the metadata list (never a
// value), a create form, and per credential rotate and delete. The secret is typed into a
// password field, sent only in the POST body, and never put back into a form, page,
// redirect or log line: after an error the form returns with the secret field empty. A
// TOTP credential takes its otpauth:// URI (or base32 seed) as the secret.
import type { FastifyInstance } from 'fastify'
import type { z } from 'zod'
import type { CredentialView } from '../../contracts/operations/personas.ts'
import { credentialCreate, credentialDelete, credentialRotate } from '../operations/personas/credentials.ts'
import { html, theirs } from '../door-kit/html.ts'
import { hostsView } from '../door-kit/host-view.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { csrfInput, disabledUnless, errorLine, field, formRoute, listField, may, param, roleNote, runOp, TEXTAREA_STYLE, type CredentialForm, type SetupKit, type ShowIdentity } from './setup-kit.ts'

export function credentialSection(kit: SetupKit, u: ConsoleUser, identityId: string, creds: readonly z.input<typeof CredentialView>[], form: CredentialForm = {}) {
  const path = `${kit.base}/identities/${identityId}/credentials`
  const canWrite = may(u, credentialCreate)
  // an error about a credential the list does not hold (deleted meanwhile) shows above the list
  const createError = form.credentialId ? undefined : form.error
  const orphanError = form.credentialId && !creds.some((c) => c.id === form.credentialId) ? form.error : undefined
  const rows = creds.map((c) => html`<tr id="credential-${c.id}">
    <td><strong class="name">${theirs(c.name)}</strong><div class="muted"><code>${c.id}</code></div></td>
    <td><code>${c.placeholder}</code></td>
    <td class="mask">${c.kind === 'totp' ? html`<span class="kind">TOTP</span> ` : ''}${c.maskedValue}</td>
    <td class="allowlist">${hostsView(c.originAllowlist)}</td>
    <td>${c.createdAt}${c.rotatedAt ? html`<div class="muted">rotated ${c.rotatedAt}</div>` : ''}</td>
    <td>${canWrite ? html`
      ${form.credentialId === c.id ? errorLine(form.error) : ''}
      <form method="post" action="${path}/${c.id}/rotate" class="rotate">${csrfInput(kit, u)}
        <label for="rotate-${c.id}">New secret</label>
        <input id="rotate-${c.id}" name="value" type="password" autocomplete="off" required>
        <button type="submit">Rotate</button>
      </form>
      <form method="post" action="${path}/${c.id}/delete" class="delete">${csrfInput(kit, u)}<button type="submit">Delete</button></form>` : ''}</td>
  </tr>`)
  return html`<div class="card" id="credentials">
    <h2>Credentials</h2>
    <p class="muted">A credential’s secret is sealed when you save it and never shown again — here, in the API or to an agent.
    An agent fills it with <code>credential_fill</code> into a page whose host is on the allowlist.</p>
    ${errorLine(orphanError)}
    ${creds.length
      ? html`<table><thead><tr><th>Name</th><th>Placeholder</th><th>Secret</th><th>Allowed hosts</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
      : html`<p id="no-credentials">No credentials yet.</p>`}
    <h2 style="margin-top:20px">Add a credential</h2>
    ${errorLine(createError)}
    ${roleNote(u, credentialCreate)}
    <form method="post" action="${path}" id="credential-create">${csrfInput(kit, u)}
      <label for="credential-name">Name</label>
      <input id="credential-name" name="name" type="text" maxlength="64" value="${form.credentialId ? '' : form.name ?? ''}" required>
      <label for="credential-kind">Kind</label>
      <select id="credential-kind" name="kind">
        <option value="password">Password — typed as saved</option>
        <option value="totp" ${form.credentialId ? '' : form.kind === 'totp' ? 'selected' : ''}>One-time code (TOTP) — paste the otpauth:// URI or the base32 seed; a fill types the current code</option>
      </select>
      <label for="credential-value">Secret</label>
      <input id="credential-value" name="value" type="password" autocomplete="off" required>
      <label for="credential-hosts">Allowed hosts <span class="muted">(one per line: host or host:port; no scheme, path or wildcard)</span></label>
      <textarea id="credential-hosts" name="originAllowlist" rows="3" style="${TEXTAREA_STYLE}">${form.credentialId ? '' : form.hosts ?? ''}</textarea>
      <button type="submit" ${disabledUnless(u, credentialCreate)}>Save credential</button>
    </form>
  </div>`
}

export function registerCredentialRoutes(app: FastifyInstance, kit: SetupKit, show: ShowIdentity) {
  const path = `${kit.base}/identities/:identityId/credentials`
  const back = (identityId: string, done: string) => `${kit.base}/identities/${identityId}?done=${done}#credentials`

  formRoute(app, kit, path,
    async ({ req, u, body }) => {
      const identityId = param(req, 'identityId')
      await runOp(kit.services, req, u, credentialCreate, {
        identityId, name: field(body, 'name'), kind: field(body, 'kind') || undefined, value: field(body, 'value'), originAllowlist: listField(body, 'originAllowlist'),
      })
      return back(identityId, 'credential-created')
    },
    // the name and hosts come back as typed; the secret never does
    ({ req, reply, u, body }, e) =>
      show(req, reply, u, param(req, 'identityId'), { error: e, credential: { error: e.message, name: field(body, 'name'), kind: field(body, 'kind'), hosts: field(body, 'originAllowlist') } }))

  for (const [action, op] of [['rotate', credentialRotate], ['delete', credentialDelete]] as const) {
    formRoute(app, kit, `${path}/:credentialId/${action}`,
      async ({ req, u, body }) => {
        const identityId = param(req, 'identityId')
        const credentialId = param(req, 'credentialId')
        if (op === credentialRotate) await runOp(kit.services, req, u, credentialRotate, { identityId, credentialId, value: field(body, 'value') })
        else await runOp(kit.services, req, u, credentialDelete, { identityId, credentialId })
        return back(identityId, action === 'rotate' ? 'credential-rotated' : 'credential-deleted')
      },
      ({ req, reply, u }, e) => show(req, reply, u, param(req, 'identityId'), { error: e, credential: { error: e.message, credentialId: param(req, 'credentialId') } }))
  }
}
