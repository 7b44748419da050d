// Webhook rows (migration 020): endpoints, events and deliveries. Every read an org makes
// takes its org id: another org's endpoint is the same 404 as an unknown one. The worker's
// claim is the one query without an org: it serves every org's due deliveries.
import type { Db, Queryable } from '../store/db.ts'
import { tx } from '../store/db.ts'
import { newId } from '../../contracts/ids.ts'
import type { WebhookEventType } from '../../contracts/operations/webhooks.ts'

export interface EndpointRow {
  id: string
  orgId: string
  url: string
  events: WebhookEventType[]
  description: string
  secretSealed: string
  createdBy: string
  createdAt: string
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
})

const toDelivery = (r: Record<string, any>): DeliveryRow => ({
  id: r.id, webhookId: r.endpoint_id, eventId: r.event_id, eventType: r.event_type, state: r.state, attempts: r.attempts,
  nextAttemptAt: r.state === 'pending' ? iso(r.next_attempt_at) : null, createdAt: iso(r.created_at)!, deliveredAt: iso(r.delivered_at),
})

export async function insertEndpoint(db: Queryable, orgId: string, e: Omit<EndpointRow, 'orgId' | 'createdAt'> & { createdAt: Date }): Promise<EndpointRow> {
  const r = await db.query(
    `insert into webhook_endpoints (id, org_id, url, events, description, secret_sealed, created_by, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [e.id, orgId, e.url, e.events, e.description, e.secretSealed, e.createdBy, e.createdAt],
  )
  return toEndpoint(r.rows[0])
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

export async function setEndpointSecret(db: Queryable, orgId: string, id: string, secretSealed: string): Promise<boolean> {
  const r = await db.query('update webhook_endpoints set secret_sealed = $3 where id = $1 and org_id = $2', [id, orgId, secretSealed])
  return (r.rowCount ?? 0) > 0
}

/**
 * An event, and a due delivery for each endpoint of the org subscribed to its type, in one
 * transaction: once this resolves, the event survives a restart. Nothing is written when
 * no endpoint wants it. Returns how many deliveries were queued.
 */
export async function recordEvent(db: Db, orgId: string, e: { id: string; type: WebhookEventType; body: string }): Promise<number> {
  // most events of most orgs have no subscriber: one read, and no transaction, for those
  const any = await db.query('select 1 from webhook_endpoints where org_id = $1 and $2 = any(events) limit 1', [orgId, e.type])
  if (!any.rowCount) return 0
  return tx(db, async (c) => {
    const subscribed = await c.query('select id from webhook_endpoints where org_id = $1 and $2 = any(events)', [orgId, e.type])
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
  eventId: string
  body: string
  /** attempts made before this one */
  attemptsBefore: number
}

/**
 * Claims up to `limit` due deliveries for this worker: rows no other worker holds (SKIP
 * LOCKED), each leased by moving its next_attempt_at `leaseMs` ahead. A worker that dies
 * while sending leaves the row to be claimed again once the lease runs out; the receiver
 * then sees the same webhook-id twice, which the specification tells it to expect.
 */
export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<Claimed[]> {
  const r = await db.query(
    `with due as (
       select id from webhook_deliveries
        where state = 'pending' and next_attempt_at <= now()
        order by next_attempt_at limit $1
        for update skip locked)
     update webhook_deliveries d set next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
       from due, webhook_endpoints w, webhook_events e
      where d.id = due.id and w.id = d.endpoint_id and e.id = d.event_id
     returning d.id, d.org_id, d.endpoint_id, w.url, w.secret_sealed, d.event_id, e.body, jsonb_array_length(d.attempts) as attempts_before`,
    [limit, leaseMs],
  )
  return r.rows.map((x) => ({
    id: x.id, orgId: x.org_id, endpointId: x.endpoint_id, url: x.url, secretSealed: x.secret_sealed, eventId: x.event_id, body: x.body,
    attemptsBefore: Number(x.attempts_before),
  }))
}

/** One attempt's outcome: delivered, due again in `retryInMs`, or failed for good (retryInMs null). */
export async function recordAttempt(db: Queryable, id: string, attempt: Attempt, outcome: { delivered: true } | { delivered: false; retryInMs: number | null }): Promise<void> {
  const retryInMs = outcome.delivered ? null : outcome.retryInMs
  const state = outcome.delivered ? 'delivered' : retryInMs !== null ? 'pending' : 'failed'
  await db.query(
    `update webhook_deliveries set attempts = attempts || $2::jsonb, state = $3,
            next_attempt_at = case when $4::double precision is null then null else now() + make_interval(secs => $4::double precision / 1000) end,
            delivered_at = case when $3 = 'delivered' then now() else null end
      where id = $1 and state = 'pending'`,
    [id, JSON.stringify([attempt]), state, retryInMs],
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
