// The browser pod's API, declared once: every route's method, path, schemas, whether
// it needs the pod token or carries secrets, and which result fields the echo guard
// leaves alone. The pod serves it, the api-server and operator call it. Driving routes are
// derived from their operation contracts (operations/drive.ts). Inputs are non-strict, so
// an unknown field from a newer caller is dropped, not refused.
import { z } from 'zod'
import { EGRESS_MODES, SANDBOX_KINDS } from '../crds/types.ts'
import { type ConsoleMessage, driveContracts, type DriveContract, type DriveName } from './operations/drive.ts'
import { ONE_TARGET, VIDEO_FORMATS, elementRef, oneTarget, selector, timeoutMs, viewport, type VideoFormat } from './operations/fields.ts'
import { proxyUrlProblem } from './proxy.ts'

export type { DriveName }

export interface PodRoute<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST'
  path: string
  /** the request body (a GET has none: `{}` is parsed) */
  input: I
  /** the 2xx body */
  output: O
  /** false for the health probe only; every other route needs `Authorization: Bearer <pod token>` */
  auth: boolean
  /** carries secrets (credential values, auth-state): the pod never logs an error's details */
  secret: boolean
  /** top-level result fields the echo guard leaves alone (base64 payloads, or state sealed at once) */
  opaque: readonly string[]
}

// --- the pod's own routes ----------------------------------------------------------------

/** what isolates the pod's pages (browser-pod/sandbox.ts); optional so a pod of an older release still parses */
const sandbox = z.enum(SANDBOX_KINDS).optional()

export const HealthResult = z.object({ ok: z.literal(true), configured: z.boolean(), sandbox })

export const ConfigureInput = z.object({
  sessionId: z.string().min(1).max(200),
  egress: z.object({
    mode: z.enum(EGRESS_MODES),
    declaredHosts: z.array(z.string().max(300)).max(1000),
  }),
  viewport: viewport.optional(),
  /** Playwright storageState ({cookies, origins}) plus optional sessionStorage; restored before the first navigation. */
  storageState: z.record(z.string(), z.unknown()).optional(),
  userAgent: z.string().min(1).max(1000).optional(),
})
export const ConfigureResult = z.object({ ok: z.literal(true), sessionId: z.string(), sandbox })

export const SecureTypeInput = z.object({
  /** the field, by selector or by a ref from perceive (exactly one) */
  selector: selector.optional(),
  ref: elementRef.optional(),
  /** base64 of the secret; decoded into a Buffer that is zeroed after the fill. */
  value: z.string().min(1).max(100_000).regex(/^[A-Za-z0-9+/]*={0,2}$/),
  allowlist: z.array(z.string().max(300)).max(1000),
  requireEditableField: z.literal(true),
  timeoutMs: timeoutMs.optional(),
  /** true: the result says what the fill changed on the page (`changes`) */
  changes: z.boolean().optional(),
}).refine(oneTarget, ONE_TARGET)
export const EDITABLE_KINDS = ['text', 'password', 'email', 'textarea', 'contenteditable'] as const
export const SecureTypeResult = z.object({ ok: z.literal(true), fieldKind: z.enum(EDITABLE_KINDS), host: z.string(), changes: z.string().optional() })

/**
 * The session's upstream proxy (docs/proxy.md), sent by the api-server once the pod is
 * configured and before the session is live: the only place its credentials travel in
 * plaintext (the request bytes are zeroed after the reply, like secure_type's).
 */
export const EgressProxyInput = z.object({
  url: z.string().max(300).refine((u) => proxyUrlProblem(u) === null, 'must be http://, https:// or socks5:// host[:port] without credentials'),
  username: z.string().min(1).max(255).optional(),
  password: z.string().max(255).optional(),
  /** the platform names this proxy (NIGHTJAR_PLATFORM_PROXIES): it may be internal; otherwise it may not */
  platformProxy: z.boolean().optional(),
})

const NameValue = z.object({ name: z.string(), value: z.string() })
export const SessionStorageEntry = z.object({ origin: z.string(), entries: z.array(NameValue) })
export const StorageStateResult = z.object({
  cookies: z.array(z.record(z.string(), z.unknown())),
  origins: z.array(z.object({ origin: z.string(), localStorage: z.array(NameValue) })),
  sessionStorage: z.array(SessionStorageEntry),
})

const Empty = z.object({})

