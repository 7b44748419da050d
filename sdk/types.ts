// The SDK's types: plain TypeScript generated from the operation contracts (sdk/generated.ts),
// so a project using the SDK needs neither zod nor Node's type definitions.
import type { Operations } from './generated.ts'

/** An operation the SDK can call: every operation has a REST binding (sdk/generated.ts routes). */
export type OperationName = keyof Operations
/** What an operation takes: its contract's input, before defaults (optional fields may be left out). */
export type InputOf<N extends OperationName> = Operations[N]['input']
/** What an operation answers: its contract's output (void for 204 no content). */
export type OutputOf<N extends OperationName> = Operations[N]['output']

export type { Call } from './generated.ts'
