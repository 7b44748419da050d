// Driving actions: coordinates, drag and forms. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its pod action
// (browser-pod/actions/mouse.ts) and its journal row (api-server/operations/sessions/drive-mouse.ts).
import { z } from 'zod'
import { Changes, OkResult, defineDrive } from './drive-kit.ts'
import { ONE_TARGET, TARGET_HELP, changesArg, elementRef, oneTarget, selector, sessionId } from './fields.ts'

/** Viewport coordinates in CSS pixels from the top-left corner (the largest viewport is 7680x4320). */
const x = z.number().min(0).max(7680).describe('viewport x in CSS pixels, from the left edge')
const y = z.number().min(0).max(4320).describe('viewport y in CSS pixels, from the top edge')
const delta = z.number().min(-100_000).max(100_000)

/** The most fields one fill_form may set. */
export const FILL_FORM_MAX_FIELDS = 50
export const FORM_FIELD_KINDS = ['text', 'checkbox', 'radio', 'select'] as const

export const FormField = z.strictObject({
  selector: selector.optional(),
  ref: elementRef.optional(),
  value: z.union([z.string().max(100_000), z.boolean(), z.array(z.string().max(10_000)).min(1).max(1000)])
    .describe('text inputs and textareas: a string; checkboxes: true or false; radios: true; selects: an option value or label, or several for a multiple select'),
}).refine(oneTarget, ONE_TARGET)

export const FillFormResult = z.object({
  ok: z.literal(true),
  url: z.string(),
  /** what each field was, in the order given (never its value) */
  fields: z.array(z.object({ selector: z.string().optional(), ref: z.string().optional(), kind: z.enum(FORM_FIELD_KINDS) })),
  changes: Changes,
})

export const drag = defineDrive({
  name: 'drag',
  description: 'Drag one element onto another (press on the first, move, release on the second; HTML5 drag and drop included). Name each by ref (fromRef, toRef: from perceive’s snapshot) or by selector (from, to)',
  input: z.strictObject({
    sessionId,
    from: selector.optional().describe('the element to drag (or fromRef)'),
    fromRef: elementRef.optional().describe('the element to drag, by its ref from perceive (or from)'),
    to: selector.optional().describe('the element to drop it on (or toRef)'),
    toRef: elementRef.optional().describe('the element to drop it on, by its ref from perceive (or to)'),
    changes: changesArg,
  }).refine((v) => oneTarget({ selector: v.from, ref: v.fromRef }) && oneTarget({ selector: v.to, ref: v.toRef }), { message: 'give exactly one of from or fromRef, and exactly one of to or toRef' }),
  output: OkResult,
  restPath: 'drag',
  pod: { path: '/v1/drag' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

export const mouseClick = defineDrive({
  name: 'mouse_click',
  description: 'Click at viewport coordinates (for agents that read a screenshot): optional button and click count',
  input: z.strictObject({
    sessionId,
    x,
    y,
    button: z.enum(['left', 'right', 'middle']).optional().describe('default left'),
    clickCount: z.number().int().min(1).max(3).optional().describe('2 for a double click; default 1'),
    changes: changesArg,
  }),
  output: OkResult,
  restPath: 'mouse-click',
  pod: { path: '/v1/mouse_click' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
})

export const mouseMove = defineDrive({
  name: 'mouse_move',
  description: 'Move the mouse to viewport coordinates (hover effects, pointer tracking)',
  input: z.strictObject({ sessionId, x, y, steps: z.number().int().min(1).max(100).optional().describe('intermediate moves; default 1') }),
  output: OkResult,
  restPath: 'mouse-move',
  pod: { path: '/v1/mouse_move' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
})

export const mouseWheel = defineDrive({
  name: 'mouse_wheel',
  description: 'Turn the mouse wheel at a point (x and y; without them, where the mouse is): deltaX and deltaY in pixels scroll whatever is under it',
  input: z.strictObject({
    sessionId,
    x: x.optional(),
    y: y.optional(),
    deltaX: delta.optional().describe('positive scrolls right; default 0'),
    deltaY: delta.optional().describe('positive scrolls down; default 0'),
  })
    .refine((v) => (v.deltaX ?? 0) !== 0 || (v.deltaY ?? 0) !== 0, { message: 'give a non-zero deltaX or deltaY' })
    .refine((v) => (v.x === undefined) === (v.y === undefined), { message: 'give both x and y, or neither' }),
  output: OkResult,
  restPath: 'mouse-wheel',
  pod: { path: '/v1/mouse_wheel' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
})

export const fillForm = defineDrive({
  name: 'fill_form',
  description: `Fill several form fields at once (at most ${FILL_FORM_MAX_FIELDS}): text inputs, textareas, checkboxes, radios and selects; every field is checked before any is filled. Each field is named by ref (from perceive’s snapshot) or by selector, exactly one`,
  input: z.strictObject({ sessionId, fields: z.array(FormField).min(1).max(FILL_FORM_MAX_FIELDS), changes: changesArg }),
  output: FillFormResult,
  restPath: 'fill-form',
  pod: { path: '/v1/fill_form' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
})

export const mouseContracts = [drag, mouseClick, mouseMove, mouseWheel, fillForm] as const
