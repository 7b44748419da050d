// docs/ARCHITECTURE.md walks a contributor through adding a driving action: three files,
// a list or table in each, and the code to write. This holds the page to the code: the files
// and lists it names exist, and making its three changes (in memory) is exactly what a new
// action needs — with only the contract declared the pod's action table and the api-server's
// drive table do not compile, and with all three everything type-checks.
import t from 'tap'
import ts from 'typescript'
import { existsSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8')
const start = doc.indexOf('## Walk-through: adding a driving action')
const section = doc.slice(start, doc.indexOf('\n## ', start + 1))

interface Step { file: string; list: string; code: string }
/** Each numbered step: its file (in bold), the list it adds to ("add it to `x`"), its code block. */
const steps: Step[] = section.split(/^(?=\d\. \*\*`)/m).slice(1).map((text) => {
  const file = /^\d\. \*\*`([^`]+)`\*\*/.exec(text)?.[1] ?? ''
  const list = /add it to\s+`(\w+)`/.exec(text)?.[1] ?? ''
  const block = /^( *)```ts\n([\s\S]*?)^ *```/m.exec(text)
  const code = block ? block[2].split('\n').map((l) => l.slice(block[1].length)).join('\n') : ''
  return { file, list, code }
})

/** The top-level declaration `const <name> = …` in a source, and its array or object literal. */
function findList(src: ts.SourceFile, name: string): { statement: ts.Statement; literal: ts.ArrayLiteralExpression | ts.ObjectLiteralExpression } | undefined {
  for (const statement of src.statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name) || d.name.text !== name || !d.initializer) continue
      let e: ts.Expression = d.initializer
      while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression
      if (ts.isArrayLiteralExpression(e) || ts.isObjectLiteralExpression(e)) return { statement, literal: e }
    }
  }
  return undefined
}

const actionName = /name: '(\w+)'/.exec(steps[0]?.code ?? '')?.[1] ?? ''

/** A step done to its file's text: its declaration above the list, and its entry in the list. */
function apply(step: Step, text: string): string {
  const src = ts.createSourceFile(step.file, text, ts.ScriptTarget.Latest, true)
  const found = findList(src, step.list)
  if (!found) throw new Error(`${step.file} has no list ${step.list}`)
  const declared = /^export (?:async function|const) (\w+)/.exec(step.code)?.[1]
  // a declaration joins the list by its name (a table row: action name, then the function);
  // a code block that is not a declaration is the table row itself
  const entry = !declared ? step.code.trim().replace(/,$/, '') : ts.isArrayLiteralExpression(found.literal) ? declared : `${actionName}: ${declared}`
  const items = ts.isArrayLiteralExpression(found.literal) ? found.literal.elements : found.literal.properties
  const withEntry = text.slice(0, items.end) + (items.hasTrailingComma ? ` ${entry},` : `, ${entry}`) + text.slice(items.end)
  if (!declared) return withEntry
  const at = found.statement.getStart(src)
  return withEntry.slice(0, at) + step.code.trim() + '\n\n' + withEntry.slice(at)
}

const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!

/** Type-checks the walk-through's files and what they import, with some files' text replaced. */
function typeErrors(overlay: Map<string, string>, oldProgram?: ts.Program): { program: ts.Program; errors: Map<string, string[]> } {
  const host = ts.createCompilerHost(config.options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (file, lang, ...rest) => {
    const text = overlay.get(file)
    return text === undefined ? getSourceFile(file, lang, ...rest) : ts.createSourceFile(file, text, lang, true)
  }
  const readFile = host.readFile.bind(host)
  host.readFile = (file) => overlay.get(file) ?? readFile(file)
  const roots = [...steps.map((s) => s.file), 'browser-pod/actions/index.ts'].map((f) => join(ROOT, f))
  const program = ts.createProgram({ rootNames: roots, options: config.options, host, oldProgram })
  const errors = new Map<string, string[]>()
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file ? d.file.fileName.slice(ROOT.length) : '(no file)'
    if (file.includes('node_modules/')) continue
    errors.set(file, [...(errors.get(file) ?? []), ts.flattenDiagnosticMessageText(d.messageText, ' ')])
  }
  return { program, errors }
}

t.test('the walk-through names three files, a list in each, and code, and they exist', async (t) => {
  t.same(steps.map((s) => s.file), ['contracts/operations/drive.ts', 'browser-pod/actions/act.ts', 'api-server/operations/sessions/drive.ts'], 'three steps, three files')
  for (const s of steps) {
    t.ok(existsSync(join(ROOT, s.file)), `${s.file} exists`)
    t.ok(s.code.length > 0, `${s.file}: the step shows its code`)
    const src = ts.createSourceFile(s.file, readFileSync(join(ROOT, s.file), 'utf8'), ts.ScriptTarget.Latest, true)
    t.ok(findList(src, s.list), `${s.file} declares ${s.list || '(no list named)'}, the list the step adds to`)
  }
  t.equal(actionName, 'double_click', 'the contract names the action')
  // every other file the section names exists (a bare drive-<x>.ts name: somewhere in the tree)
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n')
  const named = [...section.matchAll(/`([\w./-]+\.ts)`/g)].map((m) => m[1])
  t.ok(named.length > 5, `the section names files (${named.length})`)
  const missing = named.filter((f) => (f.includes('/') ? !existsSync(join(ROOT, f)) : !tracked.some((p) => basename(p) === f)))
  t.same(missing, [], 'every file the section names exists')
})

t.test('its three changes are what a new action needs: without the last two it does not compile, with them it does', async (t) => {
  const read = (f: string) => readFileSync(join(ROOT, f), 'utf8')
  const overlay = new Map([[join(ROOT, steps[0].file), apply(steps[0], read(steps[0].file))]])
  const declared = typeErrors(overlay)
  t.notOk(declared.errors.has(steps[0].file), `step 1 alone is valid TypeScript (${declared.errors.get(steps[0].file)?.join('; ') ?? 'no errors'})`)
  for (const f of ['browser-pod/actions/index.ts', steps[2].file]) {
    const errs = declared.errors.get(f) ?? []
    t.ok(errs.some((e) => e.includes(actionName)), `with only the contract, ${f} does not compile: ${errs[0]?.slice(0, 200) ?? 'no error'}`)
  }
  for (const s of steps.slice(1)) overlay.set(join(ROOT, s.file), apply(s, read(s.file)))
  const done = typeErrors(overlay, declared.program)
  t.same([...done.errors].map(([f, e]) => `${f}: ${e.join('; ')}`), [], 'with all three, everything type-checks')
})
