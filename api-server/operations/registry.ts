// The single list of operations. REST routes, MCP tools, /openapi.json and the
// SDK are generated from it; each domain contributes one array.
import type { AnyOperation } from './types.ts'
import { foundationOperations } from './foundation/me.ts'

export const operations: readonly AnyOperation[] = [
  ...foundationOperations,
]
