// The api-server's rows for the driving actions of contracts/operations/drive-tabs.ts:
// what the journal keeps of each (never typed text, page content or bytes).
import type { tabContracts } from '../../../contracts/operations/drive-tabs.ts'
import { journalUrl, nothing, type DriveSpecs } from './drive-spec.ts'

export const tabDrives: DriveSpecs<(typeof tabContracts)[number]['name']> = {
  go_forward: { journal: nothing },
  tab_list: { journal: nothing },
  tab_open: { journal: ({ url }) => ({ url: url === undefined ? undefined : journalUrl(url) }) },
  tab_select: { journal: ({ tabId }) => ({ tabId }) },
  tab_close: { journal: ({ tabId }) => ({ tabId }) },
  // the prompt text is typed into the page: only its size is kept
  dialog_handle: { journal: ({ action, promptText }) => ({ action, promptTextLength: promptText?.length }) },
  resize: { journal: ({ width, height }) => ({ width, height }) },
}
