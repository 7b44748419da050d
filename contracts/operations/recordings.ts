// Session recordings: a recorded session's metadata and its timeline —
// rrweb events (a DOM timeline: snapshots, mutations, scrolls, masked input), as the
// console's replay page plays them. REST only (`mcp: false`: the MCP tool set is fixed).
// A session of another org, an unknown one and one that was not recorded answer the same 404.
import { z } from 'zod'
import { defineContract } from './types.ts'
import { isoTime, sessionId } from './fields.ts'

const RECORDING_READ_SCOPES = ['sessions:write'] as const

export const RecordingView = z.object({
  sessionId: z.string().describe('the session (nsess_…)'),
  format: z.literal('rrweb').describe('rrweb events (https://github.com/rrweb-io/rrweb), replayable with its Replayer'),
  startedAt: isoTime,
  endedAt: isoTime.nullable().describe('null while the session still records'),
  bytes: z.number().int().min(0).describe('JSON bytes stored'),
  events: z.number().int().min(0),
  dropped: z.number().int().min(0).describe('events the browser pod dropped because nobody read them in time'),
  eventsUrl: z.string().describe('where to download the timeline (GET, same credential)'),
  consoleUrl: z.string().describe('the console page that replays it'),
})

export const RecordingEvents = z.object({
  sessionId: z.string(),
  format: z.literal('rrweb'),
  events: z.array(z.record(z.string(), z.unknown())).describe('rrweb events in recorded order; every input value is masked'),
})

export const recordingGet = defineContract({
  name: 'session_recording_get',
  description: 'A recorded session’s recording: when, how large, where to download and replay it',
  scopes: RECORDING_READ_SCOPES,
  input: z.strictObject({ sessionId }),
  output: RecordingView,
  rest: { method: 'GET', path: '/v1/sessions/:sessionId/recording' },
  mcp: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const recordingEvents = defineContract({
  name: 'session_recording_events',
  description: 'Download a recorded session’s timeline (rrweb events, JSON); a live session’s is read up to now',
  scopes: RECORDING_READ_SCOPES,
  input: z.strictObject({ sessionId }),
  output: RecordingEvents,
  rest: { method: 'GET', path: '/v1/sessions/:sessionId/recording/events' },
  mcp: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
})

export const recordingContracts = [recordingGet, recordingEvents] as const
