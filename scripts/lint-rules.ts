// The project's own lint rules (eslint.config.mjs loads them as the `nightjar` plugin):
// habits a reviewer used to check by hand, or a test used to check by reading the sources.
import type { Rule, SourceCode } from 'eslint'
import type { Node as EsNode, CallExpression } from 'estree'

const isFunction = (n: EsNode) =>
  n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression'

/** The child nodes of a node, by the parser's visitor keys. */
function children(code: SourceCode, node: EsNode): EsNode[] {
  const out: EsNode[] = []
  for (const key of code.visitorKeys[node.type] ?? []) {
    const v = (node as unknown as Record<string, unknown>)[key]
    for (const c of Array.isArray(v) ? v : [v]) if (c && typeof (c as EsNode).type === 'string') out.push(c as EsNode)
  }
  return out
}

/** Whether a statement awaits, not counting the functions it merely defines. */
function awaits(code: SourceCode, node: EsNode): boolean {
  if (isFunction(node)) return false
  if (node.type === 'AwaitExpression' || (node.type === 'ForOfStatement' && node.await)) return true
  return children(code, node).some((c) => awaits(code, c))
}

const isSubtest = (e: EsNode): e is CallExpression =>
  e.type === 'CallExpression' && e.callee.type === 'MemberExpression' && !e.callee.computed &&
  e.callee.property.type === 'Identifier' && e.callee.property.name === 'test'
const isSubtestStatement = (s: EsNode) =>
  s.type === 'ExpressionStatement' && (isSubtest(s.expression) || (s.expression.type === 'AwaitExpression' && isSubtest(s.expression.argument)))

/**
 * A tap subtest the parent does not await runs beside the parent's later work: tap starts it
 * at once and the parent goes on. When that later work awaits something (ends a session,
 * deletes a row), the subtest's checks race it and lose under load. Un-awaited subtests
 * followed only by other subtests (or a teardown) are fine: subtests queue behind each other.
 */
const subtestBeforeAwaitedWork: Rule.RuleModule = {
  meta: {
    type: 'problem',
    docs: { description: 'an un-awaited tap subtest must not be followed, in the same block, by parent work that awaits' },
    messages: { racing: 'this subtest runs beside the awaited work after it: await it (or move that work into a subtest of its own)' },
    schema: [],
  },
  create(context) {
    const check = (statements: EsNode[]) => {
      statements.forEach((s, i) => {
        if (s.type !== 'ExpressionStatement' || !isSubtest(s.expression)) return
        const later = statements.slice(i + 1).find((n) => !isSubtestStatement(n) && awaits(context.sourceCode, n))
        if (later) context.report({ node: s, messageId: 'racing' })
      })
    }
    return {
      Program: (node) => check(node.body),
      BlockStatement: (node) => check(node.body),
    }
  },
}

/** The statement (or class member) a node belongs to. */
function enclosingStatement(node: Rule.Node): Rule.Node {
  let n = node
  while (n.parent && !/Statement$|Declaration$|^PropertyDefinition$/.test(n.type)) n = n.parent
  return n
}

/**
 * A catch that does nothing (`.catch(() => {})`, `catch {}`) says why losing the error is
 * right, in a comment inside it, on its line or just above its statement: otherwise the next
 * reader cannot tell a best effort from a forgotten error. A catch that turns the error into
 * an answer (`.catch(() => null)`, `catch { return false }`) is not silent.
 */
const silentCatchSaysWhy: Rule.RuleModule = {
  meta: {
    type: 'suggestion',
    docs: { description: 'a catch that does nothing has a comment saying why' },
    messages: { why: 'this catch drops its error: say why that is right in a comment (inside it, on this line or just above)' },
    schema: [],
  },
  create(context) {
    const code = context.sourceCode
    const explained = (at: Rule.Node, handler: EsNode) => {
      if (code.getCommentsInside(handler).length) return true
      const stmt = enclosingStatement(at)
      if (code.getCommentsBefore(stmt).length) return true
      const lines = new Set([at.loc!.start.line - 1, at.loc!.end.line, stmt.loc!.end.line])
      return code.getAllComments().some((c) => lines.has(c.loc!.start.line) || lines.has(c.loc!.end.line))
    }
    return {
      CallExpression(node) {
        if (node.callee.type !== 'MemberExpression' || node.callee.property.type !== 'Identifier' || node.callee.property.name !== 'catch') return
        const handler = node.arguments[0]
        if (!handler || !(handler.type === 'ArrowFunctionExpression' || handler.type === 'FunctionExpression')) return
        const empty = handler.body.type === 'BlockStatement' && handler.body.body.length === 0
        if (empty && !explained(node, handler)) context.report({ node: node.callee.property, messageId: 'why' })
      },
      CatchClause(node) {
        if (node.body.body.length === 0 && !explained(node, node.body)) context.report({ node, messageId: 'why' })
      },
    }
  },
}

/** An error status literal: 400–599. */
const ERROR_STATUS = '[value>=400][value<600]'

/**
 * Errors built around the catalogue, as `no-restricted-syntax` entries: every error the service
 * returns is declared once in contracts/errors/ and built with errors.<key>(…),
 * oauthErrors.<key>(…), … (docs/errors.md). A false alarm is disabled on its line, with the reason.
 */
export const AROUND_THE_CATALOGUE = ([
  ['NewExpression[callee.name=/^(ApiError|NodeError|OAuthError)$/]', 'constructs an error class directly'],
  ['CallExpression[callee.type="Identifier"][callee.name=/^(badRequest|forbidden|conflict|notFound|unauthorized|internal|missingScope)$/]', 'calls a pre-catalogue helper'],
  ['Property[key.name="error"] > ObjectExpression.value > Property[key.name="code"]', 'writes a service error body by hand'],
  ['ObjectExpression:has(> Property[key.name="error"][value.type="Literal"]):has(> Property[key.name="error_description"])', 'writes an OAuth error body by hand'],
  [`CallExpression[callee.property.name=/^(code|status|writeHead|sendPage|send)$/] > Literal.arguments${ERROR_STATUS}`, 'answers a literal error status'],
  [`CallExpression[callee.name=/^(writeHead|sendPage|send)$/] > Literal.arguments${ERROR_STATUS}`, 'answers a literal error status'],
  ['Literal[value=/HTTP\\/1\\.1 [45]\\d\\d/], TemplateElement[value.raw=/HTTP\\/1\\.1 [45]\\d\\d/]', 'writes a raw HTTP error response'],
  [`Property[key.name="status"] > Literal.value${ERROR_STATUS}`, 'gives an error status literally'],
  [`ClassDeclaration[superClass.name=/^(ApiError|NodeError)$/] CallExpression[callee.type="Super"] > Literal.arguments${ERROR_STATUS}`, 'passes a literal status to an error superclass'],
] as const).map(([selector, what]) => ({ selector, message: `${what}: build the error from the catalogue (errors.<key>(…), docs/errors.md)` }))

export const nightjarRules = {
  meta: { name: 'nightjar' },
  rules: {
    'subtest-before-awaited-work': subtestBeforeAwaitedWork,
    'silent-catch-says-why': silentCatchSaysWhy,
  },
}
