#!/usr/bin/env node
// Entry point: runs the CLI's TypeScript sources. Node 24 strips the types itself (the
// images run that way: no transpiler in them); an older Node registers tsx first, a dev
// dependency, so a checkout still runs there.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api')
  register()
}
const { main } = await import('../cli/main.ts')
const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
