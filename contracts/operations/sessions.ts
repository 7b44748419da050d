// Opening, reading, listing and ending sessions, and reading a session's journal.
import { z } from 'zod'
import { SANDBOX_KINDS } from '../../crds/types.ts'
import { defineContract } from './types.ts'
import { personText } from '../person-text.ts'
import { VIDEO_FORMATS, browserKind, egressMode, httpUrl, identityRef, isoTime, networkRef, sessionId, viewport } from './fields.ts'
import { proxySetting, proxyView } from './proxy.ts'
import { extensionIds } from './extensions.ts'

const SESSIONS = ['sessions:write'] as const

// --- results -------------------------------------------------------------------------


/** The session object every session operation answers with. */
export const SessionView = z.object({
  id: z.string().describe('session id (nsess_…)'),
  status: z.enum(['pending', 'live', 'ended', 'failed']),
  egress: egressMode,
  network: z.string().nullable().describe('id of the network the session tunnels to, if any'),
  openedBy: z
    .object({ principalId: z.string(), credentialId: z.string(), name: z.string() })
    .describe('who opened it: the acting agent, the credential and its name'),
  identity: z.string().nullable().describe('id of the bound identity (nident_…), if any'),
  agentId: z.string().describe('the agent the session belongs to (a child agent for a spawned session)'),
  browserKind,
  url: z.string().nullable().describe('the url recorded at start (not navigated)'),
  viewport: z.object({ width: z.number().int(), height: z.number().int() }).nullable(),
  createdAt: isoTime,
  liveAt: isoTime.nullable(),
  endedAt: isoTime.nullable(),
  failureReason: z.string().optional().describe('present on a failed session: why it failed'),
  sandbox: z.enum(SANDBOX_KINDS).optional().describe("present once live: what isolates the session's pages — chromium (Chromium's own sandbox), chromium+gvisor (and gVisor's kernel), gvisor, or none (the operator turned Chromium's sandbox off)"),
  idleTimeoutSecs: z.number().int().nullable().describe('the session ends after this long without a driving call'),
  maxDurationSecs: z.number().int().nullable().describe('and at the latest this long after it went live'),
  endReason: z.string().optional().describe('present when the session ended on its own: idle_timeout or max_duration'),
  queuePosition: z.number().int().min(1).optional().describe('present while a start waits for a browser: its place in line (1 = next)'),
  proxy: proxyView.optional().describe('present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates'),
  control: z.enum(['agent', 'human']).describe('who drives the browser: the agent, or a person who took control in the console (driving tools then answer 409 human_in_control until they hand it back)'),
  extensions: z.array(z.string()).optional().describe('present when the session loads browser extensions (next_…): a sealed fill runs only while every one of them is trusted (docs/extensions.md)'),
})

export const SessionList = z.object({ items: z.array(SessionView) })

/** One value-free journal row: operation names, selectors, verbs, sizes and outcomes — never typed text, secrets or page content. */
export const JournalRow = z.object({
  id: z.string().regex(/^\d+$/).describe('increasing row id; pass it as `after` to read on from here'),
  op: z.string().describe('the operation, e.g. session_start, navigate, act'),
  detail: z.record(z.string(), z.unknown()).describe('what the journal keeps of the call (value-free)'),
  outcome: z.enum(['ok', 'error']),
  errorCode: z.string().optional().describe('present when outcome is error'),
  durationMs: z.number().int().optional().describe('present for driving actions'),
  at: isoTime,
})

export const JournalPage = z.object({ items: z.array(JournalRow) })

// --- operations ----------------------------------------------------------------------

const startFields = {
  identity: identityRef.optional().describe('identity id (nident_…) or name to bind'),
  egress: egressMode.optional().describe('local, split or platform; omitted uses the agent default'),
  network: networkRef.optional().describe('network name, slug or id, for local or split egress'),
  viewport: viewport.optional(),
}

/** How long a start waits for its browser before answering with the pending session over MCP (REST: NIGHTJAR_START_ANSWER_SECONDS, 5 s, or Prefer: wait=N). */
export const START_WAIT_DEFAULT_SECS = { mcp: 30 } as const
export const START_WAIT_MAX_SECS = 120

