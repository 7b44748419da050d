// Webhooks, built whole by the app: the events-port listener, the delivery worker, and what
// webhook_* calls. An event is stored with one due delivery per endpoint before anything is
// sent; every replica's worker keeps a bounded pool of attempts in flight, refilled from a
// claim that takes orgs and endpoints in turn, retries on a schedule, disables an endpoint
// that keeps failing, and starts with the app so pending deliveries survive a restart.
// Endpoint secrets are sealed under the org's data key; a rotated one signs beside the new
// one for its overlap, then the worker drops it. Design: docs/webhooks.md
import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../store/db.ts'
import type { Sealer, SealContext } from '../kms/index.ts'
import { noKmsError } from '../kms/index.ts'
import type { OrgEvent, OrgEvents } from '../events/port.ts'
import { errors } from '../../contracts/errors.ts'
import { recordAudit } from '../audit/audit.ts'
import { newId } from '../../contracts/ids.ts'
import { DEFAULT_ROTATION_OVERLAP_SECS, type WebhookEventType } from '../../contracts/operations/webhooks.ts'
import { Destinations, type DestinationSettings } from './destination.ts'
import { attempt } from './sender.ts'
import {
  claimDue, deleteEndpoint, disableIfFailing, dropExpiredSecrets, enableEndpoint, findEndpoint, insertEndpoint, listDeliveries, listEndpoints, recordAttempt,
  recordEvent, rotateEndpointSecret, sweepEvents, type ClaimBounds, type Claimed, type DeliveryRow, type Disabled, type EndpointRow,
} from './store.ts'

export interface WebhookSettings extends DestinationSettings {
  /** seconds to wait before each retry after a failed attempt; the delivery fails after the last */
  retrySecs: readonly number[]
  /** endpoints an org may register */
  maxEndpointsPerOrg: number
  /** attempts in flight in this replica's worker */
  workerConcurrency: number
  /** attempts in flight per org, every replica together; half of them at most to endpoints not answering */
  orgConcurrency: number
  /** attempts in flight per endpoint whose last attempt got a 2xx, every replica together (others: one) */
  endpointConcurrency: number
  /** an endpoint is disabled after this many failed attempts in a row ... */
  disableAfterFailures: number
  /** ... spanning at least this long */
  disableAfterSecs: number
}

export interface WebhooksDeps {
  db: Db
  sealer: Sealer
  log: FastifyBaseLogger
  now: () => number
  settings: WebhookSettings
}

export interface WebhookView {
  id: string
  url: string
  events: WebhookEventType[]
  description: string
  createdAt: string
  createdBy: string
  disabled: Disabled | null
  previousSecretExpiresAt: string | null
}

/** How often an idle worker looks for due deliveries (another replica's, retries coming due). */
const POLL_MS = 1000
/** A claimed row is another worker's again after this (a send takes at most ATTEMPT_TIMEOUT_MS). */
const LEASE_MS = 60_000
/** Events and their deliveries are kept this long (every retry schedule ends well before). */
const RETENTION_MS = 30 * 86_400_000
const SWEEP_EVERY_MS = 3600_000

const secretContext = (orgId: string, endpointId: string): SealContext => ({ orgId, kind: 'webhook_secret', ids: [endpointId] })
const asSecret = (key: Buffer) => `whsec_${key.toString('base64')}`
/** The endpoint as callers see it at `now`: an overlap that has ended reads null, dropped or not yet. */
const view = (e: EndpointRow, now: number): WebhookView => ({
  id: e.id, url: e.url, events: e.events, description: e.description, createdAt: e.createdAt, createdBy: e.createdBy, disabled: e.disabled,
  previousSecretExpiresAt: e.previousSecretExpiresAt && Date.parse(e.previousSecretExpiresAt) > now ? e.previousSecretExpiresAt : null,
})
/** The audit trail's actor for what the delivery worker decides on its own. */
const WORKER_ACTOR = 'nightjar:webhooks'
export const webhookNotFound = () => errors.notFound('webhook')

export class Webhooks implements OrgEvents {
  private readonly destinations: Destinations
  private readonly deps: WebhooksDeps
  private readonly bounds: ClaimBounds
  private timer: NodeJS.Timeout | undefined
  /** the claim running, if any: one at a time per worker */
  private filling: Promise<void> | undefined
  private again = false
  private stopped = true
  private lastSweep = 0
  private lastSecretDrop = 0
  /** the attempts in flight, each resolving once its outcome is recorded */
  private readonly inFlight = new Set<Promise<void>>()

