// The node's actions for contracts/operations/drive-pages.ts.
import type { pageContracts } from '../../contracts/operations/drive-pages.ts'
import type { ActionTable } from './types.ts'

export const tabActions: Pick<ActionTable, (typeof pageContracts)[number]['name']> = {}
