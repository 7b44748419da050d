// The api-server's rows for the driving actions of contracts/operations/drive-pages.ts:
// what the journal keeps of each (never typed text, page content or bytes).
import type { pageContracts } from '../../../contracts/operations/drive-pages.ts'
import type { DriveSpecs } from './drive-spec.ts'

export const pageDrives: DriveSpecs<(typeof pageContracts)[number]['name']> = {}
