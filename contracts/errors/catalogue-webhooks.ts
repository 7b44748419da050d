// Errors of webhooks. An endpoint's URL is held to the deny floor when
// it is registered (api-server/webhooks/destination.ts), and an org's endpoints are
// capped; an unknown or another org's endpoint is the one 404, errors.notFound('webhook').
import type { ApiEntry } from './entry.ts'

export const WEBHOOK_ERRORS = {
  webhookUrlRefused: {
    status: 400, code: 'bad_request', reason: 'webhook_url_refused', args: ['why'], spec: null,
    message: (why: string) => `webhook URL refused: ${why}`,
    when: 'registering a webhook whose URL is not https (http only for a host in NIGHTJAR_WEBHOOK_ALLOWED_HOSTS), carries userinfo, or is or resolves to an address under the deny floor, NIGHTJAR_DENY_CIDRS, loopback or a private network',
  },
  tooManyWebhooks: {
    status: 409, code: 'conflict', reason: 'too_many_webhooks', args: ['max'], spec: null,
    message: (max: number) => `the org already has its limit of ${max} webhook endpoints: delete one first (the limit is NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG)`,
    when: 'registering a webhook when the org has NIGHTJAR_WEBHOOK_MAX_ENDPOINTS_PER_ORG endpoints already',
  },
} as const satisfies Record<string, ApiEntry>
