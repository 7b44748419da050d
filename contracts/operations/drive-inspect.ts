// Driving actions: the network request log and evaluate. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its pod action
// (browser-pod/actions/inspect.ts) and its journal row (api-server/operations/sessions/drive-inspect.ts).
import { z } from 'zod'
import { defineDrive } from './drive-kit.ts'
import { sessionId } from './fields.ts'

/** How many requests the pod keeps (the newest). */
export const NETWORK_LOG_LIMIT = 500
/** The most JSON an evaluate result may carry, in characters. */
export const EVALUATE_MAX_RESULT = 512 * 1024
export const EVALUATE_MAX_CODE = 100_000

export const NetworkRequest = z.object({
  method: z.string(),
  url: z.string().describe('scheme, host and path: never the query, the fragment or userinfo (data: URLs read "data:")'),
  status: z.number().int().nullable().describe('the response status; null when the request failed or has no response yet'),
  resourceType: z.string().describe('document, stylesheet, image, media, font, script, xhr, fetch, websocket, other …'),
  startedAt: z.number().describe('epoch milliseconds'),
  durationMs: z.number().nullable().describe('until the response finished or the request failed; null while in flight (a response body the page never reads stays in flight)'),
  failure: z.string().nullable().describe('the network error (net::ERR_…) of a failed request'),
})
export const NetworkRequestsResult = z.object({
  requests: z.array(NetworkRequest).describe('oldest first'),
  /** requests recorded since the session began, including those the log no longer holds */
  total: z.number().int(),
  /** how many the log dropped (it keeps the newest NETWORK_LOG_LIMIT) */
  dropped: z.number().int(),
})

export const networkRequests = defineDrive({
  name: 'network_requests',
  description: `The requests the session’s pages made (the newest ${NETWORK_LOG_LIMIT} are kept): method, URL without its query, status, resource type and timing — never a header or a body`,
  input: z.strictObject({
    sessionId,
    urlContains: z.string().min(1).max(2000).optional().describe('only requests whose (query-less) url contains this'),
    method: z.string().min(1).max(20).optional().describe('only this method (GET, POST …)'),
    resourceType: z.string().min(1).max(40).optional().describe('only this resource type (document, fetch, xhr, image …)'),
    limit: z.coerce.number().int().min(1).max(NETWORK_LOG_LIMIT).optional().describe(`the newest this many that match; default ${NETWORK_LOG_LIMIT}`),
  }),
  output: NetworkRequestsResult,
  restPath: 'network',
  restMethod: 'GET',
  pod: { path: '/v1/network_requests' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const EvaluateResult = z.object({
  value: z.unknown().describe('the JSON value the code returned (null for undefined)'),
  type: z.enum(['undefined', 'null', 'boolean', 'number', 'string', 'array', 'object']).describe('what it was before JSON'),
})

export const evaluate = defineDrive({
  name: 'evaluate',
  description: 'Run JavaScript in the page and return its JSON result: an expression, or a function body that returns a value (await allowed). Refused on a session with a bound identity',
  input: z.strictObject({
    sessionId,
    expression: z.string().min(1).max(EVALUATE_MAX_CODE).describe('an expression (document.title) or a function body (const a = 1; return a + 1)'),
    timeoutMs: z.number().int().min(1).max(60_000).optional().describe('default 10000; a script still running then is terminated'),
  }),
  output: EvaluateResult,
  scopes: ['sessions:evaluate'],
  restPath: 'evaluate',
  pod: { path: '/v1/evaluate' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

export const inspectContracts = [networkRequests, evaluate] as const
