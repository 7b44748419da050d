// docs/configuration.md is the one place a person finds what a variable does. This reads
// every NIGHTJAR_* name the programs, the chart, the scripts and the benchmarks mention and
// fails naming each one the page does not list — a variable added to the code without a
// line of documentation is caught here, not by a confused operator.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

const ROOT = new URL('../../', import.meta.url).pathname
const READ_BY = ['api-server', 'browser-pod', 'operator', 'cli', 'tunnel', 'sdk', 'contracts', 'crds', 'bin', 'charts', 'scripts', 'bench', 'devcluster', 'test/cluster', 'docker']
const files = execFileSync('git', ['ls-files', ...READ_BY], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
const NAME = /\bNIGHTJAR_[A-Z0-9_]*[A-Z0-9]\b/g

function namesIn(text: string): Set<string> {
  return new Set(text.match(NAME) ?? [])
}

const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8')
// a variable counts as documented where it stands as a table row's first cell
const documented = new Set([...page.matchAll(/^\| `(NIGHTJAR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]))

t.test('every NIGHTJAR_* variable the code reads has a row in docs/configuration.md', async (t) => {
  const missing = new Map<string, string>()
  for (const f of files) {
    // the chart's CI values set a made-up NIGHTJAR_EXTRA to prove extraEnv passes through
    if (f.startsWith('charts/nightjar/ci/')) continue
    for (const n of namesIn(readFileSync(join(ROOT, f), 'utf8'))) if (!documented.has(n) && !missing.has(n)) missing.set(n, f)
  }
  t.same([...missing].map(([n, f]) => `${n} (${f})`), [], 'undocumented variables (name, first file that reads it)')
  t.ok(documented.size >= 90, `the page lists the variables (${documented.size})`)
})

t.test('the check can fail: a name the page lacks is reported', async (t) => {
  t.notOk(documented.has('NIGHTJAR_NOT_A_REAL_SETTING'))
  t.ok(namesIn('process.env.NIGHTJAR_NOT_A_REAL_SETTING ?? 1').has('NIGHTJAR_NOT_A_REAL_SETTING'))
})

t.test('the README points to the configuration reference', async (t) => {
  t.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), /docs\/configuration\.md/)
})
