// The layering rules of docs/ARCHITECTURE.md, read from the import statements of every
// source file: imports point down only, the leaves stay leaves, and no file imports
// itself back through a cycle. A rule broken names the file and the import.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join, normalize } from 'node:path'

const ROOT = new URL('../', import.meta.url).pathname
const SOURCE_DIRS = ['api-server', 'browser-pod', 'operator', 'contracts', 'crds', 'tunnel', 'sdk', 'cli']
const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n').filter((f) => SOURCE_DIRS.includes(f.split('/')[0]))

const IMPORT = /^\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/gm
const graph = new Map<string, string[]>()
for (const f of files) {
  const text = readFileSync(join(ROOT, f), 'utf8')
  graph.set(f, [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(f), m[1]))))
}
const top = (f: string) => f.split('/')[0]

/** What each top-level folder may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  crds: [],
  contracts: ['crds'],
  tunnel: ['contracts'],
  sdk: ['contracts'],
  'browser-pod': ['contracts', 'crds', 'tunnel'],
  operator: ['contracts', 'crds'],
  // the api-server writes and watches resources through the operator's ResourceClient port
  // (its types, its typed errors and the Informer); it never runs an operator itself
  'api-server': ['contracts', 'crds', 'tunnel', 'operator/ports.ts', 'operator/errors.ts', 'operator/runtime/informer.ts'],
  cli: ['api-server', 'operator', 'contracts', 'crds', 'tunnel'],
}

t.test('imports point down only: each folder imports only the layers below it', async (t) => {
  const broken: string[] = []
  for (const [f, deps] of graph) {
    for (const d of deps) {
      if (top(d) === top(f)) continue
      const ok = ALLOWED[top(f)].some((a) => d === a || top(d) === a)
      if (!ok) broken.push(`${f} imports ${d}`)
    }
  }
  t.same(broken, [], 'no import breaks a layering rule')
})

t.test('no import cycle between source files', async (t) => {
  // Tarjan's strongly connected components over the file graph
  let index = 0
  const idx = new Map<string, number>(), low = new Map<string, number>(), onStack = new Set<string>(), stack: string[] = []
  const cycles: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index); low.set(v, index); index++
    stack.push(v); onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)) }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = []
      let w: string
      do { w = stack.pop()!; onStack.delete(w); comp.push(w) } while (w !== v)
      if (comp.length > 1) cycles.push(comp.sort())
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  t.same(cycles, [], 'no file reaches itself through its imports')
})

t.test('the rule catches a violation (the checker is not vacuous)', async (t) => {
  const sample = 'browser-pod/x.ts'
  const d = normalize(join(dirname(sample), '../api-server/app.ts'))
  t.notOk(ALLOWED[top(sample)].some((a) => d === a || top(d) === a), 'browser-pod importing the api-server would be refused')
  t.ok(graph.size > 100, `the source tree was read (${graph.size} files)`)
})
