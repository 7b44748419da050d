// Errors of the toolbox (issue #16): tabs, dialogs and the viewport.
import type { ApiEntry } from './entry.ts'

export const TAB_ERRORS = {} as const satisfies Record<string, ApiEntry>
