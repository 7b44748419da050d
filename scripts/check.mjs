#!/usr/bin/env node
// The inner loop (`npm run check`): the type check, the linter, then the unit phase of the
// test suite — minutes, where `npm test` builds a Kubernetes node. `--static` stops after
// the linter: `.ci/run` runs that before the whole suite.
//
// A type error or a lint finding stops here, before any test runs, and ends with the plain
// line CI reads ("N passed, N failed", the checks counted); otherwise the tests' own line ends it.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runningMajor, MIN_MAJOR, runUnderNode24 } from './node24.mjs'

const root = join(fileURLToPath(import.meta.url), '..', '..')
const args = process.argv.slice(2)
const staticOnly = args.includes('--static')

// the linter loads its rules from TypeScript (scripts/lint-rules.ts), which Node 24 runs as is
if (runningMajor() < MIN_MAJOR) {
  runUnderNode24([process.argv[1], ...args])
  await new Promise(() => {}) // the child's exit ends this process
}

const bin = (pkg, file) => join(root, 'node_modules', pkg, file)
const checks = [
  { name: 'typecheck (tsc --noEmit)', argv: [bin('typescript', 'bin/tsc'), '--noEmit', '-p', root] },
  { name: 'lint (eslint, zero findings)', argv: [bin('eslint', 'bin/eslint.js'), '--max-warnings=0', root] },
]
let failed = 0
for (const c of checks) {
  process.stdout.write(`# ${c.name}\n`)
  const r = spawnSync(process.execPath, c.argv, { cwd: root, stdio: 'inherit' })
  if (r.status === 0) process.stdout.write(`ok - ${c.name}\n`)
  else { failed++; process.stdout.write(`not ok - ${c.name} (exit ${r.status ?? r.signal})\n`) }
}
if (failed || staticOnly) {
  console.log(`${checks.length - failed} passed, ${failed} failed`)
  process.exit(failed ? 1 : 0)
}
const tests = spawnSync(process.execPath, [join(root, 'scripts', 'test.mjs'), '--phase', 'unit'], { cwd: root, stdio: 'inherit' })
process.exit(tests.status ?? 1)
