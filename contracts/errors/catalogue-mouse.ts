// Errors of the toolbox: mouse and forms.
import type { ApiEntry } from './entry.ts'

export const MOUSE_ERRORS = {
  outsideViewport: {
    status: 400, code: 'bad_request', reason: 'outside_viewport',
    message: (x: number, y: number, width: number, height: number) => `point (${x}, ${y}) is outside the ${width}x${height} viewport`, args: ['x', 'y', 'width', 'height'],
    spec: null, when: 'mouse_click, mouse_move or mouse_wheel at viewport coordinates beyond the page\'s viewport',
  },
  formFieldUnsupported: {
    status: 400, code: 'bad_request', reason: 'unsupported_field',
    message: (index: number, kind: string) => `fields[${index}]: a ${kind} cannot be filled (text inputs, textareas, checkboxes, radios and selects can)`, args: ['index', 'kind'],
    spec: null, when: 'fill_form naming an element that is not a text input, textarea, checkbox, radio or select (nothing is filled)',
  },
  formValueMismatch: {
    status: 400, code: 'bad_request', reason: 'field_value_mismatch',
    message: (index: number, kind: string, expected: string) => `fields[${index}]: a ${kind} takes ${expected}`, args: ['index', 'kind', 'expected'],
    spec: null, when: 'fill_form giving a field a value of the wrong kind, e.g. text for a checkbox (nothing is filled)',
  },
} as const satisfies Record<string, ApiEntry>
