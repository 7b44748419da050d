// Errors of the toolbox (issue #16): reach grants.
import type { ApiEntry } from './entry.ts'

export const REACH_ERRORS = {} as const satisfies Record<string, ApiEntry>
