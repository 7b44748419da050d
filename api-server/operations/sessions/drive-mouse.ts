// The api-server's rows for the driving actions of contracts/operations/drive-mouse.ts:
// what the journal keeps of each (never typed text, page content or bytes).
import type { mouseContracts } from '../../../contracts/operations/drive-mouse.ts'
import type { DriveSpecs } from './drive-spec.ts'

export const mouseDrives: DriveSpecs<(typeof mouseContracts)[number]['name']> = {}
