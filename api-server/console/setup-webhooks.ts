// The console's Webhooks pages: the org's endpoints with a create form, and one endpoint's
// page — its delivery log with every attempt's status, "Rotate secret", "Delete", and
// "Enable" for one disabled after failing (both pages say so up front). The signing secret
// is shown once, on the page that answers the create or rotate POST (no redirect: nothing
// keeps it). A description is another party's text: isolated, hidden characters written
// out. Everything runs the webhook_* operations (org:admin); others read the 403 in words.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors, type ApiError } from '../../contracts/errors.ts'
import { WEBHOOK_EVENT_TYPES } from '../../contracts/operations/webhooks.ts'
import { webhookCreate, webhookDeliveries, webhookDelete, webhookEnable, webhookList, webhookRotateSecret } from '../operations/webhooks/index.ts'
import { Html, html, page, theirs } from '../door-kit/html.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import {
  csrfInput, disabledUnless, errorLine, field, formRoute, notice, okNotice, pageRoute, param, refusalPage, roleNote, rotateDeleteCard, runOp, setupNav, type FormCall, type SetupKit,
} from './setup-kit.ts'

const NOTICES: Record<string, string> = { deleted: 'Webhook deleted. Nothing more is sent to it.' }

interface DisabledInfo { since: string; failures: number; failingSince: string }

/** Why an endpoint is disabled, in words. */
const disabledWords = (d: DisabledInfo) =>
  html`Disabled since ${d.since}: its last ${d.failures} attempts failed, from ${d.failingSince} on. Nothing is sent to it, and new events are not queued for it, until it is enabled.`

/** The events ticked on the form (a repeated field arrives as an array). */
const eventsField = (body: Record<string, unknown>): string[] => {
  const v = body.events
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : []
}

/** The one-time card: the signing secret, and how a receiver checks it. */
const secretCard = (url: string, secret: string, rotated: boolean) => html`<div class="card" role="status" id="webhook-secret-card">
  <p class="ok">${rotated ? 'New signing secret. For a day, deliveries (retries included) carry two signatures, the old secret\'s and this one\'s, so a receiver can switch over; then this one\'s only.' : html`Webhook for <code>${url}</code> created.`}</p>
  <p>Copy the signing secret now; it is shown only this once:</p>
  <code class="secret" id="webhook-secret">${secret}</code>
  <p class="muted">Every delivery carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> (Standard Webhooks):
    verify the signature with a Standard Webhooks library and this secret before trusting the body.</p>
</div>`

async function listPage(kit: SetupKit, req: FastifyRequest, u: ConsoleUser, o: { card?: Html; error?: string; url?: string; events?: string[]; description?: string } = {}) {
  const list = `${kit.base}/webhooks`
  const hooks = await runOp(kit.services, req, u, webhookList, {})
  const ticked = new Set(o.events ?? [])
  const off = hooks.filter((h) => h.disabled)
  return page('Webhooks', html`
    <h1>Webhooks</h1>
    ${setupNav(kit)}
    ${o.card ?? okNotice(notice(req, NOTICES))}
    ${off.length ? html`<div class="card" role="alert" id="webhooks-disabled-notice"><p class="error">${off.length === 1 ? 'One endpoint was' : `${off.length} endpoints were`} disabled after failing
      again and again: nothing is sent to ${off.length === 1 ? 'it' : 'them'} until enabled on ${off.length === 1 ? 'its' : 'each'} page.</p>
      <ul>${off.map((h) => html`<li><a href="${list}/${h.id}">${h.url}</a></li>`)}</ul></div>` : ''}
    <div class="card" id="webhook-create-card">
      <h2>Add an endpoint</h2>
      <p class="muted">Nightjar POSTs the events you choose to an https URL of yours, signed, and retries for about a day until it answers 2xx. Payloads carry ids and reasons only, never a secret or page content.</p>
      ${errorLine(o.error)}
      ${roleNote(u, webhookCreate)}
      <form method="post" action="${list}" id="webhook-create">${csrfInput(kit, u)}
        <label for="webhook-url">URL</label>
        <input id="webhook-url" name="url" type="url" maxlength="2000" value="${o.url ?? ''}" placeholder="https://example.com/nightjar-events" required>
        <fieldset id="webhook-events" style="border:0;padding:0"><legend>Events</legend>
        ${WEBHOOK_EVENT_TYPES.map((e) => html`<label style="font-weight:400"><input type="checkbox" name="events" value="${e}" ${new Html(ticked.has(e) ? 'checked' : '')}> <code>${e}</code></label>`)}
        </fieldset>
        <label for="webhook-description">Description <span class="muted">(optional)</span></label>
        <input id="webhook-description" name="description" type="text" maxlength="200" value="${o.description ?? ''}">
        <button type="submit" ${disabledUnless(u, webhookCreate)}>Add endpoint</button>
      </form>
    </div>
    <div class="card"><h2>Endpoints of ${u.orgName}</h2>
      ${hooks.length
        ? html`<table><thead><tr><th>URL</th><th>Events</th><th>Description</th></tr></thead><tbody>${hooks.map((h) => html`<tr id="webhook-${h.id}">
          <td><a href="${list}/${h.id}">${h.url}</a><div class="muted"><code>${h.id}</code></div>${h.disabled ? html`<div class="error webhook-disabled">disabled</div>` : ''}</td>
          <td>${h.events.map((e) => html`<code>${e}</code> `)}</td><td class="webhook-description">${theirs(h.description)}</td></tr>`)}</tbody></table>`
        : html`<p id="no-webhooks">No webhooks yet.</p>`}
    </div>`, kit.chrome(u))
}

