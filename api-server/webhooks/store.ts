// Webhook rows (migrations 022, 025, 026): endpoints, events and deliveries. Every read an org
// makes takes its org id: another org's endpoint is the same 404 as an unknown one. The
// worker's claim is the one query without an org: it serves every org's due deliveries,
// fairly (nightjar_webhook_claim, docs/webhooks.md#fair-delivery).
import type { Db, Queryable } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import type { WebhookEventType, WEBHOOK_DISABLE_REASONS } from '../../contracts/operations/webhooks.ts'

export type DisableReason = (typeof WEBHOOK_DISABLE_REASONS)[number]

/** Why and since when an endpoint is disabled; null while it is enabled. */
export interface Disabled {
  since: string
  reason: DisableReason
  failures: number
  failingSince: string
}

export interface EndpointRow {
  id: string
  orgId: string
  url: string
  events: WebhookEventType[]
  description: string
  secretSealed: string
  createdBy: string
  createdAt: string
  disabled: Disabled | null
  /** until when the secret a rotation replaced still signs beside the current one; null when none does */
  previousSecretExpiresAt: string | null
}

export interface Attempt {
  at: string
  responseStatus: number | null
  error: string | null
  durationMs: number
}

export interface DeliveryRow {
  id: string
  webhookId: string
  eventId: string
  eventType: WebhookEventType
  state: 'pending' | 'delivered' | 'failed'
  attempts: Attempt[]
  nextAttemptAt: string | null
  createdAt: string
  deliveredAt: string | null
}

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null)

const toEndpoint = (r: Record<string, any>): EndpointRow => ({
  id: r.id, orgId: r.org_id, url: r.url, events: r.events, description: r.description, secretSealed: r.secret_sealed,
  createdBy: r.created_by, createdAt: iso(r.created_at)!,
  disabled: r.disabled_at
    ? { since: iso(r.disabled_at)!, reason: r.disabled_reason, failures: r.disabled_failures, failingSince: iso(r.disabled_failing_since)! }
    : null,
  previousSecretExpiresAt: iso(r.previous_secret_expires_at),
})

const toDelivery = (r: Record<string, any>): DeliveryRow => ({
  id: r.id, webhookId: r.endpoint_id, eventId: r.event_id, eventType: r.event_type, state: r.state, attempts: r.attempts,
  nextAttemptAt: r.state === 'pending' ? iso(r.next_attempt_at) : null, createdAt: iso(r.created_at)!, deliveredAt: iso(r.delivered_at),
})

