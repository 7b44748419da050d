// The node's actions for contracts/operations/drive-files.ts.
import type { fileContracts } from '../../contracts/operations/drive-files.ts'
import type { ActionTable } from './types.ts'

export const fileActions: Pick<ActionTable, (typeof fileContracts)[number]['name']> = {}
