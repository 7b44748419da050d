// The console's Networks pages: the org's local-reach networks with a create form, and one
// network's declared hosts, daemons, "Rotate token" and "Delete". The join token is shown
// exactly once, on the page answering the create or rotate POST (no redirect: nothing
// stores it to show again), beside the `nightjar daemon` command. Listing needs
// networks:read; writing networks:write.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors, isApiError, type ApiError } from '../../contracts/errors.ts'
import { networkCreate, networkDaemons, networkDelete, networkList, networkRotateToken, networkUpdate } from '../operations/networks/index.ts'
import { html, page, theirs, type Html } from '../door-kit/html.ts'
import { hostsView } from '../door-kit/host-view.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import {
  csrfInput, disabledUnless, errorLine, field, formRoute, listField, notice, okNotice, pageRoute, param, refusalPage, roleNote, rotateDeleteCard, runOp, setupNav, shellWord, TEXTAREA_STYLE, type FormCall, type SetupKit,
} from './setup-kit.ts'

const NOTICES: Record<string, string> = {
  deleted: 'Network deleted. Its token no longer works and its daemons were dropped.',
  hosts: 'Declared hosts saved. Sessions started from now on use the new list.',
}

/** The file the page suggests for the token (outside shell history, mode 0600). */
export const TOKEN_FILE = '~/.nightjar-token'

/** The tunnel URL a daemon dials (its --control-url): the server's base URL with ws(s) for http(s). */
export const tunnelUrl = (baseUrl: string) => baseUrl.replace(/^http(s?):/, 'ws$1:').replace(/\/+$/, '')

/** The command the page gives to copy, as the README documents it. */
export const daemonCommand = (network: string, baseUrl: string) =>
  `npx nightjar daemon --network ${shellWord(network)} --control-url ${tunnelUrl(baseUrl)} --network-token-file ${TOKEN_FILE}`

/** The one-time card: the token and the command. Only a create or rotate answer renders it. */
const tokenCard = (kit: SetupKit, name: string, token: { tokenId: string; secret: string }, rotated: boolean) => html`<div class="card" role="status" id="join-token-card">
  <p class="ok">${rotated ? `New join token for ${name}. The old one no longer works: joined daemons must rejoin with this one.` : `Network ${name} created.`}</p>
  <p>Copy the join token now; it is shown only this once. Save it into <code>${TOKEN_FILE}</code> (readable only by you), without putting it on a command line:</p>
  <code class="secret" id="network-token">${token.secret}</code>
  <p class="muted">For example <code>(umask 077; cat &gt; ${TOKEN_FILE})</code>, paste, then Ctrl-D.</p>
  <p>Then, on the machine whose hosts the sessions should reach:</p>
  <code class="secret" id="daemon-command">${daemonCommand(name, kit.services.config.baseUrl)}</code>
  <p class="muted">Token id <code>${token.tokenId}</code>. Declare the hosts the browser may reach below; nothing is reachable until declared.</p>
</div>`

const listPage = async (kit: SetupKit, req: FastifyRequest, u: ConsoleUser, o: { card?: Html; error?: string; name?: string } = {}) => {
  const nets = await runOp(kit.services, req, u, networkList, {})
  return page('Networks', html`
    <h1>Networks</h1>
    ${setupNav(kit)}
    ${o.card ?? okNotice(notice(req, NOTICES))}
    <div class="card" id="network-create-card">
      <h2>Create a network</h2>
      <p class="muted">A network joins a developer’s machine: <code>nightjar daemon</code> runs there and the sessions’ browsers reach its declared hosts through it.</p>
      ${errorLine(o.error)}
      ${roleNote(u, networkCreate)}
      <form method="post" action="${kit.base}/networks" id="network-create">${csrfInput(kit, u)}
        <label for="network-name">Name</label>
        <input id="network-name" name="name" type="text" maxlength="63" value="${o.name ?? ''}" required>
        <button type="submit" ${disabledUnless(u, networkCreate)}>Create network</button>
      </form>
    </div>
    <div class="card"><h2>Networks in ${u.orgName}</h2>
      ${nets.length
        ? html`<table><thead><tr><th>Name</th><th>Daemons</th><th>Declared hosts</th></tr></thead><tbody>${nets.map((n) => html`<tr id="network-${n.id}">
          <td><a href="${kit.base}/networks/${n.id}">${theirs(n.name)}</a><div class="muted"><code>${n.id}</code></div></td>
          <td>${n.onlineDaemonCount} reachable of ${n.daemonCount}</td>
          <td>${hostsView(n.declaredHosts)}</td></tr>`)}</tbody></table>`
        : html`<p id="no-networks">No networks yet.</p>`}
    </div>`, kit.chrome(u))
}

