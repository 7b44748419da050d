// The api-server's rows for the driving actions of contracts/operations/drive-files.ts:
// what the journal keeps of each (never typed text, page content or bytes).
import type { fileContracts } from '../../../contracts/operations/drive-files.ts'
import type { DriveSpecs } from './drive-spec.ts'

export const fileDrives: DriveSpecs<(typeof fileContracts)[number]['name']> = {}
