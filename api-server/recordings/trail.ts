// A session's trail and its timeline, for the console's inspector (console/inspector.ts).
// The trail is the pod's network log and console (dialogs included), read through the pod
// API's echo guard: live from the pod, or as kept beside a recorded or filmed session's
// recording and video when it ended (`<org>/<session>/trail.json`, swept with them). The
// timeline is the journal and the trail on one clock: a pure function of the two.
// Design: docs/sessions.md#the-session-inspector
import type { PodOutput } from '../../contracts/pod-api.ts'
import type { RecordingStore } from './store.ts'

type NetworkEntry = PodOutput<'network_requests'>['requests'][number]
type ConsoleEntry = PodOutput<'console_messages'>['messages'][number]

export interface Trail {
  network: NetworkEntry[]
  /** requests the pod's log dropped before this read (it keeps the newest NETWORK_LOG_LIMIT) */
  networkDropped: number
  console: ConsoleEntry[]
  /** epoch ms of the video's first frame, when the session was filmed: the video's time 0 */
  videoStartedAt: number | null
}

/** the pod API's two reads, as the trail needs them (PodClient.drive) */
export interface TrailSource {
  drive(name: 'network_requests', input: Record<string, never>): Promise<PodOutput<'network_requests'>>
  drive(name: 'console_messages', input: Record<string, never>): Promise<PodOutput<'console_messages'>>
}

export const trailKey = (orgId: string, sessionId: string) => `${orgId}/${sessionId}/trail.json`

/** Reads a live session's trail from its pod. */
export async function readLiveTrail(pod: TrailSource): Promise<Omit<Trail, 'videoStartedAt'>> {
  const [network, logged] = await Promise.all([pod.drive('network_requests', {}), pod.drive('console_messages', {})])
  return { network: network.requests, networkDropped: network.dropped, console: logged.messages }
}

export async function storeTrail(store: RecordingStore, orgId: string, sessionId: string, trail: Trail): Promise<void> {
  await store.put(trailKey(orgId, sessionId), Buffer.from(JSON.stringify(trail)))
}

/** The trail kept when the session ended; null when none was (neither recorded nor filmed, or its pod was gone). */
export async function readStoredTrail(store: RecordingStore, orgId: string, sessionId: string): Promise<Trail | null> {
  const blob = await store.get(trailKey(orgId, sessionId))
  return blob ? (JSON.parse(blob.toString('utf8')) as Trail) : null
}

// --- the timeline ----------------------------------------------------------------------------

export const TIMELINE_KINDS = ['call', 'navigation', 'request', 'console', 'dialog', 'person'] as const
export type TimelineKind = (typeof TIMELINE_KINDS)[number]

export interface TimelineEvent {
  /** epoch ms when it began (a call: when it was made, not when it was journalled) */
  at: number
  kind: TimelineKind
  /** the tool or the request, in a few words */
  title: string
  /** the arguments as journalled, the status and type, or the message */
  detail: string
  outcome: 'ok' | 'error' | null
  durationMs: number | null
}

/** a journal row as the store reads it */
export interface JournalRow {
  at: string
  op: string
  detail?: unknown
  outcome: 'ok' | 'error'
  errorCode?: string
  durationMs?: number
}

/** what a person did: took over, handed back, was asked for, watched */
const PERSON_OPS = new Set(['human_take_control', 'human_hand_back', 'request_human', 'live_view_open', 'live_view_close'])
/** calls that load a page */
const NAVIGATION_OPS = new Set(['navigate', 'go_back', 'go_forward', 'reload', 'tab_open'])
/** one event's detail, at most this many characters (the table stays readable; the REST reads hold the rest) */
const DETAIL_CHARS = 400

function clip(text: string): string {
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS - 1)}…` : text
}

function callDetail(row: JournalRow): string {
  const args = row.detail && typeof row.detail === 'object' && Object.keys(row.detail).length ? JSON.stringify(row.detail) : ''
  return clip([args, row.errorCode ?? ''].filter(Boolean).join(' · '))
}

function fromJournal(row: JournalRow): TimelineEvent {
  const ended = Date.parse(row.at)
  const durationMs = row.durationMs ?? null
  const kind: TimelineKind = PERSON_OPS.has(row.op) ? 'person' : NAVIGATION_OPS.has(row.op) ? 'navigation' : 'call'
  // the journal writes a row when the call ends; it began its duration earlier
  return { at: ended - (durationMs ?? 0), kind, title: row.op, detail: callDetail(row), outcome: row.outcome, durationMs }
}

function fromRequest(r: NetworkEntry): TimelineEvent {
  const failed = r.failure !== null || (r.status !== null && r.status >= 400)
  const state = r.failure ?? (r.status === null ? 'no response yet' : String(r.status))
  return {
    at: r.startedAt,
    // a document request is a page (or frame) loading, whoever asked for it
    kind: r.resourceType === 'document' ? 'navigation' : 'request',
    title: clip(`${r.method} ${r.url}`),
    detail: `${state} · ${r.resourceType}`,
    outcome: failed ? 'error' : r.durationMs === null ? null : 'ok',
    durationMs: r.durationMs,
  }
}

function fromConsole(m: ConsoleEntry): TimelineEvent {
  const dialog = m.type === 'dialog'
  return { at: m.time, kind: dialog ? 'dialog' : 'console', title: dialog ? 'dialog' : `console.${m.type}`, detail: clip(m.text), outcome: m.type === 'error' ? 'error' : null, durationMs: null }
}

/** The journal and the trail on one timeline, oldest first (ties keep the journal first: the call caused what follows). */
export function sessionTimeline(journal: JournalRow[], trail: Pick<Trail, 'network' | 'console'> | null): TimelineEvent[] {
  const events = [
    ...journal.map(fromJournal),
    ...(trail?.network ?? []).map(fromRequest),
    ...(trail?.console ?? []).map(fromConsole),
  ]
  // a stable sort: equal times keep the order above
  return events.filter((e) => Number.isFinite(e.at)).sort((a, b) => a.at - b.at)
}
