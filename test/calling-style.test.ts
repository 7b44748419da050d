// One calling style (docs/CONVENTIONS.md): a domain service's method takes one request
// object, as a domain function does, so the org id is never a positional argument there.
// Read from the source with the compiler's parser; a method broken names its file and line.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const ROOT = new URL('../', import.meta.url).pathname
/** the domain services build() constructs, and the interfaces session start looks networks and auth-states up through */
const SERVICES: Array<{ file: string; name: string }> = [
  { file: 'api-server/webhooks/service.ts', name: 'Webhooks' },
  { file: 'api-server/networks/service.ts', name: 'LocalReach' },
  { file: 'api-server/recordings/service.ts', name: 'Recordings' },
  { file: 'api-server/sessions/directories.ts', name: 'NetworkDirectory' },
  { file: 'api-server/sessions/directories.ts', name: 'AuthStateDirectory' },
  { file: 'api-server/authstate/directory.ts', name: 'PgAuthStateDirectory' },
]

const isPublic = (m: ts.Node) =>
  !(ts.canHaveModifiers(m) && ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword)) &&
  !(ts.isMethodDeclaration(m) && ts.isPrivateIdentifier(m.name))

/** each public method of the named class or interface that takes the org id outside one request object */
function positionalOrgIds(file: string, name: string): { found: boolean; offenders: string[] } {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true)
  const offenders: string[] = []
  let found = false
  const check = (m: ts.Node) => {
    if (!(ts.isMethodDeclaration(m) || ts.isMethodSignature(m)) || !isPublic(m)) return
    const params = m.parameters
    const orgIdAlone = params.some((p) => ts.isIdentifier(p.name) && p.name.text === 'orgId')
    const requestAmongOthers = params.length > 1 && params.some((p) => ts.isObjectBindingPattern(p.name) && p.name.elements.some((e) => e.name.getText(source) === 'orgId'))
    if (orgIdAlone || requestAmongOthers) {
      const line = source.getLineAndCharacterOfPosition(m.getStart(source)).line + 1
      offenders.push(`${file}:${line} ${name}.${m.name.getText(source)}(${params.map((p) => p.name.getText(source)).join(', ')})`)
    }
  }
  ts.forEachChild(source, (node) => {
    if ((ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) && node.name?.text === name) {
      found = true
      for (const m of node.members) check(m)
    }
  })
  return { found, offenders }
}

t.test('[ISSUE-48] domain services take one request object: no method of Webhooks, LocalReach, Recordings or the session-start directories takes the org id positionally', async (t) => {
  for (const { file, name } of SERVICES) {
    const { found, offenders } = positionalOrgIds(file, name)
    t.ok(found, `${name} is declared in ${file}`)
    t.same(offenders, [], `${name}: the org id goes inside the request object`)
  }
})