const waitSeconds = (what: string) => z.number().int().min(0).max(START_WAIT_MAX_SECS).optional().describe(what)

export const sessionStart = defineContract({
  name: 'session_start',
  description: `Open a browser session, optionally binding a persona; url is recorded but not navigated. Answers live, or pending when the browser is not live within waitSeconds (default ${START_WAIT_DEFAULT_SECS.mcp} s): the start goes on, and session_get with waitSeconds waits for it`,
  scopes: SESSIONS,
  input: z.strictObject({
    ...startFields,
    url: httpUrl.optional(),
    browserKind: browserKind.optional(),
    warmResume: z.boolean().optional(),
    fromVersion: z.string().regex(/^niver_[0-9A-Za-z]{1,40}$/, 'must be a version id (niver_…)').optional(),
    agent: z.string().max(200).optional().describe('REST/SDK only: empty or the credential’s own agent'),
    // the spec fixes session_start's tool inputs; lifetimes are a REST/SDK extension
    idleTimeoutSecs: z.number().int().min(10).max(7 * 86400).optional().describe('REST/SDK only: end the session after this long without a driving call (at most the server’s value)'),
    maxDurationSecs: z.number().int().min(10).max(7 * 86400).optional().describe('REST/SDK only: end the session this long after it went live (at most the server’s value)'),
    record: z.boolean().optional().describe('REST/SDK only: record the session (a DOM timeline; GET /v1/sessions/{sessionId}/recording); left out, the org default (governance recordSessions) decides'),
    video: z.union([
      z.boolean(),
      z.strictObject({
        format: z.enum(VIDEO_FORMATS).optional().describe('webm (VP9, the default) or mp4 (H.264)'),
        fps: z.number().int().min(1).max(30).optional().describe('frames per second (default 5)'),
        width: z.number().int().min(320).max(1920).optional().describe('the video’s width in pixels (default the viewport’s); its height keeps the viewport’s aspect'),
      }),
    ]).optional().describe('REST/SDK only: a video of what the page showed (GET /v1/sessions/{sessionId}/video once the session ended); true for the defaults; left out, the org default (governance videoSessions) decides'),
    proxy: proxySetting.optional().describe('REST/SDK only: an upstream proxy every page request goes through (docs/proxy.md); its host must be on the org allowlist (governance proxyHosts). Left out, the bound identity’s default proxy, if any'),
    extensions: extensionIds.optional().describe('REST/SDK only: browser extensions (next_…) the session loads, browserKind chromium only; left out, the bound identity’s default (how an MCP start loads them). A sealed fill runs only while every one is trusted by an org admin (docs/extensions.md)'),
    waitSeconds: waitSeconds(`how long to wait for the browser to be live before answering with the pending session (default ${START_WAIT_DEFAULT_SECS.mcp} s over MCP; over REST 5 s, or Prefer: wait=N)`),
  }),
  output: SessionView,
  restOnlyFields: ['agent', 'idleTimeoutSecs', 'maxDurationSecs', 'record', 'video', 'proxy', 'extensions'],
  rest: { method: 'POST', path: '/v1/sessions', status: 201, pendingStatus: 202 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const spawnAndStartSession = defineContract({
  name: 'spawn_and_start_session',
  description: 'Open a session as a named child of the calling agent (a distinct child principal with a provenance edge)',
  scopes: SESSIONS,
  input: z.strictObject({
    childName: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only'),
    ...startFields,
  }),
  output: SessionView,
  rest: { method: 'POST', path: '/v1/sessions/spawn', status: 201, pendingStatus: 202 },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
})

export const sessionGet = defineContract({
  name: 'session_get',
  description: 'One session of the caller’s org; with waitSeconds, waits up to that long for a pending session to go live (or fail)',
  scopes: SESSIONS,
  input: z.strictObject({
    sessionId,
    waitSeconds: z.coerce.number().int().min(0).max(START_WAIT_MAX_SECS).optional().describe('wait up to this long while the session is pending (default 0: answer at once)'),
  }),
  output: SessionView,
  rest: { method: 'GET', path: '/v1/sessions/:sessionId' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const sessionList = defineContract({
  name: 'session_list',
  description: 'Sessions of the caller’s org, newest first',
  scopes: SESSIONS,
  input: z.strictObject({
    status: z.enum(['pending', 'live', 'ended', 'failed']).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  }),
  output: SessionList,
  rest: { method: 'GET', path: '/v1/sessions' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const sessionEnd = defineContract({
  name: 'session_end',
  description: 'End a session and release its persona lease; idempotent',
  scopes: SESSIONS,
  input: z.strictObject({ sessionId }),
  output: SessionView,
  rest: { method: 'DELETE', path: '/v1/sessions/:sessionId' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
})

export const sessionJournal = defineContract({
  name: 'session_journal',
  description: 'The value-free journal of a session’s operations',
  scopes: SESSIONS,
  input: z.strictObject({
    sessionId,
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  }),
  output: JournalPage,
  rest: { method: 'GET', path: '/v1/sessions/:sessionId/journal' },
  mcp: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const CdpConnect = z.object({
  sessionId: z.string().describe('the session (nsess_…)'),
  url: z.string().describe('ws:// or wss:// URL of the session’s CDP endpoint: connect with the same Bearer credential as an Authorization header (Playwright connectOverCDP, Puppeteer connect)'),
  protocol: z.literal('cdp').describe('the Chrome DevTools Protocol, filtered: no proxy, download, file or browser-closing commands'),
  httpUrl: z.string().describe('http:// or https:// URL of the same endpoint with a short-lived token in its path, for clients that cannot set headers (Puppeteer browserURL, connectOverCDP with an http URL, chrome-remote-interface, agent-browser): it serves /json/version, /json/list and /json/protocol as Chrome does; good for this session’s CDP endpoint only, until httpUrlExpiresAt or the session ends; treat it as a secret'),
  httpUrlExpiresAt: z.string().describe('when httpUrl stops admitting new connections (ISO 8601); connections already open stay'),
})

export const sessionCdp = defineContract({
  name: 'session_cdp',
  description: 'Where to connect a CDP client (Playwright connectOverCDP, Puppeteer) to a live session, with this same Bearer credential; not on a session with a bound identity',
  scopes: ['sessions:drive'],
  input: z.strictObject({ sessionId }),
  output: CdpConnect,
  rest: { method: 'GET', path: '/v1/sessions/:sessionId/cdp' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const HumanRequest = z.object({
  sessionId: z.string().describe('the session (nsess_…)'),
  url: z.string().describe('the console’s live view of the session: send it to a person of the org; they watch, take control and hand back there'),
  status: z.enum(['pending', 'live', 'ended', 'failed']),
  proxy: proxyView.optional().describe('present when the session goes through an upstream proxy: its URL (never the credentials) and whether it authenticates'),
  control: z.enum(['agent', 'human']).describe('who drives now; poll session_get until control is agent again (driving tools answer 409 human_in_control meanwhile)'),
  elicitation: z.enum(['completed', 'declined', 'cancelled', 'expired']).optional().describe(
    'only over MCP with URL elicitation: the live view was sent to the user and the call waited — completed: the person handed control back; '
    + 'declined/cancelled: the user refused; expired: nobody handed back in time',
  ),
})

export const requestHuman = defineContract({
  name: 'request_human',
  description: 'Ask a person for help (a CAPTCHA, a second factor, a judgement call): returns the console URL where someone of the org watches the session live and can take control. While they hold it, driving tools answer 409 human_in_control; session_get shows control: agent again once they hand back. A client with URL elicitation is sent the live view and the call returns once control is handed back',
  scopes: ['sessions:drive'],
  input: z.strictObject({ sessionId, reason: personText(z.string().min(1).max(500)).describe('what the person should do; shown on the live view (no control, invisible or text-direction characters)') }),
  output: HumanRequest,
  rest: { method: 'POST', path: '/v1/sessions/:sessionId/request-human' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const sessionLifecycleContracts = [sessionStart, spawnAndStartSession, sessionGet, sessionList, sessionEnd, sessionJournal, sessionCdp, requestHuman] as const
