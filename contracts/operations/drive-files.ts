// Driving actions: files uploaded into the session, uploads into inputs and downloads. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its node action
// (browser-pod/actions/files.ts) and its journal row (api-server/operations/sessions/drive-files.ts).
import { defineDrive } from './drive-kit.ts'

void defineDrive
export const fileContracts = [] as const
