// Driving actions: tabs, popups, go_forward, dialogs and the viewport. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its node action
// (browser-pod/actions/pages.ts) and its journal row (api-server/operations/sessions/drive-pages.ts).
import { defineDrive } from './drive-kit.ts'

void defineDrive
export const pageContracts = [] as const
