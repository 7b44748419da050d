// The SDK's types, from the operation contracts alone (types only: no server code and
// no zod at run time).
import type { z } from 'zod'
import type { ContractOf, OperationName } from '../contracts/operations/index.ts'

/** An operation the SDK can call: every operation has a REST binding (sdk/generated.ts routes). */
export type { OperationName }
/** What an operation takes: its contract's input, before defaults (optional fields may be left out). */
export type InputOf<N extends OperationName> = z.input<ContractOf<N>['input']>
/** What an operation answers: its contract's output (void for 204 no content). */
export type OutputOf<N extends OperationName> = z.output<ContractOf<N>['output']>

export type Call = <N extends OperationName>(name: N, input: InputOf<N>) => Promise<OutputOf<N>>
