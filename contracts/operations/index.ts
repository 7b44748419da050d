// Every operation contract, in the order MCP tools are listed. The api-server
// implements each (api-server/operations/registry.ts); the SDK and the OpenAPI
// document are derived from this list alone.
import { foundationContracts } from './foundation.ts'
import { personaContracts } from './personas.ts'
import { credentialRequestContracts } from './credential-requests.ts'
import { authstateContracts } from './authstate.ts'
import { sessionLifecycleContracts } from './sessions.ts'
import { sessionDriveContracts } from './drive.ts'
import { networkContracts } from './networks.ts'
import { recordingContracts } from './recordings.ts'
import { webhookContracts } from './webhooks.ts'
import { extensionContracts } from './extensions.ts'

export const contracts = [
  ...foundationContracts,
  ...personaContracts,
  ...credentialRequestContracts,
  ...authstateContracts,
  ...sessionLifecycleContracts,
  ...sessionDriveContracts,
  ...networkContracts,
  ...recordingContracts,
  ...webhookContracts,
  ...extensionContracts,
] as const

export type Contract = (typeof contracts)[number]
export type OperationName = Contract['name']
export type ContractOf<N extends OperationName> = Extract<Contract, { name: N }>
