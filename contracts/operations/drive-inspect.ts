// Driving actions: the network request log and evaluate. Declared with defineDrive (drive.ts); the
// list below is appended to driveContracts, so each needs its node action
// (browser-pod/actions/inspect.ts) and its journal row (api-server/operations/sessions/drive-inspect.ts).
import { defineDrive } from './drive-kit.ts'

void defineDrive
export const inspectContracts = [] as const