/** One network's page, or (unknown or foreign id) the API's refusal. */
const show = async (kit: SetupKit, req: FastifyRequest, reply: FastifyReply, u: ConsoleUser, networkId: string, o: { status?: number; error?: ApiError; card?: Html; hosts?: string } = {}) => {
  let daemons
  try {
    // network_daemons is the existence check: the REST door's 404 for another org's id
    daemons = await runOp(kit.services, req, u, networkDaemons, { networkId })
  } catch (e) {
    return refusalPage(kit, reply, u, 'Network', e, { href: `${kit.base}/networks`, text: 'All networks' })
  }
  const n = (await runOp(kit.services, req, u, networkList, {})).find((x) => x.id === networkId)
  if (!n) return refusalPage(kit, reply, u, 'Network', errors.notFound('network'), { href: `${kit.base}/networks`, text: 'All networks' })
  const body = page(`Network ${n.name}`, html`
    <h1>Network <span id="network-name-shown">${theirs(n.name)}</span></h1>
    ${setupNav(kit)}
    <p><a href="${kit.base}/networks">All networks</a> · <code>${n.id}</code></p>
    ${o.card ?? okNotice(notice(req, NOTICES))}
    ${o.error ? html`<div class="card">${errorLine(o.error.message)}</div>` : ''}
    <div class="card" id="daemons">
      <h2>Daemons</h2>
      ${daemons.length
        ? html`<table><thead><tr><th>Daemon</th><th>Host</th><th>Version</th><th>Connected since</th><th>State</th></tr></thead><tbody>${daemons.map((d) => html`<tr id="daemon-${d.id}">
          <td><code>${d.id}</code></td><td>${d.host}</td><td>${d.version}</td><td>${d.connectedSince}</td>
          <td class="reachable">${d.reachable ? 'reachable' : 'not reachable'}</td></tr>`)}</tbody></table>`
        : html`<p id="no-daemons">No daemon has joined yet. Run <code>${daemonCommand(n.name, kit.services.config.baseUrl)}</code> with the join token (rotate it if you no longer have it).</p>`}
    </div>
    <div class="card" id="hosts">
      <h2>Declared hosts</h2>
      <p class="muted">What a session’s browser may reach through the daemon: host, IPv4, [IPv6] or ::1, each optionally with :port, one per line. A live session keeps the list it started with.</p>
      ${n.declaredHosts.length ? hostsView(n.declaredHosts, 'declared-hosts-shown') : html`<p class="muted" id="no-declared-hosts">None yet: a session reaches nothing through the daemon.</p>`}
      ${roleNote(u, networkUpdate)}
      <form method="post" action="${kit.base}/networks/${n.id}/hosts" id="network-hosts">${csrfInput(kit, u)}
        <textarea id="declared-hosts" name="declaredHosts" rows="4" style="${TEXTAREA_STYLE}">${o.hosts ?? n.declaredHosts.join('\n')}</textarea>
        <button type="submit" ${disabledUnless(u, networkUpdate)}>Save hosts</button>
      </form>
    </div>
    ${rotateDeleteCard(kit, u, {
      id: 'network', action: `${kit.base}/networks/${n.id}`, heading: 'Join token',
      rotate: { op: networkRotateToken, note: 'Rotating issues a new token (shown once) and stops the old one: daemons joined with it must rejoin.', button: 'Rotate token' },
      remove: { op: networkDelete, note: 'Deleting ends its tokens, drops its daemons and ends its reach grants.', button: 'Delete network' },
    })}`, kit.chrome(u))
  return kit.send(o.error ? reply.headers(o.error.headers) : reply, o.status ?? o.error?.status ?? 200, body)
}

export function registerNetworkPages(app: FastifyInstance, kit: SetupKit) {
  const list = `${kit.base}/networks`
  const backToList = { href: list, text: 'All networks' }

  pageRoute(app, kit, list, async (req, reply, u) => {
    try {
      return kit.send(reply, 200, await listPage(kit, req, u))
    } catch (e) {
      return refusalPage(kit, reply, u, 'Networks', e, { href: `${kit.base}/keys`, text: 'API keys' })
    }
  })

  formRoute(app, kit, list,
    async ({ req, reply, u, body }) => {
      const { network, token } = await runOp(kit.services, req, u, networkCreate, { name: field(body, 'name') })
      // the token is rendered into this answer only; the list page never shows it again
      return kit.send(reply, 201, await listPage(kit, req, u, { card: tokenCard(kit, network.name, token, false) }))
    },
    async ({ req, reply, u, body }, e) => kit.send(reply.headers(e.headers), e.status, await listPage(kit, req, u, { error: e.message, name: field(body, 'name') })))

  pageRoute(app, kit, `${list}/:networkId`, (req, reply, u) => show(kit, req, reply, u, param(req, 'networkId')))

  formRoute(app, kit, `${list}/:networkId/hosts`,
    async ({ req, u, body }) => {
      const networkId = param(req, 'networkId')
      await runOp(kit.services, req, u, networkUpdate, { networkId, declaredHosts: listField(body, 'declaredHosts') })
      return `${list}/${networkId}?done=hosts`
    },
    ({ req, reply, u, body }, e) => show(kit, req, reply, u, param(req, 'networkId'), { error: e, hosts: field(body, 'declaredHosts') }))

  /** rotate and delete: a network gone (404) gets the refusal page, anything else comes back on the network's page */
  const refusedOnNetwork = ({ req, reply, u }: FormCall, e: ApiError) =>
    e.status === 404 ? refusalPage(kit, reply, u, 'Network', e, backToList) : show(kit, req, reply, u, param(req, 'networkId'), { error: e })

  formRoute(app, kit, `${list}/:networkId/rotate`,
    async ({ req, reply, u }) => {
      const networkId = param(req, 'networkId')
      const { network, token } = await runOp(kit.services, req, u, networkRotateToken, { networkId })
      return show(kit, req, reply, u, networkId, { card: tokenCard(kit, network.name, token, true) })
    },
    refusedOnNetwork)

  formRoute(app, kit, `${list}/:networkId/delete`,
    async ({ req, u }) => {
      await runOp(kit.services, req, u, networkDelete, { networkId: param(req, 'networkId') })
      return `${list}?done=deleted`
    },
    refusedOnNetwork)
}