  constructor(deps: WebhooksDeps) {
    this.deps = deps
    this.destinations = new Destinations(deps.settings)
    const s = deps.settings
    this.bounds = { endpoint: s.endpointConcurrency, org: s.orgConcurrency, orgQuiet: Math.max(1, Math.floor(s.orgConcurrency / 2)) }
  }

  // --- the events port ---------------------------------------------------------------

  async emit(event: OrgEvent): Promise<void> {
    const { db, log, now } = this.deps
    try {
      const body = JSON.stringify({ type: event.type, timestamp: new Date(now()).toISOString(), data: event.data })
      const queued = await recordEvent(db, event.orgId, { id: newId('nevt_'), type: event.type, body })
      if (queued) this.wake()
    } catch (err) {
      // the state change this reports has happened; losing the event is logged, never thrown over it
      log.error({ err, org: event.orgId, event: event.type }, 'could not record a webhook event')
    }
  }

  // --- endpoints ----------------------------------------------------------------------

  async create({ orgId, actor, url, events, description }: { orgId: string; actor: string; url: string; events: WebhookEventType[]; description?: string }): Promise<{ webhook: WebhookView; secret: string }> {
    const { db, sealer } = this.deps
    // fail closed before any work: a secret that cannot be sealed is never stored
    if (!sealer.enabled) throw noKmsError()
    const u = await this.destinations.checkForRegistration(url)
    const max = this.deps.settings.maxEndpointsPerOrg
    const id = newId('nwhk_')
    const key = randomBytes(32)
    try {
      const sealed = await sealer.seal(secretContext(orgId, id), key)
      const row = await insertEndpoint(db, orgId, {
        id, url: u.href, events, description: description ?? '', secretSealed: sealed, createdBy: actor, createdAt: new Date(this.deps.now()),
      }, max)
      if (!row) throw errors.tooManyWebhooks(max)
      return { webhook: view(row, this.deps.now()), secret: asSecret(key) }
    } finally {
      key.fill(0)
    }
  }

  async list({ orgId }: { orgId: string }): Promise<WebhookView[]> {
    const now = this.deps.now()
    return (await listEndpoints(this.deps.db, orgId)).map((e) => view(e, now))
  }

  async delete({ orgId, id }: { orgId: string; id: string }): Promise<void> {
    if (!(await deleteEndpoint(this.deps.db, orgId, id))) throw webhookNotFound()
  }

  /** Enables an endpoint disabled after failing: its pending deliveries go out again. Enabling an enabled one changes nothing. */
  async enable({ orgId, actor, id }: { orgId: string; actor: string; id: string }): Promise<WebhookView> {
    const out = await enableEndpoint(this.deps.db, orgId, id)
    if (!out) throw webhookNotFound()
    if (out.wasDisabled) {
      await recordAudit(this.deps.db, { orgId, actor, action: 'webhook.enable', targetType: 'webhook', targetId: id })
      this.wake()
    }
    return view(out.row, this.deps.now())
  }

  /**
   * A new secret, shown once; the replaced one keeps signing beside it for `overlapSecs`
   * (0: it stops at once, for a secret that leaked), sealed as it was, then is dropped.
   */
  async rotateSecret({ orgId, id, overlapSecs = DEFAULT_ROTATION_OVERLAP_SECS }: { orgId: string; id: string; overlapSecs?: number }): Promise<{ webhook: WebhookView; secret: string }> {
    const { db, sealer, now } = this.deps
    if (!sealer.enabled) throw noKmsError()
    if (!(await findEndpoint(db, orgId, id))) throw webhookNotFound()
    const key = randomBytes(32)
    try {
      const sealed = await sealer.seal(secretContext(orgId, id), key)
      const at = now()
      const row = await rotateEndpointSecret(db, orgId, id, sealed, overlapSecs > 0 ? new Date(at + overlapSecs * 1000) : null)
      if (!row) throw webhookNotFound()
      return { webhook: view(row, at), secret: asSecret(key) }
    } finally {
      key.fill(0)
    }
  }

  async deliveries({ orgId, id, page }: { orgId: string; id: string; page: { before?: string; limit: number } }): Promise<{ items: DeliveryRow[]; next: string | null }> {
    if (!(await findEndpoint(this.deps.db, orgId, id))) throw webhookNotFound()
    const items = await listDeliveries(this.deps.db, orgId, id, page)
    return { items, next: items.length === page.limit ? items[items.length - 1].id : null }
  }

  // --- the worker ---------------------------------------------------------------------

