// Errors of the toolbox (issue #16): session files, uploads and downloads.
import type { ApiEntry } from './entry.ts'

export const FILE_ERRORS = {} as const satisfies Record<string, ApiEntry>
