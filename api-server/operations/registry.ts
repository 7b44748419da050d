// The single list of operations. REST routes, MCP tools, /openapi.json and the
// SDK are generated from it; each domain contributes one array.
import type { AnyOperation } from './types.ts'
import { foundationOperations } from './foundation/me.ts'
import { personaOperations } from './personas/index.ts'
import { sessionLifecycleOperations } from './sessions/lifecycle.ts'
import { sessionDriveOperations } from './sessions/drive.ts'

export const operations: readonly AnyOperation[] = [
  ...foundationOperations,
  ...personaOperations,
  ...sessionLifecycleOperations,
  ...sessionDriveOperations,
]
