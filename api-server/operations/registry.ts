// The single list of operations: each contract of contracts/operations/index.ts,
// implemented, in the same order (a test holds them to it). REST routes, MCP tools
// and /openapi.json are generated from it; each domain contributes one array.
import type { AnyOperation } from './types.ts'
import { foundationOperations } from './foundation/me.ts'
import { personaOperations } from './personas/index.ts'
import { credentialRequestOperations } from './personas/credential-request.ts'
import { sessionLifecycleOperations } from './sessions/lifecycle.ts'
import { sessionDriveOperations } from './sessions/drive.ts'
import { networkOperations } from './networks/index.ts'
import { authstateOperations } from './authstate/index.ts'
import { recordingOperations } from './recordings/index.ts'
import { webhookOperations } from './webhooks/index.ts'
import { extensionOperations } from './extensions/index.ts'

export const operations: readonly AnyOperation[] = [
  ...foundationOperations,
  ...personaOperations,
  ...credentialRequestOperations,
  ...authstateOperations,
  ...sessionLifecycleOperations,
  ...sessionDriveOperations,
  ...networkOperations,
  ...recordingOperations,
  ...webhookOperations,
  ...extensionOperations,
]