/** The new endpoint, or null when the org has `maxPerOrg` already (counted under the org row's lock, so a burst cannot pass it). */
export async function insertEndpoint(
  db: Db, orgId: string, e: Omit<EndpointRow, 'orgId' | 'createdAt' | 'disabled' | 'previousSecretExpiresAt'> & { createdAt: Date }, maxPerOrg: number,
): Promise<EndpointRow | null> {
  return tx(db, async (c) => {
    // no key update: it does not block inserts that reference the org
    await c.query('select 1 from orgs where id = $1 for no key update', [orgId])
    const n = await c.query('select count(*)::int as n from webhook_endpoints where org_id = $1', [orgId])
    if (n.rows[0].n >= maxPerOrg) return null
    const r = await c.query(
      `insert into webhook_endpoints (id, org_id, url, events, description, secret_sealed, created_by, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
      [e.id, orgId, e.url, e.events, e.description, e.secretSealed, e.createdBy, e.createdAt],
    )
    return toEndpoint(r.rows[0])
  })
}

export async function listEndpoints(db: Queryable, orgId: string): Promise<EndpointRow[]> {
  const r = await db.query('select * from webhook_endpoints where org_id = $1 order by created_at, id', [orgId])
  return r.rows.map(toEndpoint)
}

export async function findEndpoint(db: Queryable, orgId: string, id: string): Promise<EndpointRow | null> {
  const r = await db.query('select * from webhook_endpoints where id = $1 and org_id = $2', [id, orgId])
  return r.rows[0] ? toEndpoint(r.rows[0]) : null
}

export async function deleteEndpoint(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const r = await db.query('delete from webhook_endpoints where id = $1 and org_id = $2', [id, orgId])
  return (r.rowCount ?? 0) > 0
}

/**
 * Enables an endpoint disabled after failing, with a fresh count of failures; it is tried one
 * attempt at a time until it answers again. Null when the org has no such endpoint; an
 * enabled one is returned unchanged.
 */
export async function enableEndpoint(db: Queryable, orgId: string, id: string): Promise<{ row: EndpointRow; wasDisabled: boolean } | null> {
  const r = await db.query(
    `update webhook_endpoints set disabled_at = null, disabled_reason = null, disabled_failures = null, disabled_failing_since = null,
            failure_streak = 0, failing_since = null, last_success_at = null
      where id = $1 and org_id = $2 and disabled_at is not null
     returning *`,
    [id, orgId],
  )
  if (r.rows[0]) return { row: toEndpoint(r.rows[0]), wasDisabled: true }
  const row = await findEndpoint(db, orgId, id)
  return row ? { row, wasDisabled: false } : null
}

/**
 * Disables an endpoint whose attempts have all failed, `failures` of them at least, for
 * `forSecs` at least; null when it is not (yet) so, or was disabled already. One statement,
 * so of two attempts recorded at once only one disables it.
 */
export async function disableIfFailing(db: Queryable, endpointId: string, failures: number, forSecs: number): Promise<EndpointRow | null> {
  const r = await db.query(
    `update webhook_endpoints set disabled_at = now(), disabled_reason = 'consecutive_failures',
            disabled_failures = failure_streak, disabled_failing_since = failing_since
      where id = $1 and disabled_at is null and failure_streak >= $2 and failing_since <= now() - make_interval(secs => $3::double precision)
     returning *`,
    [endpointId, failures, forSecs],
  )
  return r.rows[0] ? toEndpoint(r.rows[0]) : null
}

/**
 * A new sealed secret; the one it replaces keeps signing until `previousUntil` (null: it is
 * dropped now). A secret an earlier rotation left signing is dropped either way: at most one
 * old secret signs beside the current. Null when the org has no such endpoint.
 */
export async function rotateEndpointSecret(db: Queryable, orgId: string, id: string, secretSealed: string, previousUntil: Date | null): Promise<EndpointRow | null> {
  // the right-hand sides read the row as it was: the previous secret is the one being replaced
  const r = await db.query(
    `update webhook_endpoints
        set previous_secret_sealed = case when $4::timestamptz is null then null else secret_sealed end,
            previous_secret_expires_at = $4::timestamptz, secret_sealed = $3
      where id = $1 and org_id = $2 returning *`,
    [id, orgId, secretSealed, previousUntil],
  )
  return r.rows[0] ? toEndpoint(r.rows[0]) : null
}

/** Drops every replaced secret whose overlap has ended by `now`; how many went. */
export async function dropExpiredSecrets(db: Queryable, now: Date): Promise<number> {
  const r = await db.query(
    'update webhook_endpoints set previous_secret_sealed = null, previous_secret_expires_at = null where previous_secret_expires_at <= $1',
    [now],
  )
  return r.rowCount ?? 0
}

/**
 * An event, and a due delivery for each endpoint of the org subscribed to its type, in one
 * transaction: once this resolves, the event survives a restart. Nothing is written when
 * no endpoint wants it. Returns how many deliveries were queued.
 */
export async function recordEvent(db: Db, orgId: string, e: { id: string; type: WebhookEventType; body: string }): Promise<number> {
  // most events of most orgs have no subscriber: one read, and no transaction, for those
  // a disabled endpoint is queued nothing until it is enabled again
  const subscribers = 'select id from webhook_endpoints where org_id = $1 and $2 = any(events) and disabled_at is null'
  const any = await db.query(`${subscribers} limit 1`, [orgId, e.type])
  if (!any.rowCount) return 0
  return tx(db, async (c) => {
    const subscribed = await c.query(subscribers, [orgId, e.type])
    if (!subscribed.rowCount) return 0
    await c.query('insert into webhook_events (id, org_id, type, body) values ($1, $2, $3, $4)', [e.id, orgId, e.type, e.body])
    const endpoints = subscribed.rows.map((x) => x.id as string)
    await c.query(
      // due at once, by the database's clock (the one every worker's claim reads)
      `insert into webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, next_attempt_at)
       select d, $1, w, $3, $4, now() from unnest($2::text[], $5::text[]) as t(w, d)`,
      [orgId, endpoints, e.id, e.type, endpoints.map(() => newId('nwdl_'))],
    )
    return endpoints.length
  })
}

/** A claimed delivery: what the worker needs to send it. */
export interface Claimed {
  id: string
  orgId: string
  endpointId: string
  url: string
  secretSealed: string
  /** the secret a rotation replaced, while its overlap lasts: it signs too */
  previousSecretSealed: string | null
  eventId: string
  body: string
  /** attempts made before this one */
  attemptsBefore: number
}

/** The fairness bounds of a claim (docs/webhooks.md#fair-delivery), across every replica. */
export interface ClaimBounds {
  /** attempts in flight per endpoint whose last attempt got a 2xx (others: one) */
  endpoint: number
  /** attempts in flight per org */
  org: number
  /** of those, to endpoints not answering (failing or not tried yet) */
  orgQuiet: number
}

/**
 * Claims up to `limit` due deliveries for this worker, within the bounds and taking orgs
 * in turn (nightjar_webhook_claim, under one advisory lock; rows another worker holds are
 * skipped, SKIP LOCKED). Each is leased by moving its next_attempt_at and leased_until
 * `leaseMs` ahead. A worker that dies while sending leaves the row to be claimed again once
 * the lease runs out; the receiver then sees the same webhook-id twice, which the
 * specification tells it to expect.
 */
export async function claimDue(db: Queryable, limit: number, leaseMs: number, bounds: ClaimBounds, now: Date): Promise<Claimed[]> {
  const ids = await db.query('select id from nightjar_webhook_claim($1, $2, $3, $4, $5) as c(id)', [limit, leaseMs, bounds.endpoint, bounds.org, bounds.orgQuiet])
  if (!ids.rowCount) return []
  // a statement of its own: its snapshot is newer than the claim's, so it sees every row claimed
  const r = await db.query(
    `select d.id, d.org_id, d.endpoint_id, w.url, w.secret_sealed, d.event_id, e.body, jsonb_array_length(d.attempts) as attempts_before,
            case when w.previous_secret_expires_at > $2 then w.previous_secret_sealed end as previous_secret_sealed
       from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id join webhook_events e on e.id = d.event_id
      where d.id = any($1::text[])`,
    [ids.rows.map((x) => x.id as string), now],
  )
  return r.rows.map((x) => ({
    id: x.id, orgId: x.org_id, endpointId: x.endpoint_id, url: x.url, secretSealed: x.secret_sealed, previousSecretSealed: x.previous_secret_sealed ?? null,
    eventId: x.event_id, body: x.body,
    attemptsBefore: Number(x.attempts_before),
  }))
}

/**
 * One attempt's outcome: delivered, due again in `retryInMs`, or failed for good (retryInMs
 * null). Ends the lease, and keeps the endpoint's health: a 2xx clears its run of failures,
 * anything else lengthens it.
 */
export async function recordAttempt(db: Queryable, id: string, attempt: Attempt, outcome: { delivered: true } | { delivered: false; retryInMs: number | null }): Promise<void> {
  const retryInMs = outcome.delivered ? null : outcome.retryInMs
  const state = outcome.delivered ? 'delivered' : retryInMs !== null ? 'pending' : 'failed'
  await db.query(
    `with d as (
       update webhook_deliveries set attempts = attempts || $2::jsonb, state = $3, leased_until = null,
              next_attempt_at = case when $4::double precision is null then null else now() + make_interval(secs => $4::double precision / 1000) end,
              delivered_at = case when $3 = 'delivered' then now() else null end
        where id = $1 and state = 'pending'
        returning endpoint_id)
     update webhook_endpoints w
        set failure_streak = case when $5 then 0 else w.failure_streak + 1 end,
            failing_since = case when $5 then null else coalesce(w.failing_since, now()) end,
            last_success_at = case when $5 then now() else w.last_success_at end
       from d where w.id = d.endpoint_id`,
    [id, JSON.stringify([attempt]), state, retryInMs, outcome.delivered],
  )
}

/** One endpoint's log, newest first, `before` a delivery id of the previous page. */
export async function listDeliveries(db: Queryable, orgId: string, endpointId: string, opts: { before?: string; limit: number }): Promise<DeliveryRow[]> {
  const r = await db.query(
    `select * from webhook_deliveries
      where org_id = $1 and endpoint_id = $2
        and ($3::text is null or seq < (select seq from webhook_deliveries where id = $3 and org_id = $1 and endpoint_id = $2))
      order by seq desc limit $4`,
    [orgId, endpointId, opts.before ?? null, opts.limit],
  )
  return r.rows.map(toDelivery)
}

/** Events (and so their deliveries) older than the retention go; every retry schedule ends well before. */
export async function sweepEvents(db: Queryable, olderThan: Date): Promise<void> {
  await db.query('delete from webhook_events where created_at < $1', [olderThan])
}
