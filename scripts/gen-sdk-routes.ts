// Writes sdk/routes.ts from the operation registry: the SDK's method → REST route
// table. Run `node --import tsx scripts/gen-sdk-routes.ts`; a test fails when stale.
import { writeFileSync } from 'node:fs'
import { isEntryPoint } from '../contracts/entry-point.ts'
import { operations } from '../api-server/operations/registry.ts'

export function renderRoutes(): string {
  const rows = operations
    .filter((op) => op.rest)
    .map((op) => `  ${op.name}: { method: '${op.rest!.method}', path: '${op.rest!.path}' },`)
  return `// Generated from the operation registry by scripts/gen-sdk-routes.ts — do not edit.
export const routes = {
${rows.join('\n')}
} as const

export type OperationName = keyof typeof routes
`
}

if (isEntryPoint(import.meta.url)) {
  writeFileSync(new URL('../sdk/routes.ts', import.meta.url), renderRoutes())
}
