// Errors of the toolbox (issue #16): mouse and forms.
import type { ApiEntry } from './entry.ts'

export const MOUSE_ERRORS = {} as const satisfies Record<string, ApiEntry>
