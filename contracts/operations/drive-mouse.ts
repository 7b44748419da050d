// Driving actions: coordinates, drag and forms. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its node action
// (browser-pod/actions/mouse.ts) and its journal row (api-server/operations/sessions/drive-mouse.ts).
import { defineDrive } from './drive-kit.ts'

void defineDrive
export const mouseContracts = [] as const
