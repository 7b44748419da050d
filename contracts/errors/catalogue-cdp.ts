// Errors of the toolbox (issue #16): CDP connect.
import type { ApiEntry, UpgradeEntry } from './entry.ts'

export const CDP_ERRORS = {} as const satisfies Record<string, ApiEntry>

/** Refusals of the CDP WebSocket upgrade, before any WebSocket exists. */
export const CDP_UPGRADE_ERRORS = {} as const satisfies Record<string, UpgradeEntry>
