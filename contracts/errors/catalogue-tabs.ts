// Errors of the toolbox: tabs, dialogs and the viewport. An unknown tab
// (or one already closed) is the one 404, errors.notFound('tab'); a dialog never
// blocks a call (each is answered as it opens), so there is no dialog error.
import type { ApiEntry } from './entry.ts'

export const TAB_ERRORS = {
  tabLimit: {
    status: 409, code: 'conflict', reason: 'tab_limit', message: (max: number) => `at most ${max} tabs can be open; close one first`, args: ['max'], spec: null,
    when: 'tab_open while the session already has the most tabs it may hold (a popup past the limit is closed as it opens)',
  },
} as const satisfies Record<string, ApiEntry>
