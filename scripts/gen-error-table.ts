// Writes docs/errors.md's error tables from the error catalogue (contracts/errors.ts),
// between <!-- errors:begin --> and <!-- errors:end -->. Run
// `node --import tsx scripts/gen-error-table.ts`; test/contracts/errors.test.ts fails when stale.
import { readFileSync, writeFileSync } from 'node:fs'
import { isEntryPoint } from '../contracts/entry-point.ts'
import { CATALOGUE, FAMILIES, SPEC_FIXED_REASONS, type Family, type Listed } from '../contracts/errors.ts'

export const BEGIN = '<!-- errors:begin -->'
export const END = '<!-- errors:end -->'
const README = new URL('../docs/errors.md', import.meta.url)

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')
const code = (s: string) => '`' + s.replace(/`/g, "'") + '`'

/** The message as docs/errors.md shows it: a builder called with <placeholders>. */
export function messageText(e: Listed): string {
  if (typeof e.message === 'string') return e.message
  return e.message(...(e.args ?? []).map((a) => `<${a}>`))
}

function reasonText(e: Listed): string {
  if (e.reason === null) return ''
  return (Array.isArray(e.reason) ? e.reason : [e.reason as string]).map(code).join(' / ')
}

function statusText(e: Listed): string {
  const retry = e.retryAfter === undefined ? '' : e.retryAfter === 'arg' ? ' + Retry-After' : ` + Retry-After: ${e.retryAfter}`
  return `${e.status}${retry}`
}

function table(family: Family, rows: Listed[]): string[] {
  const withCode = family !== 'page' && family !== 'upgrade'
  const head = ['status', ...(withCode ? ['code'] : []), ...(family === 'api' ? ['reason'] : []), 'message', 'when', 'spec', `\`${FAMILIES[family].builder}.\``]
  const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`]
  for (const e of rows) {
    const details = 'details' in e && e.details ? ` (+ \`${e.details}\`)` : ''
    const cols = [
      statusText(e),
      ...(withCode ? [code(String(e.code))] : []),
      ...(family === 'api' ? [reasonText(e) + details] : []),
      code(messageText(e)),
      e.when,
      e.spec ? e.spec.join(', ') : '',
      e.key,
    ]
    out.push(`| ${cols.map(cell).join(' | ')} |`)
  }
  return out
}

/** The generated section (without the markers). */
export function renderErrorTable(): string {
  const lines: string[] = [
    '# Errors',
    '',
    'Generated from the error catalogue (`contracts/errors.ts`) by `scripts/gen-error-table.ts`; do not edit by hand.',
    'Every error the service returns is declared there once — status, code, reason, a value-free message — and',
    'source builds it only through the catalogue (`errors.<key>(…)`, `oauthErrors.<key>(…)`, …); a test fails on',
    'an entry nothing uses, and the linter on an error built any other way. The spec column names the checklist rows it serves.',
    '',
    '**The rule.** A service error\'s `code` names its HTTP status in snake_case (`bad_request`, `unauthorized`,',
    '`forbidden`, `not_found`, `method_not_allowed`, `conflict`, `payload_too_large`, `unsupported_media_type`,',
    '`rate_limited`, `internal`, `unavailable`), except the spec\'s `E_REACHABILITY_DENIED` (403) and `E_UPSTREAM`',
    '(something upstream of the service — the browser pod, the page, the pod start — failed, 502, or timed out,',
    '504: a 502 or 504 is always `E_UPSTREAM`). `reason` is snake_case, except the spellings the spec fixes:',
    `${SPEC_FIXED_REASONS.map(code).join(', ')}. Kubernetes condition reasons (\`PodFailed\`, \`StartTimeout\`, …)`,
    'are never an error\'s reason: a failed session shows them in its `failureReason` field. OAuth endpoints keep',
    'RFC 6749 codes and bodies. Messages never carry a secret value.',
  ]
  for (const family of Object.keys(FAMILIES) as Family[]) {
    const rows = CATALOGUE.filter((e) => e.family === family)
    lines.push('', `## ${FAMILIES[family].title}`, '', `On the wire: ${FAMILIES[family].wire}.`)
    const sections = [...new Set(rows.map((e) => e.section))]
    for (const s of sections) {
      if (sections.length > 1) lines.push('', `### ${s[0].toUpperCase()}${s.slice(1)}`)
      lines.push('', ...table(family, rows.filter((e) => e.section === s)))
    }
  }
  return lines.join('\n')
}

/** docs/errors.md's text with the section between the markers replaced. */
export function withErrorTable(readme: string): string {
  const b = readme.indexOf(BEGIN)
  const e = readme.indexOf(END)
  if (b < 0 || e < b) throw new Error(`docs/errors.md has no ${BEGIN} … ${END} markers`)
  return readme.slice(0, b + BEGIN.length) + '\n' + renderErrorTable() + '\n' + readme.slice(e)
}

export function readReadme(): string {
  return readFileSync(README, 'utf8')
}

if (isEntryPoint(import.meta.url)) {
  writeFileSync(README, withErrorTable(readReadme()))
}
