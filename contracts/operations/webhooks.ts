// Webhooks: an org registers endpoints and the events it wants; each event is delivered
// as the Standard Webhooks specification says (signed headers, HMAC-SHA256 with the
// endpoint's whsec_ secret, shown once), retried with backoff for a bounded time, and
// logged per attempt. Payloads carry ids, names and reasons only: never a secret, page
// content or an agent's free text. A rotated secret signs beside the new one for an
// overlap, so a receiver may update late. Guide: docs/webhooks.md
import { z } from 'zod'
import { defineContract } from './types.ts'
import { idParam, isoTime } from './fields.ts'
import { personText } from '../person-text.ts'
import { SANDBOX_KINDS } from '../../crds/types.ts'

/** How long a replaced secret keeps signing beside the new one unless the rotation says otherwise (a day, as Svix). */
export const DEFAULT_ROTATION_OVERLAP_SECS = 86_400
/** The longest overlap a rotation may ask for (a week, as Stripe's longest). */
export const MAX_ROTATION_OVERLAP_SECS = 7 * 86_400

/** Why an endpoint was disabled: consecutive_failures, every attempt failing for the set number and time. */
export const WEBHOOK_DISABLE_REASONS = ['consecutive_failures'] as const

export const WEBHOOK_EVENT_TYPES = [
  'session.live', 'session.ended', 'session.failed', 'human.requested', 'credential_request.created', 'credential_request.answered',
  'webhook.disabled',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

// --- the payloads a receiver gets --------------------------------------------------------

const sessionRef = {
  sessionId: z.string().describe('the session (nsess_…)'),
  agentId: z.string().describe('the agent the session runs as (nagt_…)'),
}

/** Each event's `data`, by type: what a receiver may rely on. */
export const WEBHOOK_EVENT_DATA = {
  'session.live': z.object({
    ...sessionRef,
    identityId: z.string().nullable().describe('the bound identity (nident_…), if any'),
    egress: z.string().describe('where its traffic goes out: local, split or platform'),
    browserKind: z.string().describe('the browser it runs (chromium …)'),
    sandbox: z.enum(SANDBOX_KINDS).optional().describe('what isolates its pages, as session_get shows it; absent when the pod did not say'),
  }),
  'session.ended': z.object({
    ...sessionRef,
    reason: z.enum(['session_end', 'idle_timeout', 'max_duration']).describe('session_end: a caller ended it; idle_timeout, max_duration: it ended on its own'),
  }),
  'session.failed': z.object({
    ...sessionRef,
    reason: z.string().describe('why: the operator’s condition (PodFailed, StartTimeout, OOMKilled, NodeLost, NodeDrained …), Orphaned, ResourceDeleted, or a start refusal’s reason'),
  }),
  'human.requested': z.object({
    ...sessionRef,
    url: z.string().describe('the console’s live view of the session, where a person of the org takes control'),
  }).describe('no reason: the agent’s words are free text (they may quote a page, a code or a customer’s details, and nothing can tell a secret from words), so only a signed-in person of the org reads them, on the live view the url leads to'),
  'credential_request.created': z.object({
    requestId: z.string().describe('the request (ncreq_…)'),
    identityId: z.string(),
    credentialName: z.string(),
    originAllowlist: z.array(z.string()),
    url: z.string().describe('the console page where a person of the org enters the secret'),
    expiresAt: isoTime,
  }),
  'credential_request.answered': z.object({
    requestId: z.string(),
    identityId: z.string(),
    credentialName: z.string(),
    credentialId: z.string().describe('the credential a person entered (its value never leaves the KMS envelope)'),
  }),
  'webhook.disabled': z.object({
    webhookId: z.string().describe('the endpoint disabled (nwhk_…); it is never sent this event itself'),
    reason: z.enum(WEBHOOK_DISABLE_REASONS),
    failures: z.number().int().describe('failed attempts in a row when it was disabled'),
    failingSince: isoTime.describe('the first failed attempt of that run'),
  }),
} as const satisfies Record<WebhookEventType, z.ZodObject>

export type WebhookEventData<T extends WebhookEventType> = z.infer<(typeof WEBHOOK_EVENT_DATA)[T]>

const payload = <T extends WebhookEventType>(type: T) => z.object({
  type: z.literal(type),
  timestamp: isoTime.describe('when the event happened'),
  data: WEBHOOK_EVENT_DATA[type],
})

/** The JSON body of a delivery (the Standard Webhooks payload structure: type, timestamp, data). */
export const WebhookPayload = z.discriminatedUnion('type', [
  payload('session.live'), payload('session.ended'), payload('session.failed'), payload('human.requested'),
  payload('credential_request.created'), payload('credential_request.answered'), payload('webhook.disabled'),
])

// --- endpoints and their delivery log ----------------------------------------------------

export const webhookId = z.string().regex(/^nwhk_[0-9A-Za-z]{1,40}$/, 'must be a webhook id (nwhk_…)')

export const WebhookView = z.object({
  id: z.string().describe('nwhk_…'),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  description: z.string(),
  createdAt: isoTime,
  createdBy: z.string().describe('the console user or the agent behind the key'),
  disabled: z.object({
    since: isoTime,
    reason: z.enum(WEBHOOK_DISABLE_REASONS),
    failures: z.number().int().describe('failed attempts in a row when it was disabled'),
    failingSince: isoTime.describe('the first failed attempt of that run'),
  }).nullable().describe('null while deliveries go out; set when it was disabled after failing: nothing is attempted or queued for it until webhook_enable'),
  previousSecretExpiresAt: isoTime.nullable().describe('until when the secret the last rotation replaced still signs beside the current one (two v1 signatures); null when only the current one signs'),
})

export const WebhookSecret = z.object({
  webhook: WebhookView,
  secret: z.string().describe('the signing secret (whsec_…, Standard Webhooks): shown only in this response, store it now'),
})

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const

export const DeliveryAttempt = z.object({
  at: isoTime,
  responseStatus: z.number().int().nullable().describe('the receiver’s HTTP status; null when no answer came'),
  error: z.string().nullable().describe('why the attempt failed when there was no 2xx: timeout, connection_failed, address_refused, redirect_not_followed, http_error, secret_unavailable'),
  durationMs: z.number().int().nonnegative(),
})

export const DeliveryView = z.object({
  id: z.string().describe('the delivery (nwdl_…)'),
  webhookId: z.string(),
  eventId: z.string().describe('the webhook-id header (nevt_…): the same on every attempt, and for every endpoint the event went to'),
  eventType: z.enum(WEBHOOK_EVENT_TYPES),
  state: z.enum(DELIVERY_STATES).describe('pending: not yet answered with a 2xx, another attempt is due; delivered; failed: the retry schedule ran out'),
  attempts: z.array(DeliveryAttempt).describe('every attempt so far, oldest first'),
  nextAttemptAt: isoTime.nullable().describe('when the next attempt is due (pending only)'),
  createdAt: isoTime,
  deliveredAt: isoTime.nullable(),
})

export const DeliveryPage = z.object({
  items: z.array(DeliveryView),
  next: z.string().nullable().describe('the before of the next (older) page; null when this page is not full'),
})

const webhookInput = {
  url: z.string().min(1).max(2000).describe('https URL the events are POSTed to; it must reach a public address (the deny floor applies, after DNS too, and redirects are not followed)'),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length)
    .refine((a) => new Set(a).size === a.length, 'must not repeat an event').describe('the events to deliver'),
  description: personText(z.string().max(200)).optional().describe('what it is for, shown in the console (no control, invisible or text-direction characters)'),
}

