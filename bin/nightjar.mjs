#!/usr/bin/env node
// Entry point: registers the TypeScript loader, then runs the CLI.
import { register } from 'tsx/esm/api'
register()
const { main } = await import('../cli/main.ts')
const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