/** One endpoint's page with its delivery log, or (unknown or foreign id) the API's refusal. */
async function show(kit: SetupKit, req: FastifyRequest, reply: FastifyReply, u: ConsoleUser, webhookId: string, o: { status?: number; error?: ApiError; card?: Html | string } = {}) {
  const list = `${kit.base}/webhooks`
  const backToList = { href: list, text: 'All webhooks' }
  let log
  try {
    // the log is the existence check: the REST door's 404 for another org's id
    log = await runOp(kit.services, req, u, webhookDeliveries, { webhookId, limit: 50 })
  } catch (e) {
    return refusalPage(kit, reply, u, 'Webhook', e, backToList)
  }
  const h = (await runOp(kit.services, req, u, webhookList, {})).find((x) => x.id === webhookId)
  if (!h) return refusalPage(kit, reply, u, 'Webhook', errors.notFound('webhook'), backToList)
  const body = page('Webhook', html`
    <h1>Webhook</h1>
    ${setupNav(kit)}
    <p><a href="${list}">All webhooks</a> · <code>${h.id}</code></p>
    ${o.card ?? ''}
    ${o.error ? html`<div class="card">${errorLine(o.error.message)}</div>` : ''}
    ${h.disabled ? html`<div class="card" role="alert" id="webhook-disabled">
      <p class="error">${disabledWords(h.disabled)}</p>
      <p class="muted">Fix the receiver first; enabling it sends its pending deliveries again and starts a fresh count of failures.</p>
      ${roleNote(u, webhookEnable)}
      <form method="post" action="${list}/${h.id}/enable" id="webhook-enable">${csrfInput(kit, u)}
        <button type="submit" ${disabledUnless(u, webhookEnable)}>Enable webhook</button>
      </form></div>` : ''}
    <div class="card" id="webhook-details">
      <p><code id="webhook-url-shown">${h.url}</code></p>
      <p>${h.events.map((e) => html`<code>${e}</code> `)}</p>
      ${h.description ? html`<p class="muted" id="webhook-description">${theirs(h.description)}</p>` : ''}
    </div>
    <div class="card" id="deliveries">
      <h2>Deliveries</h2>
      <p class="muted">The newest 50. A delivery is retried until the endpoint answers 2xx or the retry schedule runs out (then it reads failed); the same <code>webhook-id</code> is sent on every attempt.</p>
      ${log.items.length
        ? html`<table><thead><tr><th>Event</th><th>State</th><th>Attempts (status)</th><th>Created</th></tr></thead><tbody>${log.items.map((d) => html`<tr id="delivery-${d.id}">
          <td><code>${d.eventType}</code><div class="muted"><code>${d.eventId}</code></div></td>
          <td class="delivery-state">${d.state}${d.state === 'pending' && d.nextAttemptAt ? html`<div class="muted">next ${d.nextAttemptAt}</div>` : ''}</td>
          <td class="delivery-attempts">${d.attempts.map((a) => html`<div>${a.at}: ${a.responseStatus === null ? 'no answer' : `HTTP ${a.responseStatus}`}${a.error ? html` <span class="muted">(${a.error})</span>` : ''}</div>`)}</td>
          <td>${d.createdAt}</td></tr>`)}</tbody></table>`
        : html`<p id="no-deliveries">Nothing sent yet.</p>`}
    </div>
    ${rotateDeleteCard(kit, u, {
      id: 'webhook', action: `${list}/${h.id}`, heading: 'Signing secret',
      rotate: { op: webhookRotateSecret, note: 'Rotating issues a new secret (shown once); the old one keeps signing beside it for a day, then stops (the API\'s overlapSeconds: 0 stops it at once, for a leaked secret).', button: 'Rotate secret' },
      remove: { op: webhookDelete, note: 'Deleting stops deliveries and removes its log.', button: 'Delete webhook' },
    })}`, kit.chrome(u))
  return kit.send(o.error ? reply.headers(o.error.headers) : reply, o.status ?? o.error?.status ?? 200, body)
}


