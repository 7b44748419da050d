// A subtest the parent does not await runs beside the parent's own later work: tap starts
// it at once and the parent goes on. When that later work awaits something (ends a
// session, deletes a row), the subtest's checks race it, and lose under load. This has
// caused two CI failures (an identity delete beside a session end, a recording read
// beside the session's DELETE). Read from the syntax tree of every test and bench file.
import t from 'tap'
import ts from 'typescript'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

const ROOT = new URL('../', import.meta.url).pathname

const isSubtest = (e: ts.Expression): boolean =>
  ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && e.expression.name.text === 'test'
const isSubtestStatement = (s: ts.Statement): boolean =>
  ts.isExpressionStatement(s) && (isSubtest(s.expression) || (ts.isAwaitExpression(s.expression) && isSubtest(s.expression.expression)))

/** Whether a statement awaits, not counting functions it merely defines. */
const awaits = (node: ts.Node): boolean => {
  if (ts.isFunctionLike(node)) return false
  if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)) return true
  return ts.forEachChild(node, awaits) ?? false
}

/** `file:line` of each un-awaited subtest followed, in the same block, by parent work that awaits. */
export function racingSubtests (fileName: string, text: string): string[] {
  const src = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isBlock(node) || ts.isSourceFile(node)) {
      node.statements.forEach((s, i) => {
        if (!ts.isExpressionStatement(s) || !isSubtest(s.expression)) return
        const later = node.statements.slice(i + 1).find((n) => !isSubtestStatement(n) && awaits(n))
        if (later) found.push(`${fileName}:${src.getLineAndCharacterOfPosition(s.getStart()).line + 1}`)
      })
    }
    ts.forEachChild(node, visit)
  }
  visit(src)
  return found
}

t.test('the check finds a subtest racing its parent, and passes the safe forms', async (t) => {
  const racing = `t.test('p', async (t) => {\n  t.test('reads', async () => { await read() })\n  await end()\n})`
  t.same(racingSubtests('x.ts', racing), ['x.ts:2'], 'un-awaited subtest, then an awaited call: found')
  const awaited = `t.test('p', async (t) => {\n  await t.test('reads', async () => { await read() })\n  await end()\n})`
  t.same(racingSubtests('x.ts', awaited), [], 'the subtest awaited: fine')
  const onlySubtests = `t.test('p', async (t) => {\n  t.test('a', async () => { await a() })\n  t.test('b', async () => { await b() })\n  t.teardown(() => end())\n})`
  t.same(racingSubtests('x.ts', onlySubtests), [], 'subtests queue behind each other; a teardown runs after them')
})

t.test('no test file runs a subtest beside its parent’s later awaited work', async (t) => {
  const files = execFileSync('git', ['ls-files', 'test/*.ts', 'bench/*.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
  t.ok(files.length > 50, 'the test files were found')
  const found = files.flatMap((f) => racingSubtests(f, readFileSync(join(ROOT, f), 'utf8')))
  t.same(found, [], 'await these subtests (or move the later work into a subtest of its own)')
})
