// The api-server's rows for the driving actions of contracts/operations/drive-inspect.ts:
// what the journal keeps of each (never typed text, page content or bytes).
import type { inspectContracts } from '../../../contracts/operations/drive-inspect.ts'
import type { DriveSpecs } from './drive-spec.ts'

export const inspectDrives: DriveSpecs<(typeof inspectContracts)[number]['name']> = {}
