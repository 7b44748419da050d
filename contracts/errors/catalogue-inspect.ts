// Errors of the toolbox (issue #16): the network log and evaluate.
import type { ApiEntry } from './entry.ts'

export const INSPECT_ERRORS = {} as const satisfies Record<string, ApiEntry>