export function registerWebhookPages(app: FastifyInstance, kit: SetupKit) {
  const list = `${kit.base}/webhooks`
  const backToList = { href: list, text: 'All webhooks' }

  pageRoute(app, kit, list, async (req, reply, u) => {
    try {
      return kit.send(reply, 200, await listPage(kit, req, u))
    } catch (e) {
      return refusalPage(kit, reply, u, 'Webhooks', e, { href: `${kit.base}/identities`, text: 'Identities' })
    }
  })

  formRoute(app, kit, list,
    async ({ req, reply, u, body }) => {
      const description = field(body, 'description')
      const { webhook, secret } = await runOp(kit.services, req, u, webhookCreate, { url: field(body, 'url'), events: eventsField(body), ...(description ? { description } : {}) })
      // the secret is rendered into this answer only; no page shows it again
      return kit.send(reply, 201, await listPage(kit, req, u, { card: secretCard(webhook.url, secret, false) }))
    },
    async ({ req, reply, u, body }, e) => e.status === 403
      ? refusalPage(kit, reply, u, 'Webhooks', e, { href: `${kit.base}/identities`, text: 'Identities' })
      : kit.send(reply.headers(e.headers), e.status, await listPage(kit, req, u, { error: e.message, url: field(body, 'url'), events: eventsField(body), description: field(body, 'description') })))

  pageRoute(app, kit, `${list}/:webhookId`, (req, reply, u) => show(kit, req, reply, u, param(req, 'webhookId')))

  /** rotate and delete: an endpoint gone (404) gets the refusal page, anything else comes back on its page */
  const refusedOnWebhook = ({ req, reply, u }: FormCall, e: ApiError) =>
    e.status === 404 || e.status === 403 ? refusalPage(kit, reply, u, 'Webhook', e, backToList) : show(kit, req, reply, u, param(req, 'webhookId'), { error: e })

  formRoute(app, kit, `${list}/:webhookId/rotate`,
    async ({ req, reply, u }) => {
      const webhookId = param(req, 'webhookId')
      const { webhook, secret } = await runOp(kit.services, req, u, webhookRotateSecret, { webhookId })
      return show(kit, req, reply, u, webhookId, { card: secretCard(webhook.url, secret, true) })
    },
    refusedOnWebhook)

  formRoute(app, kit, `${list}/:webhookId/enable`,
    async ({ req, reply, u }) => {
      const webhookId = param(req, 'webhookId')
      await runOp(kit.services, req, u, webhookEnable, { webhookId })
      return show(kit, req, reply, u, webhookId, { card: okNotice('Webhook enabled. Its pending deliveries go out again.') })
    },
    refusedOnWebhook)

  formRoute(app, kit, `${list}/:webhookId/delete`,
    async ({ req, u }) => {
      await runOp(kit.services, req, u, webhookDelete, { webhookId: param(req, 'webhookId') })
      return `${list}?done=deleted`
    },
    refusedOnWebhook)
}