  /** Starts the worker: deliveries left pending by a stopped process go out now. */
  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.timer = setInterval(() => this.wake(), POLL_MS)
    this.timer.unref()
    this.wake()
  }

  /** Stops claiming; resolves once the attempts in flight are recorded (each is bounded by its timeout). */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.filling
    await Promise.all(this.inFlight)
  }

  /** Fills the pool now, or right after the claim running. */
  wake(): void {
    if (this.stopped) return
    if (this.filling) {
      this.again = true
      return
    }
    this.filling = this.fill()
      .catch((err) => this.deps.log.error({ err }, 'webhook delivery claim'))
      .finally(() => {
        this.filling = undefined
        if (this.again) {
          this.again = false
          this.wake()
        }
      })
  }

  /** Resolves when nothing is being claimed and nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.filling || this.inFlight.size) await Promise.all([this.filling, ...this.inFlight])
  }

  /** Claims for every free slot of the pool; each attempt that ends frees its slot and wakes this again. */
  private async fill(): Promise<void> {
    const { db, settings, now } = this.deps
    if (now() - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = now()
      await sweepEvents(db, new Date(now() - RETENTION_MS))
    }
    // a replaced secret is kept no longer than its overlap (give or take a poll); the claim
    // below never signs with one whose overlap has ended, dropped yet or not
    if (now() - this.lastSecretDrop >= POLL_MS) {
      this.lastSecretDrop = now()
      await dropExpiredSecrets(db, new Date(now()))
    }
    for (;;) {
      const free = settings.workerConcurrency - this.inFlight.size
      if (this.stopped || free <= 0) return
      const claimed = await claimDue(db, free, LEASE_MS, this.bounds, new Date(now()))
      for (const c of claimed) this.launch(c)
      // a short claim means nothing more may go out now, within the bounds
      if (claimed.length < free) return
    }
  }

  private launch(c: Claimed): void {
    const attempt: Promise<void> = this.deliver(c).finally(() => {
      this.inFlight.delete(attempt)
      this.wake()
    })
    this.inFlight.add(attempt)
  }

  private async deliver(c: Claimed): Promise<void> {
    const { db, log, settings } = this.deps
    try {
      const a = await this.attemptOnce(c)
      const delivered = a.error === null
      // the schedule's nth step follows the nth failed attempt
      const step = settings.retrySecs[c.attemptsBefore]
      await recordAttempt(db, c.id, a, delivered ? { delivered: true } : { delivered: false, retryInMs: step === undefined ? null : step * 1000 })
      if (!delivered) {
        log.info({ delivery: c.id, webhook: c.endpointId, status: a.responseStatus, error: a.error, attempt: c.attemptsBefore + 1 }, 'webhook attempt failed')
        const disabled = await disableIfFailing(db, c.endpointId, settings.disableAfterFailures, settings.disableAfterSecs)
        if (disabled?.disabled) await this.disabled(disabled.orgId, disabled.id, disabled.disabled)
      }
    } catch (err) {
      // the database did not take the outcome: the lease runs out and the row is claimed again
      log.error({ err, delivery: c.id, webhook: c.endpointId }, 'webhook attempt could not be recorded')
    }
  }

  /** An endpoint was just disabled: the audit trail, the log, and the event to the org's other endpoints. */
  private async disabled(orgId: string, webhookId: string, d: Disabled): Promise<void> {
    this.deps.log.warn({ org: orgId, webhook: webhookId, failures: d.failures, failingSince: d.failingSince }, 'webhook endpoint disabled after failing')
    await recordAudit(this.deps.db, { orgId, actor: WORKER_ACTOR, action: 'webhook.disable', targetType: 'webhook', targetId: webhookId, reason: d.reason })
    await this.emit({ orgId, type: 'webhook.disabled', data: { webhookId, reason: d.reason, failures: d.failures, failingSince: d.failingSince } })
  }

  /**
   * Opens the secrets just in time (the replaced one first, while its overlap lasts), sends,
   * zeroes them; a secret that does not open is a failed attempt like any other.
   */
  private async attemptOnce(c: Claimed) {
    const { sealer, log, now } = this.deps
    const keys: Buffer[] = []
    try {
      for (const sealed of [c.previousSecretSealed, c.secretSealed]) {
        if (sealed !== null) keys.push(await sealer.open(secretContext(c.orgId, c.endpointId), sealed))
      }
    } catch (err) {
      for (const k of keys) k.fill(0)
      log.error({ err, webhook: c.endpointId }, 'webhook secret could not be opened')
      return { at: new Date(now()).toISOString(), responseStatus: null, error: 'secret_unavailable', durationMs: 0 }
    }
    try {
      return await attempt(this.destinations, c.url, { id: c.eventId, body: c.body, keys }, now)
    } finally {
      for (const k of keys) k.fill(0)
    }
  }
}
