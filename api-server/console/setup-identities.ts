// The console's Identities pages (setting up without curl). The list
// of the org's identities (personas) with a create form, and one identity's page: its
// credentials (setup-credentials.ts), its grants (setup-grants.ts) and a delete button.
// Every read and write is the REST operation itself, run as the signed-in person
// (setup-kit.ts runOp): members (identities:read) see identities and credential
// metadata; owners and admins (identities:write) also create, rotate, grant and delete.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { OPEN_MODES } from '../../contracts/operations/personas.ts'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { identityCreate, identityDelete, identityList } from '../operations/personas/identities.ts'
import { credentialList } from '../operations/personas/credentials.ts'
import { grantList } from '../operations/personas/grants.ts'
import { html, page, theirs } from '../door-kit/html.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { credentialSection, registerCredentialRoutes } from './setup-credentials.ts'
import { grantSection, registerGrantRoutes, type AgentRow } from './setup-grants.ts'
import {
  csrfInput, disabledUnless, errorLine, field, formRoute, notice, okNotice, pageRoute, param, refusalPage, roleNote, runOp, setupNav, type IdentityPageState, type SetupKit,
} from './setup-kit.ts'

const NOTICES: Record<string, string> = {
  created: 'Identity created.',
  deleted: 'Identity deleted.',
  'credential-created': 'Credential saved. Its secret is sealed and will not be shown again.',
  'credential-rotated': 'Credential rotated. The new secret is sealed and will not be shown again.',
  'credential-deleted': 'Credential deleted.',
  'grant-created': 'Grant created.',
  'grant-revoked': 'Grant revoked.',
  'grant-deleted': 'Grant deleted, with its audit trail.',
}

/** The identities list and one identity's page. */
function identityViews(kit: SetupKit) {
  const list = `${kit.base}/identities`
  const backToList = { href: list, text: 'All identities' }

  const listPage = async (req: FastifyRequest, u: ConsoleUser, o: { error?: string; name?: string; mode?: string } = {}) => {
    const rows = await runOp(kit.services, req, u, identityList, {})
    return page('Identities', html`
      <h1>Identities</h1>
      ${setupNav(kit)}
      ${okNotice(notice(req, NOTICES))}
      <div class="card" id="identity-create-card">
        <h2>Create an identity</h2>
        <p class="muted">An identity (a persona) holds sealed credentials. Agents use it through grants, one live session at a time.</p>
        ${errorLine(o.error)}
        ${roleNote(u, identityCreate)}
        <form method="post" action="${list}" id="identity-create">${csrfInput(kit, u)}
          <label for="identity-name">Name</label>
          <input id="identity-name" name="name" type="text" maxlength="64" value="${o.name ?? ''}" required>
          <label for="identity-mode">Default open mode</label>
          <select id="identity-mode" name="defaultOpenMode">${OPEN_MODES.map((m) => html`<option value="${m}" ${m === (o.mode ?? 'exclusive') ? html`selected` : ''}>${m}</option>`)}</select>
          <button type="submit" ${disabledUnless(u, identityCreate)}>Create identity</button>
        </form>
      </div>
      <div class="card"><h2>Identities in ${u.orgName}</h2>
        ${rows.length
          ? html`<table><thead><tr><th>Name</th><th>Open mode</th><th>Lease</th><th>Created</th></tr></thead><tbody>${rows.map((i) => html`<tr id="identity-${i.id}">
            <td><a href="${list}/${i.id}">${theirs(i.name)}</a><div class="muted"><code>${i.id}</code></div></td><td>${i.defaultOpenMode}</td><td>${i.leaseState}</td><td>${i.createdAt}</td></tr>`)}</tbody></table>`
          : html`<p id="no-identities">No identities yet.</p>`}
      </div>`, kit.chrome(u))
  }

  /** One identity's page, or (for an unknown or foreign id) the API's refusal. */
  const show = async (req: FastifyRequest, reply: FastifyReply, u: ConsoleUser, identityId: string, o: IdentityPageState & { notice?: string } = {}) => {
    let creds
    try {
      // credential_list is the identity's existence check too: the REST door's 404 for another org's id
      creds = await runOp(kit.services, req, u, credentialList, { identityId })
    } catch (e) {
      return refusalPage(kit, reply, u, 'Identity', e, backToList)
    }
    const identity = (await runOp(kit.services, req, u, identityList, {})).find((i) => i.id === identityId)
    if (!identity) return refusalPage(kit, reply, u, 'Identity', errors.notFound('identity'), backToList)
    let grants: Awaited<ReturnType<typeof grantList.handler>> | ApiError
    try {
      grants = await runOp(kit.services, req, u, grantList, { identityId })
    } catch (e) {
      if (!isApiError(e)) throw e
      grants = e
    }
    const agents = (await kit.services.db.query('select id, name, kind from agents where org_id = $1 order by is_default desc, created_at, name', [u.orgId])).rows as AgentRow[]
    const status = o.error?.status ?? 200
    const body = page(`Identity ${identity.name}`, html`
      <h1>Identity <span id="identity-name-shown">${theirs(identity.name)}</span></h1>
      ${setupNav(kit)}
      <p><a href="${list}">All identities</a> · <code>${identity.id}</code> · default open mode ${identity.defaultOpenMode} · lease ${identity.leaseState}</p>
      ${okNotice(o.notice)}
      ${credentialSection(kit, u, identity.id, creds, o.credential)}
      ${grantSection(kit, u, identity.id, grants, agents, o.grant)}
      <div class="card" id="identity-delete-card">
        <h2>Delete this identity</h2>
        <p class="muted">Deletes the identity with its credentials and grants. Refused while a session holds it.</p>
        ${errorLine(o.deleteError)}
        ${roleNote(u, identityDelete)}
        <form method="post" action="${list}/${identity.id}/delete" id="identity-delete">${csrfInput(kit, u)}
          <button type="submit" style="background:#c92a2a" ${disabledUnless(u, identityDelete)}>Delete identity</button>
        </form>
      </div>`, kit.chrome(u))
    return kit.send(o.error ? reply.headers(o.error.headers) : reply, status, body)
  }
  return { listPage, show }
}

