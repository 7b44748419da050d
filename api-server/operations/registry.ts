// The single list of operations. REST routes, MCP tools, /openapi.json and the
// SDK are generated from it; each domain contributes one array.
import type { AnyOperation } from './types.ts'
import { foundationOperations } from './foundation/me.ts'
import { personaOperations } from './personas/index.ts'
import { sessionLifecycleOperations } from './sessions/lifecycle.ts'
import { sessionDriveOperations } from './sessions/drive.ts'
import { networkOperations } from './networks/index.ts'
import { authstateOperations } from './authstate/index.ts'

/** Every operation, with its literal types (the SDK derives its method types from these). */
export const typedOperations = [
  ...foundationOperations,
  ...personaOperations,
  ...authstateOperations,
  ...sessionLifecycleOperations,
  ...sessionDriveOperations,
  ...networkOperations,
]

export const operations: readonly AnyOperation[] = typedOperations
export type RegistryOperation = (typeof typedOperations)[number]