// --- operations -------------------------------------------------------------------------

export const webhookCreate = defineContract({
  name: 'webhook_create',
  mcp: false, // org settings: REST, the SDK and the console, never an agent's tool
  description: 'Register a webhook endpoint for some events; its signing secret is returned once',
  scopes: ['org:admin'],
  input: z.strictObject(webhookInput),
  output: WebhookSecret,
  rest: { method: 'POST', path: '/v1/webhooks', status: 201 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const webhookList = defineContract({
  name: 'webhook_list',
  mcp: false,
  description: 'The org’s webhook endpoints, oldest first (never their secrets)',
  scopes: ['org:admin'],
  input: z.strictObject({}),
  output: z.array(WebhookView),
  rest: { method: 'GET', path: '/v1/webhooks' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const webhookDelete = defineContract({
  name: 'webhook_delete',
  mcp: false,
  description: 'Delete a webhook endpoint: nothing more is sent to it, and its delivery log goes with it',
  scopes: ['org:admin'],
  input: z.strictObject({ webhookId }),
  output: z.void(),
  rest: { method: 'DELETE', path: '/v1/webhooks/:webhookId', status: 204 },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const webhookRotateSecret = defineContract({
  name: 'webhook_rotate_secret',
  mcp: false,
  description: 'Issue a new signing secret (returned once). Deliveries from now on, retries included, are signed with it and, for overlapSeconds (a day unless given), with the secret it replaces too, then with it only',
  scopes: ['org:admin'],
  input: z.strictObject({
    webhookId,
    overlapSeconds: z.number().int().min(0).max(MAX_ROTATION_OVERLAP_SECS).optional()
      .describe('how long the replaced secret keeps signing beside the new one, so receivers can switch without rejecting a delivery: 0 to 604800 seconds, 86400 unless given; 0 stops it at once (a secret that leaked)'),
  }),
  output: WebhookSecret,
  rest: { method: 'POST', path: '/v1/webhooks/:webhookId/rotate-secret' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
})

export const webhookDeliveries = defineContract({
  name: 'webhook_deliveries',
  mcp: false,
  description: 'The delivery log of one endpoint, newest first: each event sent, its state and every attempt’s response status',
  scopes: ['org:admin'],
  input: z.strictObject({
    webhookId,
    before: idParam.optional().describe('the next of the previous page'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  }),
  output: DeliveryPage,
  rest: { method: 'GET', path: '/v1/webhooks/:webhookId/deliveries' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const webhookEnable = defineContract({
  name: 'webhook_enable',
  mcp: false,
  description: 'Enable an endpoint disabled after failing: its pending deliveries are attempted again, and new events are queued for it',
  scopes: ['org:admin'],
  input: z.strictObject({ webhookId }),
  output: WebhookView,
  rest: { method: 'POST', path: '/v1/webhooks/:webhookId/enable' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const webhookContracts = [webhookCreate, webhookList, webhookDelete, webhookRotateSecret, webhookDeliveries, webhookEnable] as const