export function registerIdentityPages(app: FastifyInstance, kit: SetupKit) {
  const list = `${kit.base}/identities`
  const backToList = { href: list, text: 'All identities' }
  const { listPage, show } = identityViews(kit)

  pageRoute(app, kit, list, async (req, reply, u) => {
    try {
      return kit.send(reply, 200, await listPage(req, u))
    } catch (e) {
      return refusalPage(kit, reply, u, 'Identities', e, { href: `${kit.base}/keys`, text: 'API keys' })
    }
  })

  formRoute(app, kit, list,
    async ({ req, u, body }) => {
      const { id } = await runOp(kit.services, req, u, identityCreate, { name: field(body, 'name'), defaultOpenMode: field(body, 'defaultOpenMode') || undefined })
      return `${list}/${id}?done=created`
    },
    async ({ req, reply, u, body }, e) =>
      kit.send(reply.headers(e.headers), e.status, await listPage(req, u, { error: e.message, name: field(body, 'name'), mode: field(body, 'defaultOpenMode') })))

  pageRoute(app, kit, `${list}/:identityId`, (req, reply, u) => show(req, reply, u, param(req, 'identityId'), { notice: notice(req, NOTICES) }))

  formRoute(app, kit, `${list}/:identityId/delete`,
    async ({ req, u }) => {
      await runOp(kit.services, req, u, identityDelete, { identityId: param(req, 'identityId') })
      return `${list}?done=deleted`
    },
    // a refusal about an identity the page can still show (409 leased, 403 role) comes back on it
    ({ req, reply, u }, e) => (e.status === 404 ? refusalPage(kit, reply, u, 'Identity', e, backToList) : show(req, reply, u, param(req, 'identityId'), { error: e, deleteError: e.message })))

  registerCredentialRoutes(app, kit, show)
  registerGrantRoutes(app, kit, show)
}
