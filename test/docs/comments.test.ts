// Comments say why, briefly (docs/CONVENTIONS.md): this reads every comment of the product
// code and the tests and fails naming each file header over HEADER_MAX lines, each comment
// block over BLOCK_MAX lines, and each issue number in a comment. Design reasoning belongs in
// docs/ with a link; an issue's id belongs in a test's name, where the checklist looks.
import t from 'tap'
import ts from 'typescript'
import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

const ROOT = new URL('../../', import.meta.url).pathname
// every tracked script, whatever its folder: a folder left off a list was a hole in the guard
const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n').filter((f) => /\.(ts|mts|cts|mjs|cjs|js)$/.test(f))
const FOLDERS = ['api-server', 'browser-pod', 'operator', 'contracts', 'crds', 'ports', 'watch', 'tunnel', 'cli', 'sdk', 'scripts',
  'devcluster', 'bin', 'docker', 'telemetry', 'bench', 'test']

const HEADER_MAX = 8
const BLOCK_MAX = 9
// a hash and a number, "issue" and a number, or a checklist id; not an HTML entity, and not
// a project-qualified reference (another project's issue, cited as the why of a workaround)
const ISSUE_REF = /(?<![\w&/])#\d+\b|\bissues?\s+#?\d+\b|\bISSUE-\d+\b/i

interface Block { line: number; lines: number; text: string; header: boolean }

/** Every comment of a file, consecutive own-line `//` comments joined into one block. */
function commentBlocks(text: string): Block[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text)
  const lineOf = (pos: number) => text.slice(0, pos).split('\n').length
  const blocks: Block[] = []
  let sawCode = false
  // a `/` after one of these divides; anywhere else it starts a regular expression
  const ENDS_EXPRESSION = new Set<ts.SyntaxKind>([ts.SyntaxKind.Identifier, ts.SyntaxKind.NumericLiteral, ts.SyntaxKind.StringLiteral,
    ts.SyntaxKind.CloseParenToken, ts.SyntaxKind.CloseBracketToken, ts.SyntaxKind.CloseBraceToken, ts.SyntaxKind.ThisKeyword,
    ts.SyntaxKind.NoSubstitutionTemplateLiteral, ts.SyntaxKind.TemplateTail, ts.SyntaxKind.RegularExpressionLiteral,
    ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken])
  let previous = ts.SyntaxKind.Unknown
  const templateDepths: number[] = []
  let braces = 0
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      const start = scanner.getTokenStart(), end = scanner.getTokenEnd()
      const own = /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', start - 1) + 1, start))
      const comment = text.slice(start, end), line = lineOf(start)
      const last = blocks.at(-1)
      const single = kind === ts.SyntaxKind.SingleLineCommentTrivia
      if (own && single && last && last.text.startsWith('//') && last.line + last.lines === line) {
        last.lines++
        last.text += '\n' + comment
      } else if (!comment.startsWith('#!')) {
        blocks.push({ line, lines: comment.split('\n').length, text: comment, header: !sawCode && own })
      }
      continue
    }
    if (kind === ts.SyntaxKind.NewLineTrivia || kind === ts.SyntaxKind.WhitespaceTrivia || kind === ts.SyntaxKind.ShebangTrivia) continue
    if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && !ENDS_EXPRESSION.has(previous)) {
      kind = scanner.reScanSlashToken()
    }
    if (kind === ts.SyntaxKind.TemplateHead) templateDepths.push(braces)
    else if (kind === ts.SyntaxKind.OpenBraceToken) braces++
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (templateDepths.at(-1) === braces) {
        kind = scanner.reScanTemplateToken(false)
        if (kind === ts.SyntaxKind.TemplateTail) templateDepths.pop()
      } else braces--
    }
    sawCode = true
    previous = kind
  }
  // a file's header is its first comment, before any code; headers count only at the top
  return blocks.map((b, i) => ({ ...b, header: b.header && i === 0 }))
}

const all = files.map((f) => ({ f, blocks: commentBlocks(readFileSync(join(ROOT, f), 'utf8')) }))

t.test('[ISSUE-36] the comment reader sees comments, not strings, regular expressions or templates', async (t) => {
  const text = [
    '#!/usr/bin/env node',
    '// header line one',
    '// header line two',
    "const url = 'http://example.com/#1' // trailing",
    'const re = /\\/\\/ not a comment #2/',
    'const tpl = `${a} // not a comment #3 ${b}`',
    'const half = x / 2 // divides',
    '/* one',
    '   two */',
    'function f() {',
    '  // before the brace',
    '}',
  ].join('\n')
  const blocks = commentBlocks(text)
  t.same(blocks.map((b) => [b.line, b.lines, b.header]), [[2, 2, true], [4, 1, false], [7, 1, false], [8, 2, false], [11, 1, false]])
  t.notOk(blocks.some((b) => ISSUE_REF.test(b.text)), 'no issue number found in a string, a regular expression or a template')
  t.ok(ISSUE_REF.test('// see issue 30') && ISSUE_REF.test('// (#14)') && ISSUE_REF.test('// [ISSUE-35] x'), 'the three spellings of an issue reference are found')
  t.notOk(ISSUE_REF.test("// &#39; and kubernetes#99804"), 'an HTML entity and another project\'s issue are not ours')
})

t.test('[ISSUE-36] no comment in product code or tests names an issue number', async (t) => {
  const found: string[] = []
  for (const { f, blocks } of all) {
    for (const b of blocks) {
      b.text.split('\n').forEach((l, i) => { if (ISSUE_REF.test(l)) found.push(`${f}:${b.line + i}: ${l.trim()}`) })
    }
  }
  t.same(found, [], 'an issue id goes in a test name; the comment says the why itself')
})

t.test(`[ISSUE-36] a file header is at most ${HEADER_MAX} lines: what the file is, and the why that matters`, async (t) => {
  const long = all.flatMap(({ f, blocks }) => blocks.filter((b) => b.header && b.lines > HEADER_MAX).map((b) => `${f}: ${b.lines} lines`))
  t.same(long, [], 'design reasoning moves into docs/, linked from the header')
})

t.test(`[ISSUE-36] no comment block is longer than ${BLOCK_MAX} lines`, async (t) => {
  const long = all.flatMap(({ f, blocks }) => blocks.filter((b) => b.lines > BLOCK_MAX).map((b) => `${f}:${b.line}: ${b.lines} lines`))
  t.same(long, [], 'a long explanation moves into docs/, with one or two lines of why left at the code')
  t.ok(all.length > 400, `${all.length} files read`)
})

t.test('[ISSUE-48] every folder with code is read, bench/ and telemetry/ included', async (t) => {
  const read = new Set(files.map((f) => f.split('/')[0]))
  t.same(FOLDERS.filter((d) => !read.has(d)), [], 'folders whose comments went unread')
  t.ok(files.includes('telemetry/tracing.ts') && files.includes('bench/run.ts'), 'bench/ and telemetry/ files are among those read')
})
