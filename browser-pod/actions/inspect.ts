// The node's actions for contracts/operations/drive-inspect.ts.
import type { inspectContracts } from '../../contracts/operations/drive-inspect.ts'
import type { ActionTable } from './types.ts'

export const inspectActions: Pick<ActionTable, (typeof inspectContracts)[number]['name']> = {}