/** Recordings (browser-pod/recorder.ts): start recording every page; read what was recorded after `after` (acknowledging it). */
export const RecordingReadInput = z.object({
  after: z.number().int().min(0),
  /** ask each page to hand over the events it batches first (the read at the session's end) */
  flush: z.boolean().optional(),
})
export const RecordingReadResult = z.object({
  chunks: z.array(z.object({ seq: z.number().int().min(1), events: z.array(z.unknown()) })),
  /** more chunks wait: read again after the last seq */
  more: z.boolean(),
  /** events dropped because the pod's buffer was full (nobody read it) */
  dropped: z.number().int().min(0),
  recording: z.boolean(),
})

/** Video of a session (browser-pod/video.ts): the encoder's settings and bounds, chosen by the api-server. */
export { VIDEO_FORMATS, type VideoFormat }
export const VideoStartInput = z.object({
  format: z.enum(VIDEO_FORMATS),
  fps: z.number().int().min(1).max(30),
  width: z.number().int().min(320).max(1920),
  /** past this the video stops taking frames (truncated) */
  maxDurationMs: z.number().int().min(1000),
  /** past this the encoder stops writing (truncated) */
  maxBytes: z.number().int().min(64 * 1024),
})
export const VideoFinishResult = z.object({
  format: z.enum(VIDEO_FORMATS),
  bytes: z.number().int().min(0),
  durationMs: z.number().int().min(0),
  frames: z.number().int().min(0),
  /** a bound (duration or size) ended it before the session did */
  truncated: z.boolean(),
  /** epoch ms of the first frame (the video's time 0, for the inspector's timeline); null when nothing was filmed */
  startedAt: z.number().nullable(),
})
export const VideoReadInput = z.object({ offset: z.number().int().min(0) })
/** `data`: base64 of the file's bytes from `offset`, at most VIDEO_READ_BYTES of them */
export const VideoReadResult = z.object({ data: z.string(), bytes: z.number().int().min(0), eof: z.boolean() })
/** what one video_read carries at most (raw bytes; base64 is a third more) */
export const VIDEO_READ_BYTES = 4 * 1024 * 1024

/** One browser extension's files, checked by the api-server at upload (docs/extensions.md); the pod writes them under a private folder. */
export const ExtensionPutInput = z.object({
  id: z.string().regex(/^next_[0-9A-Za-z]{1,40}$/),
  files: z.array(z.object({ path: z.string().min(1).max(300), dataBase64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/) })).min(1).max(500),
})

const ownRoutes = {
  health: { method: 'GET', path: '/healthz', input: Empty, output: HealthResult, auth: false, secret: false, opaque: [] },
  // the storageState it may carry is credential-equivalent
  configure: { method: 'POST', path: '/v1/configure', input: ConfigureInput, output: ConfigureResult, auth: true, secret: true, opaque: [] },
  secure_type: { method: 'POST', path: '/v1/secure_type', input: SecureTypeInput, output: SecureTypeResult, auth: true, secret: true, opaque: [] },
  egress_proxy: { method: 'POST', path: '/v1/egress_proxy', input: EgressProxyInput, output: z.object({ ok: z.literal(true) }), auth: true, secret: true, opaque: [] },
  // credential-equivalent, and never shown to anyone: the api-server seals it at once (a
  // warm resume must restore a cookie that holds the secret exactly, not its mask)
  storage_state: {
    method: 'POST',
    path: '/v1/storage_state',
    input: Empty,
    output: StorageStateResult,
    auth: true,
    secret: true,
    opaque: ['cookies', 'origins', 'sessionStorage'],
  },
  recording_start: { method: 'POST', path: '/v1/recording/start', input: Empty, output: z.object({ ok: z.literal(true) }), auth: true, secret: false, opaque: [] },
  // every string of the events passes the echo guard again here (none is opaque)
  recording_read: { method: 'POST', path: '/v1/recording/read', input: RecordingReadInput, output: RecordingReadResult, auth: true, secret: false, opaque: [] },
  // an extension's files, then the browser that loads them (before the session is live)
  extension_put: { method: 'POST', path: '/v1/extensions/put', input: ExtensionPutInput, output: z.object({ ok: z.literal(true) }), auth: true, secret: false, opaque: [] },
  extensions_load: { method: 'POST', path: '/v1/extensions/load', input: Empty, output: z.object({ ok: z.literal(true), loaded: z.number().int() }), auth: true, secret: false, opaque: [] },
  video_start: { method: 'POST', path: '/v1/video/start', input: VideoStartInput, output: z.object({ ok: z.literal(true) }), auth: true, secret: false, opaque: [] },
  // ends the encoding (the file gets its duration and cues); idempotent
  video_finish: { method: 'POST', path: '/v1/video/finish', input: Empty, output: VideoFinishResult, auth: true, secret: false, opaque: [] },
  // pixels, not strings: the echo guard cannot read them (the field mask keeps a secret out of them)
  video_read: { method: 'POST', path: '/v1/video/read', input: VideoReadInput, output: VideoReadResult, auth: true, secret: false, opaque: ['data'] },
} as const satisfies Record<string, PodRoute>

