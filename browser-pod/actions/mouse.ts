// The node's actions for contracts/operations/drive-mouse.ts.
import type { mouseContracts } from '../../contracts/operations/drive-mouse.ts'
import type { ActionTable } from './types.ts'

export const mouseActions: Pick<ActionTable, (typeof mouseContracts)[number]['name']> = {}
