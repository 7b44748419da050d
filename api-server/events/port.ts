// The one port through which the domain says what happened to an org's sessions and
// requests (session.live, session.ended, session.failed,
// human.requested, credential_request.created, credential_request.answered). Sessions,
// personas and the operations emit here; webhooks/ is what listens (it stores a delivery
// for every endpoint subscribed, before anything is sent). The domain never learns who
// listens, and a room that emits imports nothing of webhooks/.
import type { WebhookEventData, WebhookEventType } from '../../contracts/operations/webhooks.ts'

/** One event of one org: its type and its value-free data (contracts/operations/webhooks.ts). */
export type OrgEvent = { [T in WebhookEventType]: { orgId: string; type: T; data: WebhookEventData<T> } }[WebhookEventType]

export interface OrgEvents {
  /**
   * Records the event for whoever subscribed; resolves once it is stored. Never throws: the
   * state change it reports has happened already, so a failure to record it is logged by
   * the listener and the caller goes on.
   */
  emit(event: OrgEvent): Promise<void>
}
