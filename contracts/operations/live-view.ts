// Watching and taking over: the wire of the console's live view, shared by the pod
// (browser-pod/screencast.ts), the api-server's relay (console/live-socket.ts) and the
// page's script. page ⇄ api-server ⇄ pod ⇄ Chromium; input passes only while its person
// holds control, and nothing streams while a credential fill runs.
// Design: docs/sessions.md#watching-and-taking-over
import { z } from 'zod'

/** The pod's live-view WebSocket (pod token required, like every pod route). Not a JSON route. */
export const POD_LIVE_PATH = '/v1/live'

const coord = z.number().min(0).max(100_000)
const modifiers = z.number().int().min(0).max(15).optional().describe('CDP bit field: Alt=1, Ctrl=2, Meta=4, Shift=8')

/** One input event of a person holding control, in viewport CSS pixels. */
export const LiveInput = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('mouse'),
    event: z.enum(['mousePressed', 'mouseReleased', 'mouseMoved']),
    x: coord,
    y: coord,
    button: z.enum(['none', 'left', 'middle', 'right']).optional(),
    clickCount: z.number().int().min(0).max(3).optional(),
    modifiers,
  }),
  z.strictObject({
    type: z.literal('wheel'),
    x: coord,
    y: coord,
    deltaX: z.number().min(-100_000).max(100_000),
    deltaY: z.number().min(-100_000).max(100_000),
    modifiers,
  }),
  z.strictObject({
    type: z.literal('key'),
    event: z.enum(['keyDown', 'keyUp']),
    key: z.string().min(1).max(32),
    code: z.string().max(32).optional(),
    /** the character a keyDown types, if any (one grapheme) */
    text: z.string().max(8).optional(),
    keyCode: z.number().int().min(0).max(255).optional(),
    modifiers,
  }),
])
export type LiveInput = z.output<typeof LiveInput>

/** What the page is sent: from the pod (frame, page, paused, resumed) and from the api-server (control, ended). */
export const LiveEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('frame'), jpeg: z.string().describe('base64 JPEG'), width: z.number(), height: z.number() }),
  z.object({
    type: z.literal('page'), url: z.string(), acting: z.boolean().describe('the agent’s driving call is running at the pod'),
    tabs: z.array(z.object({ id: z.string(), url: z.string(), active: z.boolean() })).describe('the session’s open tabs, in the order they opened'),
  }),
  z.object({ type: z.literal('paused'), why: z.literal('credential_fill') }),
  z.object({ type: z.literal('resumed') }),
  z.object({ type: z.literal('control'), control: z.enum(['agent', 'human']), holder: z.string().nullable(), mine: z.boolean() }),
  z.object({ type: z.literal('ended') }),
])
export type LiveEvent = z.output<typeof LiveEvent>