/**
 * CDP connect: a WebSocket upgrade, not a JSON route (so not in the table below). Needs
 * the pod token like every route; the pod relays CDP messages to its Chromium through
 * a filter (browser-pod/cdp-proxy.ts), the api-server relays callers to it (api-server/cdp/).
 */
export const POD_CDP_PATH = '/v1/cdp'

/** The largest CDP message a client may send (a frame past it closes the socket, 1009). */
export const CDP_MAX_CLIENT_MESSAGE = 16 * 1024 * 1024
/** The largest CDP message the browser may send back (a full-page screenshot in base64 fits). */
export const CDP_MAX_BROWSER_MESSAGE = 128 * 1024 * 1024

// --- the driving routes, derived ---------------------------------------------------------

type AnyDrive = DriveContract<z.ZodObject, z.ZodType, string, z.ZodType>
/** the operation's input object without sessionId, non-strict */
type PodInputSchema<S extends z.ZodObject> = z.ZodObject<Omit<S['shape'], 'sessionId'>>
type PodOutputSchema<C extends AnyDrive> = NonNullable<C['pod']['output']>
type DriveRoute<C extends AnyDrive> = PodRoute<PodInputSchema<C['input']>, PodOutputSchema<C>> & { method: 'POST' }
type DriveRoutes = { [C in (typeof driveContracts)[number] as C['name']]: DriveRoute<C> }

/**
 * The pod's input for an operation's input schema: its shape without sessionId, with
 * the object-level refinements re-applied (zod refuses .omit() on a refined object, e.g.
 * wait_for's "exactly one of selector or text").
 */
function podInput<S extends z.ZodObject>(input: S): PodInputSchema<S> {
  const { sessionId: _sessionId, ...shape } = input.shape
  const schema = z.object(shape)
  const checks = (input.def.checks ?? []) as Array<z.core.$ZodCheck<Record<string, unknown>>>
  return (checks.length ? schema.check(...checks) : schema) as unknown as PodInputSchema<S>
}

function driveRoute<C extends AnyDrive>(c: C): DriveRoute<C> {
  return {
    method: 'POST',
    path: c.pod.path,
    input: podInput(c.input),
    output: (c.pod.output ?? c.output) as PodOutputSchema<C>,
    auth: true,
    secret: false,
    opaque: c.pod.opaque ?? [],
  }
}

const driveRoutes = Object.fromEntries(driveContracts.map((c) => [c.name, driveRoute(c)])) as DriveRoutes

// --- the table ---------------------------------------------------------------------------

export const podRoutes = { ...ownRoutes, ...driveRoutes }
export type PodRoutes = typeof podRoutes
export type PodRouteName = keyof PodRoutes

/** What a caller sends to a route (also what its handler is given: the schemas have no transforms). */
export type PodInput<N extends PodRouteName> = z.input<PodRoutes[N]['input']>
/** What a route answers with. */
export type PodOutput<N extends PodRouteName> = z.output<PodRoutes[N]['output']>

export type ConfigureInput = PodInput<'configure'>
export type ConfigureResult = PodOutput<'configure'>
export type HealthResult = PodOutput<'health'>
export type SecureTypeInput = PodInput<'secure_type'>
export type SecureTypeResult = PodOutput<'secure_type'>
export type EgressProxyInput = PodInput<'egress_proxy'>
export type EditableKind = SecureTypeResult['fieldKind']
export type StorageStateResult = PodOutput<'storage_state'>
export type SessionStorageEntry = z.output<typeof SessionStorageEntry>
export type ConsoleMessage = z.output<typeof ConsoleMessage>
